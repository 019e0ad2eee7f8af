"""Building one set of walls: plate and four lanes in parallel, then the
RFID audit of what was built. A sub-machine of the table controller: it is
stepped every tick and reports READY or a fault; it never lifts.

    EMPTY -> FEEDING -> AUDITING -> READY        (a fault stops it anywhere)
    FEEDING -> CHECKING -> FEEDING | fault       a lane went quiet: read its wall
    (resume) -> RECOUNTING -> FEEDING            after a stop: read every wall

The RFID reader is the truth about what a lane holds: a lane that stopped
counting is checked against its wall before it is called jammed (a silent
count sensor is a sensor fault, not a jam), and after any stop the lanes'
counts are read again from their walls before feeding resumes.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.faults import (BUILD_TIMEOUT as _BUILD_TIMEOUT, EXTRA_TILE as _EXTRA_TILE,
                             LANE_JAM as _LANE_JAM, MISSING_TILE as _MISSING_TILE,
                             SENSOR_STUCK as _SENSOR_STUCK, UNKNOWN_TAG as _UNKNOWN_TAG)
from firmware.drivers.rfid import DONE, WAITING
from firmware.hal import ticks_diff
from firmware.tags import UNKNOWN
from engine_core import tiles

# The states the controller reads are public; the others are private
# constants (no interned name each: docs/firmware.md, Memory), and tests
# name them by NAMES.
EMPTY = 0
_FEEDING = const(1)
AUDITING = 2
READY = 3
_CHECKING = const(4)
_RECOUNTING = const(5)
NAMES = ("empty", "feeding", "auditing", "ready", "checking", "recounting")

_LEVEL_LANES = const(0)            # the RFID level of the walls being built


_EVENT_KINDS = const(16)           # codes a fault event names: more do not fit its frame


def _kinds(codes, detail):
    """An audit fault's detail: the tile codes, at most _EVENT_KINDS of them
    (a whole lane missing is ~40 kinds, past the link's 200-byte event), and
    `count`, how many kinds in all, when they are more."""
    if len(codes) > _EVENT_KINDS:
        detail["count"] = len(codes)
        codes = codes[:_EVENT_KINDS]
    detail["tiles"] = codes
    return detail


class Builder:
    def __init__(self, plate, lanes, rfid, tile_counts, lane_idle_ms, build_max_ms):
        """`tile_counts`: the ruleset's multiset (a bytearray by tile id)."""
        self.plate = plate
        self.lanes = lanes
        self.rfid = rfid
        self.want = tile_counts
        self.lane_idle_ms = lane_idle_ms
        self.build_max_ms = build_max_ms
        self.state = EMPTY
        self.fault = 0
        self.detail = None         # a dict for the fault event (rare: allocation is fine)
        self.started = 0
        self.starved = False
        n = sum(tile_counts)
        self.wall = bytearray(n)   # tile id per slot after the audit (NO_TILE: none)
        for slot in range(n):
            self.wall[slot] = tiles.NO_TILE
        self._side = 0             # the side being read (audit, check, recount)
        self._asking = False       # that side is to be read when the reader is free

    # -- commands ------------------------------------------------------------

    def start(self, now):
        """A new set into empty lanes: count every lane from zero."""
        for lane in self.lanes:
            lane.start(now)
        self._feed_from(now)

    def resume(self, now):
        """Feed again after a stop (a cleared fault): first read every wall,
        since a count may have been missed while the table was stopped."""
        self.state = _RECOUNTING
        self._read(now, 0)

    def _feed_from(self, now):
        """Feeding from here; the build deadline too: time stopped does not count."""
        self.started = now
        self.state = _FEEDING
        self.starved = False
        self.plate.start(now)
        for lane in self.lanes:
            lane.resume(now)

    def audit_again(self, now):
        """Read the four walls and check the set (also after the lanes filled)."""
        self.state = AUDITING
        self._read(now, 0)

    def stop(self):
        self._asking = False
        self.plate.stop()
        for lane in self.lanes:
            lane.stop()

    def clear(self):
        self.fault = 0
        self.detail = None

    # -- the tick ------------------------------------------------------------

    def step(self, now):
        state = self.state
        if state == _FEEDING:
            self._feed(now)
        elif self.reading():
            self._ask(now)
            if self._asking or not self.rfid.done(_LEVEL_LANES):
                return                 # the side's answer is not in (the driver times out)
            self.rfid.release()
            # A side read: the lane CHECKING asked about, or the next side of
            # an audit or a recount (then the set, or feeding again).
            side = self._side
            lane = self.lanes[side]
            if state == _CHECKING:      # jammed, or a count sensor that missed tiles?
                held = self._tags_on(side)
                if held > lane.count:
                    counted = lane.count
                    lane.set_count(held, now)
                    self._fail(_SENSOR_STUCK, {"lane": lane.index, "sensor": "lane_count",
                                              "count": counted, "got": held})
                else:
                    self._fail(_LANE_JAM, {"lane": lane.index, "count": lane.count})
                return
            if state == _RECOUNTING:
                lane.set_count(self._tags_on(side), now)
            if side < 3:
                self._read(now, side + 1)
            elif state == _RECOUNTING:
                self._feed_from(now)
            else:
                self._check_set()

    def _feed(self, now):
        lanes = self.lanes
        newest = lanes[0].last_tile
        all_full = True
        for lane in lanes:
            if ticks_diff(lane.last_tile, newest) > 0:
                newest = lane.last_tile
            if not lane.full:
                all_full = False
        if all_full:
            self.plate.stop()
            self.audit_again(now)
            return
        # A lane that has had nothing for lane_idle_ms while another lane kept
        # counting is jammed; if every unfinished lane went quiet together,
        # the plate ran dry: audit to find what is missing.
        quiet = True
        for lane in lanes:
            if lane.full:
                continue
            if lane.idle_ms(now) < self.lane_idle_ms:
                quiet = False
            elif ticks_diff(newest, lane.last_tile) >= self.lane_idle_ms:
                self.state = _CHECKING      # jammed, or is its count sensor silent?
                self._read(now, lane.index)
                return
        if quiet:
            self.starved = True
            self.stop()
            self.audit_again(now)
        elif ticks_diff(now, self.started) > self.build_max_ms:
            self._fail(_BUILD_TIMEOUT, {"ms": ticks_diff(now, self.started)})

    def _tags_on(self, side):
        per = len(self.wall) // 4
        n = 0
        for slot in range(side * per, (side + 1) * per):
            n += self.rfid.seen[slot]
        return n

    def _read(self, now, side):
        """Read one side of the walls being built, as soon as the reader is
        free (the hand follower may be using it: two tile sets)."""
        self._side = side
        self._asking = True
        self._ask(now)

    def _ask(self, now):
        # Free: no request out, and no answer of the follower's unread (it
        # reads its answers in the tick they come).
        r = self.rfid
        if self._asking and r.state != WAITING and (r.state != DONE
                                                      or r.level == _LEVEL_LANES):
            r.scan(now, self._side, _LEVEL_LANES)
            self._asking = False

    def reading(self):
        """The builder needs the reader now (its reads come first)."""
        return self.state == AUDITING or self.state == _CHECKING or self.state == _RECOUNTING

    def _check_set(self):
        wall = self.wall
        have = bytearray(tiles.N_KINDS)
        for slot in range(len(wall)):
            if not self.rfid.seen[slot]:
                wall[slot] = tiles.NO_TILE
                continue
            tid = self.rfid.ids[slot]
            if tid == UNKNOWN:
                u = self.rfid.unknown_uid   # the scan's first unknown: this one
                self._fail(_UNKNOWN_TAG, {"slot": slot, "uid": "%02x%02x%02x%02x"
                                          % (u[0], u[1], u[2], u[3])})
                return
            wall[slot] = tid
            have[tid] += 1
        missing = [tiles.CODES[t] for t in range(tiles.N_KINDS) if have[t] < self.want[t]]
        extra = [tiles.CODES[t] for t in range(tiles.N_KINDS) if have[t] > self.want[t]]
        if extra:
            # No slots: they would tell where tiles of these walls lie.
            self._fail(_EXTRA_TILE, _kinds(extra, {}))
        elif missing:
            # A lane that jammed just before the others filled looks the same
            # (its tiles stay on the plate): name the short lane too.
            self._fail(_MISSING_TILE, _kinds(missing, {"lane": self._short_lane()}))
        elif self.starved:
            # Every tile is there yet a lane is short: a lane lost count.
            self._fail(_LANE_JAM, {"lane": self._short_lane(), "count": -1})
        else:
            self.state = READY

    def _short_lane(self):
        for lane in self.lanes:
            if not lane.full:
                return lane.index
        return -1

    def tiles_per_side(self):
        """Tiles per side found by the last audit (the reader's answers may
        be the hand follower's by now)."""
        per = len(self.wall) // 4
        out = [0, 0, 0, 0]
        for slot in range(len(self.wall)):
            if self.wall[slot] != tiles.NO_TILE:
                out[slot // per] += 1
        return out

    def _fail(self, code, detail):
        self.stop()
        self.fault = code
        self.detail = detail
