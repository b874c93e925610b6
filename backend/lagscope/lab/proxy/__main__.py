"""``python -m lagscope.lab.proxy``: the proxy as a process of its own, steered over a unix
socket, so a lab outlives the process that started it."""

from __future__ import annotations

from lagscope.lab.proxy import main

main()
