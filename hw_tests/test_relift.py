"""A power cut while the walls rise (controller/resume.py, docs/reliability.md,
A cut while building or lifting), on the virtual table (the real firmware
under MicroPython; virtual time, nothing sleeps).

Cut at the start, the middle and the end of the rise: the table boots
with power_lost `mid_lift` and moves nothing until the technician's
`clear`; then the lift goes on, the walls are read at the top and taken
only if they are the set the builder's audit lifted, slot for slot; the
dealer's key, and the hand played after it is its replay. No tile is
lost. A wall that comes up short or in another order falls back with its
reason (`not_whole`, `mismatch`), never a guess."""

import pytest

from firmware.controller.saved_state import WALLS_FILE
from host_tools.cli.ops import resumed_mismatches
from host_tools.sim.hand_players import HandPlayers
from hw_tests.harness import boot_after, cut_power_when, hand_to_result

LIFTING_AT = (0.005, 0.5, 0.99)     # of the rise's travel: in the bottom switch's lever
                                    # travel (it still reads closed), the middle, near the top


def tiles_held(table):
    return table.tiles_held()


def _rising_at(share):
    """The walls rising, `share` of the way up (a test of the virtual table)."""
    def rising(table):
        lifter = table.lifters[0]
        return lifter.direction() > 0 and lifter.pos >= share * lifter.top
    return rising


@pytest.mark.needs_sim
@pytest.mark.parametrize("share", LIFTING_AT)
def test_a_cut_while_the_walls_rise_is_lifted_on_clear_and_its_hand_is_the_replay(
        make_target, share):
    players = []
    target = make_target(seed=7, setup=lambda table: players.append(HandPlayers(table, seed=7)))
    table = target.table
    restarts = target.sim.restarts
    cut = cut_power_when(target, _rising_at(share))
    target.start()
    target.wait_state("lifting")
    want = table.config.tile_sets * table.rules.n_tiles
    ev = target.wait_event(lambda e: e["ev"] == "fault", "power_lost")
    assert (ev["name"], ev["detail"]) == ("power_lost", {"reason": "mid_lift"}), ev
    assert target.sim.restarts == restarts + 1 and cut
    # Nothing moves unasked after a boot: a quiet virtual second.
    boot = boot_after(target, cut[0][0])
    target.wait_table_time(1000)
    assert [c for c in target.output_changes(since=boot) if c[2]] == []
    assert target.in_table(lambda: tiles_held(table)) == want
    st = target.status()
    assert st["state"] == "fault", st
    dealer = st["dealer"]
    target.drain()
    assert target.request("clear")["cleared"] == 41
    target.wait_state("resuming")
    target.wait_state("dealer")
    assert target.status()["dealer"] == dealer
    c = target.request("counters")
    assert (c["lifts"], c["cycles"]) == (1, 0), c     # the lift counted once, when it began
    observed = hand_to_result(target)
    scenario = players[0].scenario
    assert len(observed) == len(scenario["events"]) and not players[0].skipped
    assert resumed_mismatches(observed, scenario, from_start=True) == []
    c = target.request("counters")
    assert (c["cycles"], c["hands"]) == (1, 1), c
    assert target.in_table(lambda: tiles_held(table)) == want


def _take_one(table):
    wall = table.lanes[2].wall
    j = len(wall.tiles) // 2
    table.pile.append(wall.tiles[j])         # on the table top, counted
    wall.tiles[j] = None


def _swap_two(table):
    tiles = table.lanes[1].wall.tiles
    a = 3
    b = next(j for j in range(len(tiles) - 1, a, -1) if tiles[j].tid != tiles[a].tid)
    tiles[a], tiles[b] = tiles[b], tiles[a]


@pytest.mark.needs_sim
def test_a_lift_that_comes_up_other_than_it_went_falls_back_with_its_reason(make_target):
    """A tile taken from a rising wall, or two swapped, while the power is
    off: the walls read at the top after the clear are not what the audit
    lifted; the file of the walls lifted gone: what was lifted is not
    known. power_lost with the reason, the dealer kept; then sorted,
    cleared, and the next cycle goes on."""
    target = make_target(seed=5)
    table = target.table
    want = table.config.tile_sets * table.rules.n_tiles
    def _no_walls_file(_table):
        target.sim.change_while_off({WALLS_FILE: None})

    for reason, while_off in (("not_whole", _take_one), ("mismatch", _swap_two),
                              ("record", _no_walls_file)):
        target.drain()
        cut_power_when(target, _rising_at(0.5), while_off)
        target.start()
        ev = target.wait_event(lambda e: e["ev"] == "fault", "power_lost")
        assert ev["detail"] == {"reason": "mid_lift"}, ev
        dealer = target.status()["dealer"]
        target.drain()
        target.request("clear")
        ev = target.wait_event(lambda e: e["ev"] == "fault" or (
            e["ev"] == "state" and e["state"] == "dealer"), "the walls read")
        assert (ev["ev"], ev.get("name"), ev.get("detail")) == (
            "fault", "power_lost", {"reason": reason}), (reason, ev)
        assert target.status()["dealer"] == dealer
        assert target.in_table(lambda: tiles_held(table)) == want
        target.in_table(table.technician_sorts_the_sets)
        target.drain()
        target.request("clear")
        target.wait_state("idle")
    target.start()                           # the next cycle: built, lifted, read
    target.wait_state("dealer")
