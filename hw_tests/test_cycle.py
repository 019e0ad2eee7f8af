"""A full table cycle: build four walls in parallel, audit, lift, dealer, dice."""

import json

import pytest

from hw_tests.harness import HEAP_BUDGET, assert_walls_are_the_set, lifter_conflicts

SEEDS = (1, 2, 3, 7, 11)
BOUND_SLACK = 0.10         # the cycle ends within 10 % of the model's lower bound


def assert_cycle_ok(cycle, per_side=36):
    assert cycle.ok, "the cycle did not reach the dice: %r" % cycle
    assert cycle.started is not None, cycle
    assert cycle.walls["tiles_per_side"] == [per_side] * 4, cycle.walls
    assert 1 <= cycle.dice["a"] <= 6 and 1 <= cycle.dice["b"] <= 6, cycle.dice
    assert 0 <= cycle.dice["dealer"] <= 3, cycle.dice
    states = [e["state"] for e in cycle.all("state")]
    assert states[:1] == ["building"] and states[-2:] == ["dealer", "rolling"], states
    assert "lifting" in states, states


def test_a_cycle_over_the_link(target):
    """Any target, a real table too (someone presses the dealer's key)."""
    cycle = target.run_cycle()
    assert_cycle_ok(cycle)
    st = target.status()
    assert st["state"] == "in_hand" and st["cycles"] == 1 and st["fault"] is None
    assert st["dice"] == [cycle.dice["a"], cycle.dice["b"]]
    assert st["dealer"] == cycle.dice["dealer"]
    # After the dice the empty platforms go back down for the next set.
    assert all(l in ("top", "lowering", "bottom") for l in st["lifters"]), st["lifters"]


@pytest.mark.needs_table
@pytest.mark.parametrize("seed", SEEDS)
def test_a_cycle_matches_the_physical_table(make_target, seed):
    target = make_target(seed=seed)
    cycle = target.run_cycle()
    assert_cycle_ok(cycle)
    table = target.table
    # The walls the firmware reports are the walls on the table top: 36
    # tiles a side, the whole set, each tile once.
    assert_walls_are_the_set(target, 36)
    # Close to what an ideal controller would do with this run's tile flow.
    bound = table.lower_bound_ms(start_time=cycle.started["t"], build=0)
    assert bound is not None
    took = cycle.table_time_ms
    assert bound <= took <= bound * (1 + BOUND_SLACK), (
        "table time %d ms, lower bound %d ms (+%.1f %%): %s"
        % (took, bound, 100.0 * (took / bound - 1),
           json.dumps(table.lower_bound(start_time=cycle.started["t"], build=0))))
    # The dealer who rolled is the seat whose key the virtual players pressed.
    presses = [p for p in table.players.presses if p[0] <= cycle.dice["t"]]
    assert [seat for _, seat in presses] == [cycle.dice["dealer"]], presses
    assert table.display.dice == (cycle.dice["a"], cycle.dice["b"], 0)
    assert table.display.dealer_seat == cycle.dice["dealer"]
    assert lifter_conflicts(target) == []
    assert table.errors == [], table.errors


@pytest.mark.needs_sim
def test_the_luoyuan128_ruleset_builds_32_tiles_a_side(make_target, tmp_path):
    from host_tools.sim.launcher import CONFIG
    cfg = json.loads(CONFIG.read_text())
    cfg["ruleset"] = "luoyuan128"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    target = make_target(seed=5, config_path=path)
    assert target.request("config_get", key="ruleset")["value"] == "luoyuan128"
    cycle = target.run_cycle()
    assert_cycle_ok(cycle, per_side=32)
    assert_walls_are_the_set(target, 32)
    assert target.status()["tiles_per_side"] == [32] * 4


@pytest.mark.needs_table
@pytest.mark.parametrize("seed", (1, 7))
def test_the_four_lanes_stack_in_parallel_while_the_plate_turns(make_target, seed):
    target = make_target(seed=seed)
    cycle = target.run_cycle()
    assert_cycle_ok(cycle)
    t0, t1 = cycle.started["t"], cycle.walls["t"]
    log = [e for e in target.table_log() if t0 <= e[0] <= t1]
    stacked = {lane: [e[0] for e in log if e[1] == "lane" and e[2] == lane and e[3] == "stacked"]
               for lane in range(4)}
    assert all(len(stacked[lane]) == 36 for lane in range(4)), {
        k: len(v) for k, v in stacked.items()}
    # Each lane's stacking interval overlaps every other's: at the latest
    # first tile, no lane had stacked its last one yet.
    latest_first = max(s[0] for s in stacked.values())
    earliest_last = min(s[-1] for s in stacked.values())
    assert latest_first < earliest_last, (latest_first, earliest_last)
    # ... and they overlap for most of the build, not for a moment.
    span = max(s[-1] for s in stacked.values()) - min(s[0] for s in stacked.values())
    assert earliest_last - latest_first > 0.5 * span, (latest_first, earliest_last, span)
    # The plate turned from before the first tile to after the last one, and
    # every lane's feed motor was on while its lane stacked.
    changes = [c for c in target.output_changes(since=t0, until=t1)]
    plate = [(t, v) for t, label, v in changes if label == "plate_motor"]
    assert plate and plate[0][1] > 0, plate
    on_at = plate[0][0]
    off_at = next((t for t, v in plate if v == 0), None)
    assert on_at < min(s[0] for s in stacked.values())
    assert off_at is None or off_at >= max(s[-1] for s in stacked.values()), (off_at, plate)
    for lane in range(4):
        feed = [(t, v) for t, label, v in changes if label == "lane_feed:%d" % lane]
        assert feed and feed[0][1] == 1 and feed[0][0] < stacked[lane][0], (lane, feed)
        off = [t for t, v in feed if v == 0]
        assert not off or off[0] >= stacked[lane][-1], (lane, feed, stacked[lane][-1])
    assert target.table.counters()["revolutions"] >= (t1 - t0) // 1000 // 2


@pytest.mark.needs_sim
@pytest.mark.parametrize("seed", [3, 16])
def test_a_cycle_fits_the_heap_budget(make_target, seed):
    target = make_target(seed=seed, heap=HEAP_BUDGET)
    cycle = target.run_cycle()
    assert_cycle_ok(cycle)
    assert_walls_are_the_set(target, 36)
    # Every service answer fits too, asked more than once (an answer that
    # brought code back onto the heap would run out on the second round).
    keys = target.request("config_get")["keys"]
    for _ in range(3):
        for key in keys:
            assert target.request("config_get", key=key)["key"] == key
        assert target.request("faults")["ok"] and target.status()["ok"]
    assert "MemoryError" not in target.sim.firmware_log()
