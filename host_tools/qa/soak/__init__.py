"""`make soak`: hand after hand on the virtual table, with faults.

    python -m host_tools.qa.soak [--hands N] [--seed S] [--tables T] [--fault-rate R]
                              [--pace brisk|parlour] [--fuzz-frames N]
                              [--live-burst N] [--json]

One virtual table, the real firmware under MicroPython, players for every
set of walls (`Parlour`), playing at the soak's brisk pace (`BriskPlayers`,
players.py; `--pace parlour` for the pace of `make run`). At each new set of walls, with probability R, a
fault is injected at a random moment of the next minute of play (while the
next set is built during a hand, or a hand is followed); when the firmware
reports it, the technician repairs the table and clears the fault. Every
hand the controller followed is compared, event by event, with the rules'
replay of what the players did.

It passes when: no firmware exception (no `firmware_error`, no traceback),
no stuck state (an event at least every `STUCK_S` and a hand's result at
least every `HAND_S` of wall time), no hand
that differs from its replay, and the controller's counters equal the
virtual table's own counts (tiles fed per lane, sets lifted, hands).

The link is fuzzed too (host_tools/qa/linkfuzz/): after
every hand's result, `--live-burst` mutated, truncated, oversized and
random frames go down the live link in one write, then a `status` that
must be answered, while the table builds and plays on (no restart, no
traceback, garbage counted in status.link); and `--fuzz-frames` frames
(1,000,000 by default) are fed in process to the controller's own link
server, frame reader and request decoder. Both counts are in the summary
(`link_fuzz`).

`--tables T` plays the hands on T independent tables at once, each in its
own process (seeds S, S+1, ...; the hands shared out, the first tables
taking one more when they do not divide), every table checked in full as
above; the summary gives each table's figures and their totals, and it
passes only when every table does. The in-process fuzz runs once, beside
them.
Prints a summary (or JSON); exit 0 when it passes, 1 when not.

    players.py     BriskPlayers, the soak's pace, and PACES
    injector.py    Injector: the faults injected and repaired (KINDS)
    hand_check.py  each hand against its replay
    one_table.py   soak(): one table, checked in full
    tables.py      soak_tables(): T tables, one process each, and their totals
    cli.py         the command line
"""

from host_tools.qa.soak.cli import main
from host_tools.qa.soak.injector import KINDS, Injector
from host_tools.qa.soak.one_table import HAND_S, STUCK_S, soak
from host_tools.qa.soak.players import PACES, BriskPlayers
from host_tools.qa.soak.tables import soak_tables, sum_tables

__all__ = ["HAND_S", "KINDS", "PACES", "STUCK_S", "BriskPlayers", "Injector", "main", "soak",
           "soak_tables", "sum_tables"]
