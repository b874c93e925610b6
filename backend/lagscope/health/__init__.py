"""Lagscope's own health: its processes report themselves, and one judgement of every part."""
