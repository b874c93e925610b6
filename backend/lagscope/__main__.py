"""``python -m lagscope`` = the ``lagscope`` command."""

from lagscope.cli import main

main()
