"""The virtual table (host_tools/sim) on the happy path: a cycle built and
lifted by the scripted controller of vtable_helpers.py, the real set in
the walls, the lower bound, the cost in CPU, seeds, and the second set."""

import json
import time

import pytest

from engine_core import tiles
from firmware import tags as firmware_tags
from host_tools.sim import VirtualTable
from host_tools.sim.config import DEFAULT_PATH
from host_tools.tests.vtable_helpers import CAP, DICE_MS, S, WANT, Ctl, multiset, side_slots


# -- the happy path -----------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3, 7])
def test_a_cycle_builds_36_tiles_per_side_of_the_real_set(seed):
    tv = VirtualTable(seed)
    ctl = Ctl(tv)
    _, _, scans = ctl.cycle()
    for side in range(4):
        assert set(scans[side]) == side_slots(side)
        assert len(tv.top_walls[side]) == CAP
        assert set(tv.top_walls[side]) == side_slots(side)
    assert multiset(scans) == WANT
    top = {side: ctl.scan(side, 1) for side in range(4)}
    assert top == scans                     # the same walls, now in play
    c = tv.counters()
    assert c["tiles_stacked"] == [CAP] * 4 and c["lifter_cycles"] == [1] * 4
    assert c["revolutions"] == ctl.rotations > 0
    assert tv.errors == []


def test_stacking_fills_bottom_then_top_of_each_stack():
    tv = VirtualTable(5)
    ctl = Ctl(tv)
    ctl.out("plate_motor", None, 800)
    ctl.out("lane_feed", 2, 1)
    seen = {}
    for j in range(5):
        assert ctl.wait(lambda: ctl.counts[2] > j, 5000)
        entries = ctl.scan(2, 0)
        new = set(entries) - set(seen)
        assert new == {(2 * S + j // 2) * 2 + (1 - j % 2)}
        seen = entries
    assert ctl.scan(1, 0) == {}             # lanes that were off hold nothing
    wall = tv.lanes[2].wall
    for j, tile in enumerate(wall.tiles):
        assert seen[(2 * S + j // 2) * 2 + (1 - j % 2)] == tile.uid


@pytest.mark.parametrize("seed", [1, 4, 9])
def test_an_ideal_controller_ends_at_or_just_above_the_lower_bound(seed):
    tv = VirtualTable(seed)
    t0, finish, _ = Ctl(tv, step=5).cycle()
    b = tv.lower_bound(start_time=t0)
    took = finish - t0
    assert b["total_ms"] == tv.lower_bound_ms(start_time=t0)
    assert took >= b["total_ms"]
    assert took <= b["total_ms"] * 1.02, (took, b)
    assert 20000 < b["total_ms"] < 40000    # the architecture's range
    assert b["lanes_ms"] == [tv.lanes[n].walls[0].stacked_at[-1] - t0 for n in range(4)]
    assert b["dice_ms"] == DICE_MS and b["reaction_ms"] == 300 and b["lift_ms"] == 2500
    assert b["audit_end_ms"] >= b["last_stack_ms"] + b["scan_ms"]
    assert b["build"] == 0 and b["start"] == t0 == tv.build_starts[0]


def test_the_bound_does_not_depend_on_what_the_controller_did():
    fast = VirtualTable(11)
    t0, fast_end, _ = Ctl(fast, step=5).cycle()
    slow = VirtualTable(11)
    ctl = Ctl(slow, step=40)
    ctl.out("plate_motor", None, 500)       # slower plate, lanes 2 s late
    ctl.wait_ms(2000)
    ctl.out("plate_motor", None, 0)
    t_slow, slow_end, _ = ctl.cycle()
    assert slow_end > fast_end
    assert slow.lower_bound(start_time=t0) == fast.lower_bound(start_time=t0)
    assert slow_end - t0 > slow.lower_bound_ms(start_time=t0)


def test_a_cycle_costs_little_cpu():
    tv = VirtualTable(3)
    ctl = Ctl(tv, step=10)
    t = time.process_time()
    ctl.cycle()
    assert time.process_time() - t < 0.3
    tv2 = VirtualTable(3)
    for n in range(4):
        tv2.set_output(tv2.config.pin("lane_feed", n), 1)
    tv2.set_output(tv2.config.pin("plate_motor"), 800)
    t = time.process_time()
    tv2.advance_to(35000)                   # the model alone, in one call
    assert time.process_time() - t < 0.1


def test_the_same_seed_gives_the_same_run_and_another_seed_another_shuffle():
    def run(seed):
        tv = VirtualTable(seed)
        ctl = Ctl(tv)
        _, finish, scans = ctl.cycle()
        return ctl.edges, finish, scans, tv.log
    a, b, c = run(21), run(21), run(22)
    assert a == b
    assert a[2] != c[2]


def test_two_sets_build_the_next_set_during_the_hand():
    tv = VirtualTable(2)
    assert tv.config.tile_sets == 2 and len(tv.pile) == sum(WANT.values()) == 144
    ctl = Ctl(tv)
    _, _, first = ctl.cycle()
    assert len(tv.plate.queue) == 144 and tv.pile == []     # pushed in at walls up
    assert {t.set_no for t in tv.plate.queue} == {1}
    tv.players_take(sorted(tv.top_walls[0])[0])             # the hand goes on meanwhile
    _, _, second = ctl.cycle(dealer=1)
    assert multiset(second) == WANT
    assert {t.set_no for w in tv.top_walls.values() for t in w.values()} == {1}
    assert len(tv.plate.queue) == 144 and {t.set_no for t in tv.plate.queue} == {0}
    assert tv.lower_bound()["build"] == 1
    assert tv.players.presses[-1][1] == 1


def test_every_tag_of_both_sets_is_in_the_firmware_tag_table():
    table = firmware_tags.load(str(DEFAULT_PATH.parent / "tags.txt"))
    known = {table.uid(i): tiles.CODES[table.ids[i]] for i in range(len(table))}
    tv = VirtualTable(1)
    both = list(tv.plate.queue) + tv.pile
    assert len(both) == 288 and len({t.uid for t in both}) == 288
    assert all(known[t.uid] == t.code for t in both)
    assert 0xDEADBEEF not in known


def test_one_set_config_and_moved_pins_come_from_the_config_file(tmp_path):
    raw = json.loads(DEFAULT_PATH.read_text())
    raw["tile_sets"] = 1
    shipped, motor = raw["pins"]["plate_rotation"], raw["pins"]["plate_motor"]
    raw["pins"]["plate_rotation"] = 19   # the table models any pin; the firmware would refuse USB
    raw["timings"]["dice_roll_ms"] = 4000
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    tv = VirtualTable(1, config_path=path)
    assert tv.pile == [] and 19 in tv.inputs() and shipped not in tv.inputs()
    tv.set_output(motor, 800)
    assert any(ev[1] == 19 for ev in tv.advance_to(3000))
    ctl = Ctl(tv)
    tv.set_output(motor, 0)
    ctl.cycle()
    assert tv.lower_bound()["dice_ms"] == 4000
    assert len(tv.plate.queue) == 0
    tv.players_clear_table()
    assert len(tv.plate.queue) == 144
