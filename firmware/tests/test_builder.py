"""The wall builder (firmware/controller/builder.py) with the real plate, lane
and RFID drivers on the fake HAL. A small reader model answers each scan
request with the tags the lanes have stacked, placed by docs/hardware.md:
the j-th tile a lane stacks is in slot (seat x S + j // 2) x 2 + 1 - j % 2.
Tags are those of firmware/tags.txt: 0x4D4A, tile id, copy."""

from engine_core import tiles
from engine_core.rulesets import load as load_ruleset
from firmware import tags as tagmod
from firmware.controller import builder as bld
from firmware.drivers.motion import Lane
from firmware.drivers.motion import Plate
from firmware.drivers.rfid import Rfid
from firmware.fakes.hal import FIRMWARE_DIR, FakeHal, shipped_pins

S = 18
PER_LANE = 2 * S
PINS = shipped_pins()
FEED = tuple(PINS["lane_feed"])
COUNT = tuple(PINS["lane_count"])
PLATE, ROT = PINS["plate_motor"], PINS["plate_rotation"]
IDLE_MS = 6000
MAX_MS = 80000
STEP = 10

RULESET = load_ruleset("fuzhou144")
TAGS = tagmod.load(FIRMWARE_DIR + "/tags.txt")


def uid(code, copy):
    return 0x4D4A0000 | (tiles.tile_id(code) << 8) | copy


def full_set():
    """The 144 tags of set 1, in code order."""
    out = []
    counts = RULESET.tile_counts()
    for tid in range(tiles.N_KINDS):
        for copy in range(counts[tid]):
            out.append(uid(tiles.CODES[tid], copy))
    return out


def slot_of(lane, j):
    return (lane * S + j // 2) * 2 + 1 - j % 2


class Rig:
    """`stacked[n]`: the tags lane n will stack, in order, one every
    `every[n]` ms; `missed[n]`: tiles of lane n its sensor does not see."""

    def __init__(self, stacked, every=(200, 200, 200, 200), missed=(0, 0, 0, 0),
                 max_ms=MAX_MS):
        self.hal = hal = FakeHal()
        self.plate = Plate(hal, PLATE, ROT, 800, 1500, 90000)
        self.lanes = [Lane(hal, n, FEED[n], COUNT[n], PER_LANE, 90000) for n in range(4)]
        self.uart = hal.uart(2, PINS["rfid_tx"], PINS["rfid_rx"])
        self.rfid = Rfid(self.uart, RULESET.n_tiles, 400, TAGS)
        self.b = bld.Builder(self.plate, self.lanes, self.rfid, RULESET.tile_counts(),
                             IDLE_MS, max_ms)
        self.stacked = stacked
        self.every = every
        self.missed = missed
        self.given = [0, 0, 0, 0]          # tiles each lane has stacked so far
        self.requests = []                 # (side, level) of every scan request
        self.now = 0
        self.b.start(0)

    def _feed(self, now):
        for n in range(4):
            lane = self.lanes[n]
            if lane.running and self.given[n] < len(self.stacked[n]) and now % self.every[n] == 0:
                self.given[n] += 1
                if self.given[n] > self.missed[n]:
                    self.hal.pulse(COUNT[n])
        if self.plate.running and now % 1000 == 0:
            self.hal.pulse(ROT)

    def _answer(self):
        req = self.uart.take()
        while req:
            assert req[0] == 0x02 and req[1] == 0x10 and req[2] == 2 and req[6] == 0x03, req
            assert req[5] == 0x10 ^ 2 ^ req[3] ^ req[4]
            side = req[3]
            self.requests.append((side, req[4]))
            found = []
            for j in range(self.given[side]):
                found.append((slot_of(side, j), self.stacked[side][j]))
            found.sort()
            data = [side, len(found)]
            for slot, u in found:
                data += [slot, u >> 24, (u >> 16) & 0xFF, (u >> 8) & 0xFF, u & 0xFF]
            x = 0x90 ^ len(data)
            for v in data:
                x ^= v
            self.uart.feed(bytes([0x02, 0x90, len(data)] + data + [x, 0x03]))
            req = req[7:]

    def tick(self):
        self.now += STEP
        now = self.hal.at(self.now)
        self._answer()
        self._feed(now)
        self.plate.poll(now)
        for lane in self.lanes:
            lane.poll(now)
        self.rfid.poll(now)
        self.b.step(now)
        assert self.rfid.fault == 0 and self.plate.fault == 0

    def run(self, limit=200000):
        """Tick until READY or a fault."""
        while self.b.state != bld.READY and not self.b.fault:
            assert self.now < limit, "no end by %d ms" % limit
            self.tick()

    def motors_off(self):
        if self.hal.level(PLATE):
            return False
        for pin in FEED:
            if self.hal.level(pin):
                return False
        return True


def split(uids, sizes=(36, 36, 36, 36)):
    out = []
    at = 0
    for n in sizes:
        out.append(uids[at:at + n])
        at += n
    return out


def test_full_lanes_audit_to_ready():
    rig = Rig(split(full_set()))
    assert rig.b.state == bld.NAMES.index("feeding")
    assert rig.hal.level(PLATE) == 800
    rig.run()
    assert rig.b.state == bld.READY and rig.b.fault == 0
    assert rig.requests == [(0, 0), (1, 0), (2, 0), (3, 0)]
    assert rig.motors_off()
    assert rig.b.tiles_per_side() == [36, 36, 36, 36]
    # the wall as audited: every slot's tile id, as the lanes stacked them
    for n in range(4):
        for j in range(PER_LANE):
            u = rig.stacked[n][j]
            assert rig.b.wall[slot_of(n, j)] == (u >> 8) & 0xFF
    assert tiles.counts_of([tiles.CODES[t] for t in rig.b.wall]) == RULESET.tile_counts()


def test_the_second_set_is_a_full_set_too():
    rig = Rig(split([u | 0x10 for u in full_set()]))
    rig.run()
    assert rig.b.state == bld.READY


def test_a_quiet_lane_while_another_counts_is_a_lane_jam():
    stacked = split(full_set())
    stacked[3] = stacked[3][:2]          # lane 3 jams after two tiles (the last at 400 ms)
    rig = Rig(stacked)
    while rig.now < 400 + IDLE_MS - STEP:
        rig.tick()
    assert rig.b.fault == 0 and rig.b.state == bld.NAMES.index("feeding")
    rig.tick()
    assert rig.now == 400 + IDLE_MS
    # Quiet while the others count: its wall is read before anything is said.
    assert rig.b.fault == 0 and rig.b.state == bld.NAMES.index("checking")
    rig.run()
    assert rig.b.fault == 10             # the wall holds what was counted: a jam
    assert rig.b.detail == {"lane": 3, "count": 2}
    assert rig.motors_off()
    assert rig.requests == [(3, 0)]      # no audit


def test_a_silent_count_sensor_is_a_sensor_fault_and_its_count_is_corrected():
    rig = Rig(split(full_set()), every=(200, 200, 200, 300), missed=(0, 0, 0, 36))
    rig.run()
    assert rig.b.fault == 13
    held = rig.given[3]
    assert held > 0 and rig.b.detail == {"lane": 3, "sensor": "lane_count", "count": 0,
                                         "got": held}
    assert rig.lanes[3].count == held    # the wall's count, read by the RFID reader
    assert rig.motors_off()


def test_resume_reads_every_wall_before_feeding():
    rig = Rig(split(full_set()), missed=(0, 0, 5, 0))
    while rig.now < 3000:
        rig.tick()
    rig.b.stop()
    rig.b.resume(rig.hal.at(rig.now))
    assert rig.b.state == bld.NAMES.index("recounting") and rig.motors_off()
    while rig.b.state == bld.NAMES.index("recounting"):
        rig.tick()
    assert rig.requests[-4:] == [(0, 0), (1, 0), (2, 0), (3, 0)]
    assert [lane.count for lane in rig.lanes] == rig.given[:4]   # lane 2's 5 misses found
    assert rig.b.state == bld.NAMES.index("feeding") and rig.hal.level(PLATE)


def test_every_unfinished_lane_quiet_together_is_audited_missing_tile():
    uids = full_set()
    uids.remove(uid("1m", 0))
    uids.remove(uid("5z", 2))
    rig = Rig(split(uids, (36, 36, 35, 35)))
    rig.run()
    assert rig.b.fault == 20
    assert rig.b.detail == {"tiles": ["1m", "5z"], "lane": 2}    # the first short lane
    assert rig.b.starved
    assert rig.requests == [(0, 0), (1, 0), (2, 0), (3, 0)]
    assert rig.motors_off()


def test_lanes_going_quiet_at_different_times_are_not_a_jam_when_all_stop():
    uids = full_set()
    uids.remove(uid("9p", 3))
    rig = Rig(split(uids, (36, 36, 36, 35)), every=(200, 210, 220, 190))
    rig.run()
    assert rig.b.fault == 20
    assert rig.b.detail == {"tiles": ["9p"], "lane": 3}


def test_a_complete_set_with_a_short_lane_is_a_lane_that_lost_count():
    rig = Rig(split(full_set()), missed=(0, 0, 1, 0))
    rig.run()
    assert rig.b.fault == 10
    assert rig.b.detail == {"lane": 2, "count": -1}


def test_an_extra_copy_is_extra_tile_without_slots():
    uids = full_set()
    i = uids.index(uid("9s", 1))
    uids[i] = uid("1m", 0x10)            # a 1m of the second set instead of a 9s
    rig = Rig(split(uids))
    rig.run()
    assert rig.b.fault == 21
    assert rig.b.detail == {"tiles": ["1m"]}
    assert "slot" not in rig.b.detail and "slots" not in rig.b.detail
    assert rig.motors_off()


def test_an_unknown_uid_is_unknown_tag_with_its_slot():
    uids = full_set()
    stacked = split(uids)
    stacked[1][5] = 0xDEADBEEF          # lane 1, sixth tile: slot (18 + 2) x 2 + 0
    assert slot_of(1, 5) == 40
    rig = Rig(stacked)
    rig.run()
    assert rig.b.fault == 22
    assert rig.b.detail == {"slot": 40, "uid": "deadbeef"}


def test_building_longer_than_build_max_ms_is_fault_14():
    rig = Rig(split(full_set()), every=(2000, 2000, 2000, 2000), max_ms=10000)
    while rig.now < 10000:
        rig.tick()
    assert rig.b.fault == 0
    rig.tick()
    assert rig.b.fault == 14
    assert rig.b.detail == {"ms": 10010}
    assert rig.motors_off()


def test_resume_after_a_long_stop_finishes_the_set():
    uids = full_set()
    stacked = split(uids)
    rig = Rig([stacked[0], stacked[1], stacked[2], stacked[3][:2]])
    while not rig.b.fault:
        rig.tick()
    assert rig.b.fault == 10
    # the technician clears lane 3's chute; the fault is cleared 2 minutes on
    rig.stacked[3] = stacked[3]
    rig.now = 120000
    rig.b.clear()
    rig.b.resume(rig.hal.at(rig.now))
    while rig.b.state == bld.NAMES.index("recounting"):
        rig.tick()
    assert rig.lanes[3].count == 2 and rig.hal.level(FEED[3]) == 1
    rig.run()
    assert rig.b.fault == 0 and rig.b.state == bld.READY
    assert [lane.count for lane in rig.lanes] == [36, 36, 36, 36]


def test_a_whole_lane_missing_names_sixteen_kinds_and_fits_a_fault_event():
    """~40 kinds short (a lane's tiles left on the plate): the detail names
    the first 16 and counts them all, so the fault event still fits the
    link's event frame (a longer detail would be dropped as too big)."""
    from firmware import frame
    from firmware.link import codec
    uids = full_set()
    for tid in range(40):
        uids.remove(uid(tiles.CODES[tid], 0))
    rig = Rig(split(uids, (26, 26, 26, 26)))
    rig.run()
    assert rig.b.fault == 20
    d = rig.b.detail
    assert d["count"] == 40 and d["tiles"] == [tiles.CODES[t] for t in range(16)], d
    buf = bytearray(frame.OVERHEAD + 200)          # the link server's event buffer
    ev = {"code": 20, "name": "missing_tile", "detail": d, "ev": "fault", "t": 999999999}
    assert codec.write_event(buf, 255, ev, reveal=True) <= len(buf)
