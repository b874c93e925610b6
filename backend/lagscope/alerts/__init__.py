"""Alerts (docs/alerts.md): the pure core and the use-cases over it.

The pure core does no I/O: the rule state machine (``state``), payload formats (``payloads``), the
delivery policy (``delivery_policy``) and signing (``signing``); tests/unit/repo/test_layering.py
keeps it free of the store and of every context. Over it: what a rule looks at (``readings``), the
facts a notification carries (``context``), ``evaluation`` after each tick, ``preview``, the API
process's ``watchdog``, ``delivery`` (with ``webhook_transport``), and the rules, targets, silences
and activity as the API edits and lists them.
"""
