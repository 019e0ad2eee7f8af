"""A power cut while a set is built (controller/resume.py `cycle`,
docs/reliability.md, A cut while building or lifting), on the virtual
table (the real firmware under MicroPython; virtual time, nothing sleeps).

Cut with the lanes empty, partly built (a stack half made), some full and
others not, all full (the audit): the table boots, reads the lanes (no
motor), and stops with power_lost `mid_build` and the tiles each lane
holds; nothing moves until the technician's `clear`, which resumes the
build: every lane keeps its wall, the partial ones are finished from the
plate, the audit checks the set, and the hand played on it is its replay.
A lane whose wall has a gap is named: the technician empties
that lane alone (`lane`), the others keep theirs. No tile is lost."""

import pytest

from host_tools.cli.ops import public_state, resumed_mismatches
from host_tools.sim.hand_players import HandPlayers
from hw_tests.harness import boot_after, cut_power_when, hand_to_result
from hw_tests.test_relift import tiles_held


def _stacked(table):
    return [len(lane.wall.tiles) for lane in table.lanes]


MOMENTS = [                 # (id, when the cut comes: a test of the virtual table)
    ("empty", lambda t: t.plate.turning and sum(_stacked(t)) == 0),
    ("partial", lambda t: sum(_stacked(t)) >= 37),
    ("mixed", lambda t: max(_stacked(t)) == 2 * t.stacks and min(_stacked(t)) < 2 * t.stacks - 6),
    ("full", lambda t: min(_stacked(t)) == 2 * t.stacks),
]


def _mid_build(target):
    ev = target.wait_event(lambda e: e["ev"] == "fault", "power_lost")
    assert ev["name"] == "power_lost" and ev["detail"]["reason"] == "mid_build", ev
    return ev["detail"]


@pytest.mark.needs_sim
@pytest.mark.parametrize("moment,cond", MOMENTS, ids=[m[0] for m in MOMENTS])
def test_a_build_cut_keeps_the_lanes_and_resumes_on_clear_to_a_hand_that_is_its_replay(
        make_target, moment, cond):
    players = []
    target = make_target(seed=6, setup=lambda table: players.append(HandPlayers(table, seed=6)))
    table = target.table
    want = table.config.tile_sets * table.rules.n_tiles
    restarts = target.sim.restarts
    cut = cut_power_when(target, cond, note=_stacked)
    target.start()
    detail = _mid_build(target)
    assert target.sim.restarts == restarts + 1 and cut
    held = _stacked(table)
    # The lanes as the reader found them: what was stacked at the cut.
    assert detail == {"reason": "mid_build", "count": cut[0][1]} and held == cut[0][1], (
        detail, cut)
    boot = boot_after(target, cut[0][0])
    target.wait_table_time(1000)
    assert [c for c in target.output_changes(since=boot) if c[2]] == []   # nothing moved
    assert target.in_table(lambda: tiles_held(table)) == want
    kept = [list(lane.wall.tiles) for lane in table.lanes]
    target.drain()
    assert target.request("clear")["cleared"] == 41
    target.wait_state("building")
    target.wait_state("dealer")
    for side, lane in enumerate(table.lanes):   # each wall as it was, then finished
        assert lane.walls[-2].tiles[:len(kept[side])] == kept[side], side
    observed = hand_to_result(target)
    scenario = players[0].scenario
    assert len(observed) == len(scenario["events"]) and not players[0].skipped
    assert resumed_mismatches(observed, scenario, from_start=True) == []
    c = target.request("counters")
    assert (c["cycles"], c["hands"]) == (1, 1) and c["tiles_fed"][0] >= table.stacks * 2, c
    assert target.in_table(lambda: tiles_held(table)) == want


def _gap_in_lane_1(table):
    """A tile taken out of the middle of lane 1's wall while the power is
    off (into the tray): a gap the lane cannot finish."""
    wall = table.lanes[1].wall
    j = len(wall.tiles) // 2
    table.plate.queue.append(wall.tiles[j])
    wall.tiles[j] = None


@pytest.mark.needs_sim
def test_a_lane_with_a_gap_is_emptied_alone_and_the_others_keep_their_walls(make_target):
    target = make_target(seed=8)
    table = target.table
    want = table.config.tile_sets * table.rules.n_tiles
    cut_power_when(target, lambda t: min(_stacked(t)) >= 12, _gap_in_lane_1)
    target.start()
    detail = _mid_build(target)
    assert detail.get("lane") == [1], detail
    kept = [list(lane.wall.tiles) for lane in table.lanes]
    target.in_table(lambda: table.technician_empties_lane(1))          # lane 1 alone
    assert target.in_table(lambda: tiles_held(table)) == want
    target.drain()
    target.request("clear")
    target.wait_state("dealer")                              # built, audited, lifted
    for side in (0, 2, 3):
        assert table.lanes[side].walls[-2].tiles[:len(kept[side])] == kept[side], side
    assert target.in_table(lambda: tiles_held(table)) == want


@pytest.mark.needs_sim
def test_a_lane_left_with_its_gap_is_caught_by_the_audit(make_target):
    """The technician clears without emptying the lane named: the build
    goes on and the audit finds the set wrong, as for any build."""
    target = make_target(seed=8)
    table = target.table
    cut_power_when(target, lambda t: min(_stacked(t)) >= 12, _gap_in_lane_1)
    target.start()
    assert _mid_build(target).get("lane") == [1]
    target.drain()
    target.request("clear")
    ev = target.wait_event(lambda e: e["ev"] == "fault", "the audit's fault")
    assert ev["name"] in ("missing_tile", "extra_tile", "lane_jam"), ev


@pytest.mark.needs_sim
def test_a_cut_while_the_next_set_is_built_under_a_hand_resumes_both(make_target):
    """Two tile sets: the cut comes in a hand while the next set is half
    built in the lanes below it. The hand comes back (resume.py) and is
    played to its end as its replay; then the lanes are read again and the
    build goes on from what they hold (each wall kept), the set is lifted,
    and the next hand on it is its replay from its first state."""
    from host_tools.sim.hand_players import Parlour
    seats = []
    target = make_target(seed=4, setup=lambda table: seats.append(Parlour(table, seed=4)))
    table = target.table
    parlour = seats[0]
    want = table.config.tile_sets * table.rules.n_tiles
    kept = []

    def cut():
        table.power_cut()
        kept.extend(list(lane.wall.tiles) for lane in table.lanes)
    target.when_table(lambda: len(parlour.hands) == 1 and parlour.hands[0].scenario is not None
                      and table.display.dice is not None and 20 <= sum(_stacked(table)) <= 100,
                      cut)
    target.start()
    observed = []
    while True:
        ev = target.next_event()
        assert ev is not None and ev["ev"] != "fault", ev
        if ev["ev"] in ("hand", "hand_resumed"):
            st = public_state(ev) if ev["ev"] == "hand" else {"op": "resumed"}
            if ev["ev"] == "hand_resumed":
                from engine_core.replay import from_wire
                st.update(from_wire(ev))
            st["n"] = ev["n"]
            observed.append(st)
        elif ev["ev"] == "result":
            break
    assert kept and [st["op"] for st in observed].count("resumed") == 1, observed[-3:]
    assert resumed_mismatches(observed, parlour.hands[0].scenario) == []
    target.wait_event(lambda e: e["ev"] == "dice" and not e.get("gold"), "the next hand's dice")
    for side, lane in enumerate(table.lanes):     # the set built on what the lanes held
        assert lane.walls[-2].tiles[:len(kept[side])] == kept[side], side
    second = hand_to_result(target)
    assert len(parlour.hands) == 2
    scenario = parlour.hands[1].scenario
    assert len(second) == len(scenario["events"])
    assert resumed_mismatches(second, scenario, from_start=True) == []
    assert target.in_table(lambda: tiles_held(table)) == want
