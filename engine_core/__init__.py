"""Fuzhou mahjong rules core: pure Python for CPython and MicroPython.

Modules, bottom up: tiles (codes), rulesets (data), dice (the break, fair
choices), wall (the geometry, slots <-> draw order; what left the wall,
the event-by-event API), hand (the rules of one hand), dealer (across hands),
replay (the conformance tool of docs/rules.md §13).
"""
