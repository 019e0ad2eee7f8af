"""Building one set of walls: plate and four lanes in parallel, then the
RFID audit of what was built. A sub-machine of the table controller: it is
stepped every tick and reports READY or a fault; it never lifts.

    EMPTY -> FEEDING -> AUDITING -> READY
                 \\-> (fault)  \\-> (fault)
"""

from firmware.hal.ticks import ticks_diff
from firmware.tags import UNKNOWN
from engine_core import tiles

EMPTY = 0
FEEDING = 1
AUDITING = 2
READY = 3
NAMES = ("empty", "feeding", "auditing", "ready")

LANE_JAM = 10
BUILD_TIMEOUT = 14
MISSING_TILE = 20
EXTRA_TILE = 21
UNKNOWN_TAG = 22
LEVEL_LANES = 0            # the RFID level of the walls being built
AUDIT_FAULTS = (MISSING_TILE, EXTRA_TILE, UNKNOWN_TAG)


class Builder:
    def __init__(self, plate, lanes, rfid, tags, ruleset, lane_idle_ms, build_max_ms):
        self.plate = plate
        self.lanes = lanes
        self.rfid = rfid
        self.tags = tags
        self.ruleset = ruleset
        self.want = ruleset.tile_counts()
        self.lane_idle_ms = lane_idle_ms
        self.build_max_ms = build_max_ms
        self.state = EMPTY
        self.fault = 0
        self.detail = None         # a dict for the fault event (rare: allocation is fine)
        self.started = 0
        self.starved = False
        self.wall = bytearray(ruleset.n_tiles)   # tile id per slot after the audit
        self._side = 0

    # -- commands ------------------------------------------------------------

    def start(self, now):
        """A new set: count every lane from zero."""
        self.started = now
        for lane in self.lanes:
            lane.start(now)
        self.resume(now)

    def resume(self, now):
        """Feed again after a stop (a cleared fault): lanes keep their counts."""
        self.state = FEEDING
        self.starved = False
        self.plate.start(now)
        for lane in self.lanes:
            lane.resume(now)

    def audit_again(self, now):
        self._begin_audit(now)

    def stop(self):
        self.plate.stop()
        for lane in self.lanes:
            lane.stop()

    def clear(self):
        self.fault = 0
        self.detail = None

    # -- the tick ------------------------------------------------------------

    def step(self, now):
        if self.state == FEEDING:
            self._feed(now)
        elif self.state == AUDITING:
            self._audit(now)

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
            self._begin_audit(now)
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
                self._fail(LANE_JAM, {"lane": lane.index, "count": lane.count})
                return
        if quiet:
            self.starved = True
            self.stop()
            self._begin_audit(now)
        elif ticks_diff(now, self.started) > self.build_max_ms:
            self._fail(BUILD_TIMEOUT, {"ms": ticks_diff(now, self.started)})

    def _begin_audit(self, now):
        self.state = AUDITING
        self._side = 0
        self.rfid.scan(now, 0, LEVEL_LANES)

    def _audit(self, now):
        rfid = self.rfid
        if rfid.state != 2:        # rfid.DONE: still waiting (the driver times out)
            return
        self._side += 1
        if self._side < 4:
            rfid.scan(now, self._side, LEVEL_LANES)
            return
        self._check_set()

    def _check_set(self):
        wall = self.wall
        have = bytearray(tiles.N_KINDS)
        for slot in range(len(wall)):
            if not self.rfid.seen[slot]:
                wall[slot] = tiles.NO_TILE
                continue
            tid = self.tags.lookup(self.rfid.uids[slot])
            if tid == UNKNOWN:
                self._fail(UNKNOWN_TAG, {"slot": slot, "uid": "%08x" % self.rfid.uids[slot]})
                return
            wall[slot] = tid
            have[tid] += 1
        missing = [tiles.CODES[t] for t in range(tiles.N_KINDS) if have[t] < self.want[t]]
        extra = [tiles.CODES[t] for t in range(tiles.N_KINDS) if have[t] > self.want[t]]
        if extra:
            # No slots: they would tell where tiles of these walls lie.
            self._fail(EXTRA_TILE, {"tiles": extra})
        elif missing:
            self._fail(MISSING_TILE, {"tiles": missing})
        elif self.starved:
            # Every tile is there yet a lane is short: a lane lost count.
            self._fail(LANE_JAM, {"lane": self._short_lane(), "count": -1})
        else:
            self.state = READY

    def _short_lane(self):
        for lane in self.lanes:
            if not lane.full:
                return lane.index
        return -1

    def tiles_per_side(self):
        per = len(self.wall) // 4
        out = [0, 0, 0, 0]
        for slot in range(len(self.wall)):
            if self.rfid.seen[slot]:
                out[slot // per] += 1
        return out

    def _fail(self, code, detail):
        self.stop()
        self.fault = code
        self.detail = detail
