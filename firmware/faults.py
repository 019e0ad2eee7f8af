"""Every fault the controller can raise: code, name, cause, fix.

The one table of faults. The link reports the code, the name and the detail
(which lane, which tile); the host shows cause and fix from here, and
docs/faults.md is checked against it by a test. A fault stops every motor.

The table is one string constant, parsed when asked (the controller needs
only `name_of`; the host's readers of the table, cause and fix included,
are host_tools/texts/faults.py): on a board a string
stays in flash (frozen) while a dict of tuples would take heap, and the
controller only ever needs a name, when a fault happens. A block is
"code name", the cause, the fix, then a blank line. A private constant:
no global, no interned name on the controller; the host reads it from
this file's source (CPython).

The codes by name are below it, the only place a fault's number is written
(firmware/tests/test_cpy_fault_numbers.py checks the rest of the tree). The
firmware takes each as a private name, `from firmware.faults import
LANE_JAM as _LANE_JAM`: the image's build turns that line into
`_LANE_JAM = const(10)` (firmware/image/inline_faults.py; `make mpy`
does the same), so the code is compiled into the importer, with no global
there or here, and no heap. The .py sources run the import itself. The
host imports them as they are.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

_TABLE = const("""10 lane_jam
A lane stopped counting tiles while the plate was turning: a tile is stuck in the lane's chute or the lane motor does not turn.
Open the lane cover named in the detail, clear the chute, check the lane motor turns by hand; then clear the fault.

11 plate_stall
The shuffle plate gave no rotation pulse within its deadline (two revolutions: configured, or learned and a margin): the plate is blocked or its motor or belt failed.
Remove what blocks the plate, check the belt and motor fuse, check the rotation sensor's magnet; then clear the fault.

12 lift_stuck
A wall lifter did not reach its limit switch in time (its configured deadline; once its times are learned, its learned time and a margin).
Look under the side named in the detail for a tile or object under the lifter; check the lifter motor and the limit switch; clear.

13 sensor_stuck
A sensor reads a value that the motion cannot produce: a limit switch closed at both ends, a count sensor that never releases, a count sensor that stayed silent while its lane's wall grew (the RFID reader counted more tiles than the sensor), or a lifter's top switch that did not close at the end of a normal rise (the rise was ended by its learned time and counts as done: the detail says so).
Check the named sensor's wiring and clean its optics; clear the fault.

14 build_timeout
Building the walls took longer than the build deadline.
Check every lane for slow feeding and the plate for slipping; clear.

20 missing_tile
The RFID audit found fewer copies of a tile than the ruleset has: a tile is lost, or the lane named in the detail jammed just before the others filled and its tiles are still on the plate.
Find the tile named in the detail (under the table, in a pocket), tip the lanes into the tray with it, clear the fault: the walls are built again.

21 extra_tile
The RFID audit found more copies of a tile than the ruleset has: a tile from another set is mixed in.
Empty the lanes into the tray, take out one tile of the kind named in the detail, clear the fault: the walls are built again.

22 unknown_tag
The RFID reader saw a tag that is not in the tag table.
Take out the tile at the slot in the detail (replace it, or teach its tag with `mjctl rfid learn`), tip the lanes into the tray, clear the fault: the walls are built again.

23 rfid_timeout
The RFID reader did not answer in time.
Check the reader's cable and power; clear the fault.

24 rfid_crc
The RFID reader's answer failed its checksum.
Check the reader cable for damage or interference (motor wires close by); clear the fault. Repeated: replace the cable.

30 display_unplugged
The display board did not acknowledge a frame.
Check the display cable and its power; clear the fault.

40 config_invalid
The configuration file is missing or wrong; the table does not move.
Read the detail, correct config.json (`mjctl config validate`).

42 firmware_corrupt
A firmware file differs from what `make deploy` installed, is missing, or is not in the manifest (a flash fault, an interrupted copy, a file edited by hand); the table does not move.
Deploy again (`make deploy PORT=...`): it copies what differs and writes a new manifest. If it comes back after a deploy, the flash is failing: replace the board.

41 power_lost
Restarted in a hand it could not bring back, or in a lift or a build a clear resumes (the reason says which); motion stopped where it was.
Do what the reason's fix says (mjctl shows it); else tip the lanes into the tray, the hand is finished by hand, clear and start.

43 output_timeout
An output stayed on past its limit (the build's deadline for the plate and the lanes, the move's for a lifter, plus a margin): the controller failed to turn it off, a firmware bug, and the HAL's guard turned it off itself (the detail names the pin).
Note the pin, the firmware version and `mjctl log`, report it; clear the fault to go on, and watch that motor with `mjctl live`.

50 firmware_error
The controller's program hit a bug (the detail names it); every motor was stopped.
Note the detail and the firmware version (`mjctl status`), report it; clear the fault to go on, or restart the table.
""")


LANE_JAM = const(10)
PLATE_STALL = const(11)
LIFT_STUCK = const(12)
SENSOR_STUCK = const(13)
BUILD_TIMEOUT = const(14)
MISSING_TILE = const(20)
EXTRA_TILE = const(21)
UNKNOWN_TAG = const(22)
RFID_TIMEOUT = const(23)
RFID_CRC = const(24)
DISPLAY_UNPLUGGED = const(30)
CONFIG_INVALID = const(40)
POWER_LOST = const(41)
FIRMWARE_CORRUPT = const(42)
OUTPUT_TIMEOUT = const(43)
FIRMWARE_ERROR = const(50)
# The audit's faults: their details may name tiles, of walls not in play
# (the link's guard); their repair tips the lanes into the tray, so the
# set is built again from the start (the controller's clear).
AUDIT_FAULTS = const((20, 21, 22))     # MISSING_TILE, EXTRA_TILE, UNKNOWN_TAG


def _block_at(code):
    """Index in _TABLE of the block of `code`, or -1. Found with find() so
    that naming a fault allocates next to nothing (a fault may come when the
    heap is at its fullest)."""
    key = "%d " % code
    i = _TABLE.find(key)
    while i > 0 and not _TABLE.startswith("\n\n", i - 2):   # not _TABLE[i - 1]: a name (json_bytes.utf8)
        i = _TABLE.find(key, i + 1)
    return i


def name_of(code, part=0):
    """The fault's name; with `part` 1 its cause, 2 its fix, in English
    (the telemetry's fault message; the host has both languages,
    host_tools/texts). One function, not three: each global of this
    resident module costs the heap. Each line of the table ends with a
    newline, the last one too."""
    i = _block_at(code)
    if i < 0:
        return "unknown"
    i = _TABLE.find(" ", i)
    while part:
        i = _TABLE.find("\n", i + 1)
        part -= 1
    return _TABLE[i + 1:_TABLE.find("\n", i + 1)]
