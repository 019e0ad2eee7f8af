"""`make powercuts`: the power cut at random instants of cycles and hands.

    python -m host_tools.qa.powercuts [--cuts N] [--seed S] [--json]

One virtual table, the real firmware under MicroPython, players for every
set of walls (`Parlour`). The power is cut (the virtual table's
`power_cut`: every output off, the firmware's process killed wherever it
is, the power back 500 ms later) at a random virtual instant: most cuts
come 0.2..400 s of virtual time after a `start` (CUT_AFTER_MS: they fall in
the build, the lift, the dealer's wait, the dice, the first hand with the
next set built during it, and later hands), a few while the table is idle and a few while it stands in the
`power_lost` fault of the cut before, before anyone cleared it. After each
reboot it checks:

* **nothing persisted is corrupt**: `counters.json` in the flash store
  loads (its CRC) and has the shape the firmware takes (persist.load and
  the checks TableController.boot makes); `config.json` still validates
  (firmware.config.load), `tags.txt` still parses (firmware.tags.load) and
  both are byte for byte what the table was given; `service.key` is the
  key; `counters` answers with no `lost` and no failed save (`unsaved`);
* **nothing moves before a command**: from the firmware's boot (its HELLO
  on the bus) until the first command, one virtual second at least, the
  virtual table's log shows no output turned on (motors, lifters; the
  buzzer only to answer a player's key press, a command too); the table's
  time runs on while the host asks, so what moves once the players end a
  resumed hand (`result`) or roll the dice again (`dice`) after the boot
  is theirs, not counted;
* **what was lost is reported coherently**: the boot reports `power_lost`
  exactly when the table was not idle at the cut (the cycle marker), and
  then the fault log's newest entry is that `power_lost`; the counters
  never go back, and equal what the host saw before the cut: hands = the
  `result` events, cycles = the `dice` events (not the gold's), lifts = the
  `lifting` states, power_lost in the fault counts = the `power_lost`
  events: the hand in play is lost, nothing the host was told of is. An
  event the table sent after its `counters` answer (a resumed hand going
  on) is taken off the link with those before it: the counters are asked
  again (a count lost at the cut stays behind in every answer).

After a `power_lost` `mid_lift` or `mid_build` (a lift or a build the
power cut, docs/reliability.md, A cut while building or lifting) the
technician empties only the lanes it names and clears: the cycle goes on
(`cycles_resumed`), and the first hand on the walls it makes is checked
against its replay from its first state (`replay_after_clear`). After any
other, the technician tips the lanes into the tray (docs/faults.md) and,
the hand being lost, the parlour puts the table in order: one whole set in
the tray, the other on the table top (VirtualTable.technician_sorts_the_sets;
tipping the lanes alone deadlocks the model after a cut in the middle of a
lift); the fault is cleared and the table started again. Every tile is
counted at each repair (`tiles`: none may be lost). Prints a summary (or JSON) with the
cuts by the firmware's state at the cut; exit 0 when every check passed.

Virtual-time cuts land between two of the firmware's ticks (its process is
killed while it waits for the table's NOW), so they never tear a write in
the middle. With `--wall-share P`, that share of the cuts in play comes at
a wall-clock instant instead (SimTable.power_cut_now kills the process
wherever it is: in a tick, in a save, writing an event), 0..3 s after the
start; a `.new` file left by a torn save is counted (`new_file_left`), and
a count saved but not yet told (or told but not yet saved) is in flight:
one off the host's at most, counted (`in_flight`), never more.

    cutter.py       Cutter: the cut at its virtual instant, the lanes tipped
    summary.py      the summary's figures and the progress line
    follower.py     LinkFollower: the events the host saw, a resumed hand
                    against its replay
    store_check.py  nothing persisted corrupt
    boot_checks.py  BootChecker: every check of a boot
    run.py          Run and powercuts(): where each cut falls, the
                    technician's repair, the summary
    cli.py          the command line
"""

from host_tools.qa.powercuts.boot_checks import BootChecker
from host_tools.qa.powercuts.cli import main
from host_tools.qa.powercuts.cutter import Cutter
from host_tools.qa.powercuts.follower import Failure, LinkFollower
from host_tools.qa.powercuts.run import Run, powercuts

__all__ = ["BootChecker", "Cutter", "Failure", "LinkFollower", "Run", "main", "powercuts"]
