"""The virtual table's devices (host_tools/sim): the plate, the lifters and
their switches, the RFID reader, the display board, the keys and the
players who press them, as the scripted controller of vtable_helpers.py
sees them."""

import struct

from host_tools.sim import VirtualTable
from host_tools.tests.vtable_helpers import Ctl, rfid_req, take_rfid


def test_plate_speed_follows_the_duty():
    for duty, revs in ((800, 10), (400, 5), (1023, 12)):
        tv = VirtualTable(1)
        ctl = Ctl(tv, step=10)
        ctl.out("plate_motor", None, duty)
        ctl.wait_ms(10000)
        assert ctl.rotations in (revs, revs + 1)
        rises = [e[3] for e in ctl.edges if e[2] == 1]
        falls = [e[3] for e in ctl.edges if e[2] == 0]
        if duty == 800:
            assert {b - a for a, b in zip(rises, rises[1:])} == {1000}
            assert {f - r for r, f in zip(rises, falls[-len(rises):])} == {50}


def test_lifter_travel_and_switch_edges():
    tv = VirtualTable(1)
    ctl = Ctl(tv, step=1)
    top, bottom = ctl.pin("lift_top", 0), ctl.pin("lift_bottom", 0)
    t0 = tv.now
    assert ctl.lift(True, sides=[0])
    ev = {(p, v): at for _, p, v, at in ctl.edges}
    assert ev[bottom, 0] - t0 == 50 and ev[top, 1] - t0 == 2500
    t1 = tv.now
    assert ctl.lift(False, sides=[0])
    ev = {(p, v): at for _, p, v, at in ctl.edges}
    assert ev[top, 0] - t1 == 50 and ev[bottom, 1] - t1 == 2000
    # motion pauses while the output is off
    ctl.out("lift_up", 1, 1)
    ctl.wait_ms(1000)
    ctl.out("lift_up", 1, 0)
    ctl.wait_ms(3000)
    assert ctl.level[ctl.pin("lift_top", 1)] == 0
    assert ctl.lift(True, sides=[1], limit_ms=1600)
    # both outputs on: no motion, a firmware error
    ctl.out("lift_up", 2, 1)
    ctl.out("lift_down", 2, 1)
    ctl.wait_ms(500)
    assert ctl.level[ctl.pin("lift_bottom", 2)] == 1
    assert [e[1:] for e in tv.errors] == [("lift_both_on", 2)]


def test_a_platform_stopped_within_its_bottom_switch_travel_is_at_the_bottom():
    # A power cut 20 ms into a rise (the switch opens after 50 ms): the
    # switch still says bottom, all the firmware can know, so the lane
    # stacks on that platform and the reader reads its wall. (It stacked
    # nothing and read it empty: the firmware, seeing the bottom switch
    # closed, never lowered it, and every later build ended in
    # missing_tile for that side; make powercuts, docs/reliability.md.)
    tv = VirtualTable(1)
    ctl = Ctl(tv, step=1)
    ctl.out("lift_up", 0, 1)
    ctl.wait_ms(20)
    tv.power_cut()
    levels = tv.boot(version=1)
    lifter = tv.lifters[0]
    assert 0 < lifter.pos < lifter.zone_bottom and levels[ctl.pin("lift_bottom", 0)] == 1
    ctl.level = levels
    ctl.start_build()
    assert ctl.wait(lambda: ctl.counts[0] >= 2, 5000), ctl.counts
    assert len(ctl.scan(0, 0)) == len(tv.lanes[0].wall.tiles) >= 2
    # rising again, it is no longer at the bottom for the lanes or the reader
    ctl.out("lane_feed", 0, 0)
    ctl.out("lift_up", 0, 1)
    assert not lifter.idle_at_bottom() and tv.rfid.read_side(0, 0) == {}
    assert ctl.lift(True, sides=[0])
    assert len(tv.top_walls[0]) >= 2 and tv.rfid.read_side(0, 0) == {}


def test_rfid_ping_timing_and_one_request_at_a_time():
    tv = VirtualTable(1)
    ctl = Ctl(tv, step=1)
    t0 = tv.now
    assert ctl.rfid(0x11) == (0x91, bytes([1]), True)
    assert tv.now - t0 <= 10
    tv.uart_write(2, rfid_req(0x10, b"\x00") + rfid_req(0x10, b"\x01"))
    ctl.wait_ms(400)
    cmd, data, ok = take_rfid(ctl.rfid_rx)
    assert data[0] == 0 and take_rfid(ctl.rfid_rx) is None
    tv.uart_write(2, b"\x02\x10\x01\x00\x99\x03")           # bad xor: no reply
    tv.uart_write(2, rfid_req(0x10, b"\x00\x07"))            # bad level: no reply
    ctl.wait_ms(400)
    assert ctl.rfid_rx == b"" and tv.rfid.ignored == 2


def test_display_shows_acks_and_rejects():
    tv = VirtualTable(1)
    ctl = Ctl(tv, step=1)
    t0 = tv.now
    ctl.display(0x03, bytes([2, 4]))
    ctl.wait_ms(20)
    assert ctl.acks == [(0x03, t0 + 7)]                     # 1 ms of bytes, 5 ms, 1 ms of ACK
    assert tv.display.dealer == (2, 4) and tv.display.changed_at["dealer"] == t0 + 1
    ctl.display(0x05, b"LANE 2 JAM")
    ctl.display(0x01, bytes([27]))
    ctl.display(0x04, struct.pack("<hBB", -3, 1, 7))
    ctl.wait_ms(20)
    assert (tv.display.text, tv.display.gold, tv.display.count) == ("LANE 2 JAM", 27, (-3, 1, 7))
    tv.uart_write(1, b"\x7e\x01\x01\x05\x00\x7f")            # bad sum
    ctl.display(0x02, b"\x01")                                # bad length
    ctl.wait_ms(20)
    assert len(ctl.acks) == 4 and tv.display.rejected == 1 and tv.display.parser.bad == 1


def test_keys_scripted_and_the_dealer_waits_for_the_walls():
    tv = VirtualTable(1)
    ctl = Ctl(tv, step=1)
    tv.players.press(3, at=100)
    ctl.wait_ms(300)
    k3 = ctl.pin("keys", 3)
    assert [(v, at) for _, p, v, at in ctl.edges if p == k3] == [(1, 100), (0, 220)]
    ctl.display(0x03, bytes([1, 0]))        # a lamp but no walls: nobody presses
    ctl.wait_ms(1000)
    assert len(tv.players.presses) == 1


def test_players_press_for_the_dealer_shown_after_the_walls_came_up():
    """A dealer lamp shown before the walls came up is the last hand's (a
    display replugged during a hand shows it again): the players wait for
    the SHOW_DEALER of these walls and press for that dealer."""
    tv = VirtualTable(1)
    players = tv.players
    tv.display.dealer = (1, 0)
    players.dealer_shown(100)          # the old dealer, shown again mid-hand
    players.walls_up(200)
    assert players.presses == []       # not for seat 1
    tv.display.dealer = (2, 0)
    players.dealer_shown(250)          # the lamp of these walls
    assert players.presses == [(250 + players.reaction_ms, 2)]
