"""The virtual table's faults (host_tools/sim): each one injected, what the
scripted controller of vtable_helpers.py sees of it, and the table as it
was once it is cleared; the power cut and the watchdog."""

import pytest

from engine_core import tiles
from host_tools.sim import VirtualTable
from host_tools.tests.vtable_helpers import CAP, WANT, Ctl, built, multiset


def test_lane_jam_stops_that_lane_and_clearing_resumes_it():
    tv = VirtualTable(3)
    ctl = Ctl(tv)
    ctl.start_build()
    assert ctl.wait(lambda: ctl.counts[2] >= 5, 10000)
    tv.inject("lane_jam:2")
    before = list(ctl.counts)
    ctl.wait_ms(6000)
    assert ctl.counts[2] == before[2]
    assert all(ctl.counts[n] > before[n] for n in (0, 1, 3))
    assert tv.clear_fault("lane_jam") == ["lane_jam:2"]
    assert ctl.wait(lambda: ctl.counts == [CAP] * 4, 40000)


def test_plate_stall_no_rotation_no_tiles_then_recovers():
    tv = VirtualTable(3, faults=["plate_stall"])
    ctl = Ctl(tv)
    ctl.start_build()
    ctl.wait_ms(5000)
    assert ctl.rotations == 0 and ctl.counts == [0] * 4
    tv.clear_fault("plate_stall")
    assert ctl.wait(lambda: ctl.counts == [CAP] * 4, 40000)
    assert ctl.rotations > 0


def test_lift_stuck_keeps_the_switches_then_recovers():
    tv = VirtualTable(1, faults=["lift_stuck:1"])
    ctl = Ctl(tv)
    assert not ctl.lift(True, limit_ms=4000)
    assert [ctl.level[ctl.pin("lift_top", n)] for n in range(4)] == [1, 0, 1, 1]
    assert ctl.level[ctl.pin("lift_bottom", 1)] == 1
    tv.clear_fault("lift_stuck:1")
    assert ctl.lift(True, sides=[1], limit_ms=2600)


def test_sensor_stuck_holds_the_pin_and_clearing_tells_the_truth():
    tv = VirtualTable(1)
    ctl = Ctl(tv)
    assert tv.inject("sensor_stuck:lift_bottom2:0") == "sensor_stuck:lift_bottom:2:0"
    pin = ctl.pin("lift_bottom", 2)
    ctl.tick()
    assert ctl.level[pin] == 0
    tv.inject("sensor_stuck:lane_count[1]:1")
    ctl.start_build()
    ctl.wait_ms(3000)
    assert ctl.level[ctl.pin("lane_count", 1)] == 1
    assert [e for e in ctl.edges if e[1] == ctl.pin("lane_count", 1)][-1][2] == 1
    assert len([e for e in ctl.edges if e[1] == ctl.pin("lane_count", 1)]) == 1
    tv.clear_fault("sensor_stuck")
    ctl.tick()
    assert ctl.level[pin] == 1 and ctl.level[ctl.pin("lane_count", 1)] == tv.physical[
        ctl.pin("lane_count", 1)]
    with pytest.raises(ValueError):
        tv.inject("sensor_stuck:lane_feed:0:1")     # an output, not a sensor


def test_missing_tile_builds_143_and_the_scan_lacks_it_until_put_back():
    tv = VirtualTable(4, faults=["missing_tile:5z"])
    ctl = Ctl(tv)
    ctl.start_build()
    ctl.wait_ms(40000)
    assert sum(ctl.counts) == 143 and sorted(ctl.counts) == [35, 36, 36, 36]
    scans = {n: ctl.scan(n) for n in range(4)}
    ms = multiset(scans)
    assert ms[tiles.tile_id("5z")] == 3 and sum(ms.values()) == 143
    tv.clear_fault("missing_tile:5z")           # put back; the lanes tipped into the tray
    assert [len(lane.wall.tiles) for lane in tv.lanes] == [0, 0, 0, 0]
    assert len(tv.plate.queue) == 144
    ctl.start_build()
    assert ctl.wait(lambda: ctl.counts == [CAP] * 4, 45000)
    assert multiset({n: ctl.scan(n) for n in range(4)}) == WANT


def test_extra_tile_is_built_into_a_wall_and_clearing_swaps_it_out():
    tv = VirtualTable(6, faults=["extra_tile:1m"])
    ctl = built(tv)
    assert ctl.counts == [CAP] * 4 and len(tv.plate.queue) == 1
    ms = multiset({n: ctl.scan(n) for n in range(4)})
    assert ms[tiles.tile_id("1m")] == 5 and sum(ms.values()) == 144
    tv.clear_fault("extra_tile")                # the stray tile out, the lanes tipped
    assert [len(lane.wall.tiles) for lane in tv.lanes] == [0, 0, 0, 0]
    ctl.start_build()
    assert ctl.wait(lambda: ctl.counts == [CAP] * 4, 45000)
    assert multiset({n: ctl.scan(n) for n in range(4)}) == WANT
    assert len(tv.plate.queue) == 0


def test_unknown_tag_shows_in_the_scan_until_retagged():
    tv = VirtualTable(8, faults=["unknown_tag"])
    ctl = built(tv)
    uids = [u for n in range(4) for u in ctl.scan(n).values()]
    assert uids.count(0xDEADBEEF) == 1
    tv.clear_fault("unknown_tag")               # retagged, the lanes tipped
    ctl.start_build()
    assert ctl.wait(lambda: ctl.counts == [CAP] * 4, 45000)
    assert multiset({n: ctl.scan(n) for n in range(4)}) == WANT


def test_rfid_timeout_and_crc_faults_and_their_repair():
    tv = VirtualTable(1, faults=["rfid_timeout"])
    ctl = Ctl(tv)
    assert ctl.rfid(0x11, limit_ms=1000) is None
    tv.clear_fault("rfid_timeout")
    assert ctl.rfid(0x11) == (0x91, b"\x01", True)
    tv.inject("rfid_crc")
    assert ctl.rfid(0x11) == (0x91, b"\x01", False)
    tv.clear_fault("rfid_crc")
    assert ctl.rfid(0x11)[2] is True


def test_display_unplugged_no_ack_then_a_blank_board():
    tv = VirtualTable(1)
    ctl = Ctl(tv)
    ctl.display(0x01, bytes([5]))
    ctl.wait_ms(50)
    tv.inject("display_unplugged")
    ctl.display(0x01, bytes([6]))
    ctl.wait_ms(500)
    assert len(ctl.acks) == 1 and tv.display.gold == 255
    tv.clear_fault("display_unplugged")
    ctl.display(0x01, bytes([7]))
    ctl.wait_ms(50)
    assert len(ctl.acks) == 2 and tv.display.gold == 7


def test_power_cut_turns_everything_off_until_the_next_boot():
    tv = VirtualTable(1, faults=["power_cut:2.5"])
    ctl = Ctl(tv)
    ctl.start_build()
    ctl.out("lift_up", 0, 1)
    ctl.display(0x01, bytes([3]))
    tv.advance_to(10000)
    assert tv.now == 2500 and tv.halt_reason == "power_cut"
    assert all(v == 0 for v in tv.outputs.values()) and tv.display.gold == 255
    assert tv.active_faults == []
    stacked = [len(l.wall.tiles) for l in tv.lanes]
    pos = tv.lifters[0].pos
    ctl.start_build()                       # the dead firmware's outputs do nothing
    events = tv.advance_to(6000)
    assert [len(l.wall.tiles) for l in tv.lanes] == stacked and tv.lifters[0].pos == pos
    assert all(e[1] != ctl.pin("plate_rotation") or e[2] == 0 for e in events)
    levels = tv.boot(version=1)
    assert tv.halt_reason is None and levels[ctl.pin("lift_bottom", 0)] == 0
    ctl.start_build()
    assert ctl.wait(lambda: sum(ctl.counts) > 0, 3000)


def test_watchdog_resets_the_controller_in_virtual_time():
    tv = VirtualTable(1)
    tv.set_output(tv.config.pin("plate_motor"), 800)
    tv.feed_watchdog(300)
    tv.advance_to(200)
    tv.feed_watchdog(300)
    tv.advance_to(2000)
    assert tv.now == 500 and tv.halt_reason == "watchdog" and tv.plate.duty == 0


def test_bad_fault_names_are_refused():
    tv = VirtualTable(1)
    for bad in ("lane_jam:4", "lane_jam", "missing_tile:0m", "nonsense", "plate_stall:1",
                "sensor_stuck:lane_count:9:1", "sensor_stuck:keys:0:2"):
        with pytest.raises(ValueError):
            tv.inject(bad)
    assert tv.clear_fault("plate_stall") == []
