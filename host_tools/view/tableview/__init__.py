"""Watch the virtual table play whole hands with the real firmware (the `make run` demo).

    python -m host_tools.view.tableview [--seed N] [--speed X] [--cycles N]
                                   [--fault NAME[:ARG]]... [--fix-after S] [--plain]
                                   [--lang en|zh]

The firmware runs under the MicroPython unix port on the virtual table
(host_tools/sim), in real time `--speed` times faster than the wall clock
(5x by default: a 32 s build shows in about 6 s). Virtual players
(hand_players.Parlour, seeded from `--seed`) sit at the table and play
every hand on the walls in play; the firmware follows it from the RFID
reads, sends `hand` events, and a `result` when a seat holds its key to win
or nothing is left to draw, then goes on to the next set by itself. This
tool is the host on the link (docs/protocol.md): it starts the table, shows
what happens and sends the technician, until Ctrl-C or `--cycles` cycles
(walls built, lifted, dice shown). With two tile sets the next set is built
during the hand and lifts at its result.

`--fault` injects a virtual table fault (host_tools/sim/faults.py) at
power-on. When the controller reports a fault the view shows its code,
name, cause and fix (firmware/faults.py); `--fix-after` virtual seconds
later a technician repairs the table (VirtualTable.clear_fault; after an
audit fault that tips the lanes into the tray) and the view sends `clear`,
so the demo goes on.

On a terminal: a rich Live view of the machine (lanes, plate, lifters), the
display board as the players see it, the seat keys, the hand in play (the
walls in play stack by stack, the gold, the counts, the phase, the last hand
events and result), the controller's state, faults and the last link
events, redrawn about 10 times a second. With --plain, or when stdout is not
a terminal: one plain line per link event, `hand`, `irregular` and `result`
included (`<virtual s>  <event>  <fields>`), host actions as
`<virtual s>  > <action>`, remarks as `# ...` (a cycle's figures, a hand's
result). Ctrl-C stops cleanly (the firmware is stopped, exit 0).

`--lang zh` (or a zh_* locale) shows every label, state, remark and
fault text in Simplified Chinese (host_tools/texts/); the event lines keep
the link's own names and fields.

Data and drawing are apart: `snapshot(table, view)` reads the VirtualTable
and the link-derived `ViewState` into a plain dict, `render(snap, width)`
turns a snapshot into a rich renderable.
"""

from host_tools.view.tableview.demo import Demo, ViewState  # noqa: F401
from host_tools.texts.events import plain_lines  # noqa: F401
from host_tools.view.tableview.snapshot import snapshot  # noqa: F401
from host_tools.view.tableview.render import render  # noqa: F401
from host_tools.view.tableview.cli import main  # noqa: F401
