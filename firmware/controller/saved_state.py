"""What of the controller survives a power cut, to and from the flash
(persist.py: whole, atomic, with its CRC): the counters, the fault log and
the dealer (counters.json), and, sealed with the table's key because they
name the hidden tiles (firmware/sealed.py), the hand's record (hand.rec,
made by firmware/controller/hand_record.py) and the walls lifted
(walls.rec).

    restore   at boot: the counters, the motions' learned times and the
              dealer as last saved; a damaged file or one of another
              firmware's shape starts them from zero and says so (`lost`)
    save      the counters with the dealer, and a new fault at the log's end
    logged    the fault log as saved, newest first
    record    the hand's record, from what the follower noted in the tick
    erase_hand  the hand's record and the walls lifted erased: the hand ended
    write     what the tick noted (`ctl.unwritten`, W_*), between ticks

`save` at a lift (the controller in `lifting`, no fault) also writes the
walls lifted, tile id by slot as the builder's audit found them
(walls.rec): a boot after a cut before the dice (resume.py) reads the walls
at the top and takes them only if they are these, slot for slot.

A table without a key keeps neither: a hand the power cuts there cannot
come back (resume.py says so), and no tile lies in its flash.

What these read and set is the controller's own state, every field of it
set at boot in TableController.__init__.

"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import json
import os

from firmware import persist
from firmware.controller import hand_record
from firmware.controller.follower import REC_NOTED
from firmware.controller.states import CYCLE_FLAG, HAND_FLAG, LIFTING
from firmware.drivers import motion
from engine_core.tiles import is_int

COUNTERS_FILE = "counters.json"       # counters, fault log, dealer
RECORD_FILE = "hand.rec"              # the hand in play's record, sealed (hand_record.py, record_check.py)
WALLS_FILE = "walls.rec"              # the walls lifted, as audited, sealed (resume.py reads them)
_FAULT_LOG = const(16)                # faults kept for `mjctl faults`

# What awaits writing (`ctl.unwritten`, noted in the tick, written by
# `write`); the hand's record is the follower's note,
# follower.rec[REC_NOTED] (1).
W_RECORD = const(1)
W_COUNTERS = const(2)
W_HAND_ON = const(4)                  # the flag `hand` set
W_HAND_OFF = const(8)                 # ... cleared
W_MARK_OFF = const(16)                # the flag `cycle` cleared
W_ENDED = const(32)                   # the hand's record and walls erased


def write(ctl, more=0):
    """Write what the tick noted (`ctl.unwritten`, the follower's note of
    the hand's record, and `more`): the flags, the hand's record (or its
    erasure, the hand ended), the counters with the dealer. Between
    ticks, never in one: a flash write takes milliseconds (a block erased
    on the board); in the step it would delay that tick's outputs and
    reads, here it only shortens the sleep before the next tick (or
    overruns it, counted). Never raises: a failed write is counted in
    `ctl.unsaved`."""
    rec = ctl.follower.rec
    w = ctl.unwritten | rec[REC_NOTED] | more
    if not w:
        return
    ctl.unwritten = 0
    rec[REC_NOTED] = 0
    try:
        if w & (W_HAND_ON | W_HAND_OFF):
            ctl.hal.set_flag(HAND_FLAG, (w & W_HAND_ON) != 0)
        if w & W_MARK_OFF:
            ctl.hal.set_flag(CYCLE_FLAG, False)
        if w & W_ENDED:
            erase_hand(ctl)               # before a next lift's walls (save)
        if w & W_RECORD:
            record(ctl)
    except Exception:
        ctl.unsaved += 1
    if w & W_COUNTERS:
        try:
            save(ctl)
        except Exception:
            ctl.unsaved += 1


def restore(ctl):
    """The counters and the fault log as last saved, into `ctl`; a damaged
    file starts them from zero and says so (`ctl.lost`). True when the
    file named the dealer (the game goes on), else a new game begins."""
    try:
        saved = persist.load(ctl.hal.store + COUNTERS_FILE)
        if saved:
            cycles, hands, lifts = saved["cycles"], saved["hands"], saved["lifts"]
            fed, log = list(saved["tiles_fed"]), saved["log"]
            counts = bytearray(len(ctl.fault_counts))
            for code, n in saved["faults"]:
                counts[code] = n
            learned = motion.learned[:]   # none in an older file: learning starts
            got = saved.get("learned", list(learned))
            for i in range(len(got)):
                learned[i] = got[i]
            if len(fed) != 4 or len(log) > _FAULT_LOG or list(learned) != got:
                raise ValueError("not this firmware's counters")
            for t, code, _name, detail in log:       # what the ring can hold
                if not (is_int(t, 0, 0x3FFFFFFF) and is_int(code, 0, 255)
                        and type(detail) is dict):
                    raise ValueError("a damaged fault log entry")
            dealer = saved.get("dealer")     # [seat, wins in a row]
            if dealer is not None and not (type(dealer) is list and len(dealer) == 2
                                           and is_int(dealer[0], 0, 3)
                                           and is_int(dealer[1], 0, 1 << 30)):
                raise ValueError("a damaged dealer")
            ctl.cycles, ctl.hands, ctl.lifts = cycles, hands, lifts
            ctl.tiles_fed = fed
            ctl.fault_counts[:] = counts
            motion.learned[:] = learned
            if dealer is not None:           # the game goes on (docs/hand.md)
                ctl.dealership.dealer, ctl.dealership.wins_in_row = dealer
                return True
    except (ValueError, KeyError, TypeError, IndexError, OverflowError) as e:
        # Damaged, or whole but of another shape (another firmware's):
        # nothing of it is taken, and `counters` says so.
        ctl.lost = "%s: counting again from zero, a new game" % e
    return False


def save(ctl, fault=None):
    """Counters and the fault log (with `fault`, a new entry [t, code,
    name, detail], at its end) to the flash. Never raises: a failed save (a full
    or failing flash, no heap for it now) is counted in `ctl.unsaved`, and
    the table goes on. The fault log lives in the file alone: a log in the
    heap kept each fault's blocks wherever the heap had room when it came,
    until 16 faults later, and over a day of faults they split the free
    heap (docs/heap-idioms.md)."""
    try:
        if fault is None and ctl.state == LIFTING and ctl.walls_seal is not None:
            # The walls lifted (walls.rec): the tile id of each slot as
            # audited (`in_play`), then the lift's count (4 bytes, big
            # endian), sealed (a write torn by a cut leaves the old file;
            # one of another lift is found by its count).
            n = ctl.lifts
            walls = bytearray(len(ctl.in_play) + 4)
            walls[:len(ctl.in_play)] = ctl.in_play
            for i in range(4):
                walls[len(ctl.in_play) + i] = n >> (24 - 8 * i) & 255
            ctl.walls_seal.save(ctl.hal.store + WALLS_FILE, walls)
        log = logged(ctl)
        log.reverse()                  # oldest first, as saved
        if fault is not None:
            log.append(fault)
            del log[:-_FAULT_LOG]
        counts = []
        for code in range(len(ctl.fault_counts)):
            if ctl.fault_counts[code]:
                counts.append([code, ctl.fault_counts[code]])
        persist.save(ctl.hal.store + COUNTERS_FILE, {
            "cycles": ctl.cycles, "hands": ctl.hands, "lifts": ctl.lifts,
            "tiles_fed": ctl.tiles_fed, "faults": counts,
            "log": log,
            "learned": list(motion.learned),     # the motions' learned times (motion.py)
            "dealer": [ctl.dealership.dealer, ctl.dealership.wins_in_row]})
    except Exception:
        ctl.unsaved += 1


def logged(ctl):
    """The fault log as saved, newest first: [t, code, name, detail]
    each; empty when there is no file yet or it is damaged."""
    try:
        saved = persist.load(ctl.hal.store + COUNTERS_FILE)
    except ValueError:
        return []
    log = saved["log"] if type(saved) is dict and type(saved.get("log")) is list else []
    log.reverse()
    return log


def record(ctl):
    """The hand's record (hand.rec), made by hand_record.py, sealed; none
    on a table without a key. Never raises: a failed write is counted in
    `ctl.unsaved`."""
    if ctl.hand_seal is None:
        return
    try:
        rec = hand_record.make(ctl.follower, ctl.hands + 1, ctl.dealership.wins_in_row)
        ctl.hand_seal.save(ctl.hal.store + RECORD_FILE, json.dumps(rec).encode())
    except Exception:
        ctl.unsaved += 1


def erase_hand(ctl):
    """The hand ended: its record and the walls lifted erased, so that no
    tile of it stays in the flash. Never raises: a failed erase is
    counted in `ctl.unsaved` (a record left behind is of a hand the
    counters say ended, and is never resumed)."""
    for name in (RECORD_FILE, WALLS_FILE):
        try:
            os.remove(ctl.hal.store + name)
        except OSError as e:
            if e.args[0] != 2:            # ENOENT: nothing to erase
                ctl.unsaved += 1

