"""Virtual players play one hand on the walls in play (host_tools/sim/hand_players.py).

Virtual time only: a scripted build and lift (the `Ctl` of vtable_helpers.py),
then the table's clock runs to the end of the hand.
"""

import pytest

from engine_core import tiles
from engine_core.replay import apply, build, replay
from host_tools.tests.vtable_helpers import CAP, Ctl, side_slots, tid_of
from host_tools.sim import VirtualTable
from host_tools.sim.hand_players import HandPlayers

# seed, ruleset (luoyuan144: the same walls, the gold by the dice), stray-take rate
SEEDS = [(4, "fuzhou144", 0.01), (14, "fuzhou144", 0.01), (11, "luoyuan144", 0.1)]
ALL_SLOTS = set(range(4 * CAP))


def play(seed, ruleset="fuzhou144", take_rate=0.01):
    """(table, ctl, players, level-0 scans, walls-up time) after a full hand."""
    tv = VirtualTable(seed)
    # No firmware here to roll the dice: the players are told the dealer and
    # dice, and play to the end (nobody wins, so every hand ends as a draw).
    hp = HandPlayers(tv, seed, ruleset=ruleset, take_rate=take_rate, win_rate=0,
                     dealer=seed % 4, dice=[1 + seed % 6, 1 + seed * 5 % 6])
    ctl = Ctl(tv)
    ctl.start_build()
    scans = ctl.build_and_audit()
    assert hp.scenario is None and hp.timeline == [] and tv.players.presses == []
    assert ctl.lift(True)
    ctl.wait_ms(20)
    assert hp.scenario is not None and hp.taken == []
    before = {s: dict(tv.top_walls[s]) for s in range(4)}    # the walls in play
    tv.advance_to(hp.end_time)
    ctl.tick()
    assert hp.done and not hp.abandoned and hp.skipped == []
    return tv, ctl, hp, scans, before


def engine_slots(scn):
    """The physical slots the rules core takes, event by event, in order."""
    hand = build(scn)
    took = []
    remove = hand.wall.remove
    hand.wall.remove = lambda p, how: (took.append(p), remove(p, how))
    for ev in scn["events"]:
        apply(hand, ev)
    return [hand.wall.geo.slot_of_pos[p] for p in took]


@pytest.fixture(scope="module")
def hands():
    return {seed: play(seed, rs, tr) for seed, rs, tr in SEEDS}


@pytest.mark.parametrize("seed", [s for s, _, _ in SEEDS])
def test_the_scenario_is_the_real_walls_and_replays_to_a_draw(hands, seed):
    tv, ctl, hp, scans, _ = hands[seed]
    scn = hp.scenario
    want = [None] * (4 * CAP)
    for entries in scans.values():
        for slot, uid in entries.items():
            want[slot] = tiles.CODES[tid_of(uid)]
    assert scn["tiles"] == want                     # read from the table, not invented
    assert scn["dealer"] == hp.dealer and scn["dice"] == hp.dice
    states = replay(scn)
    assert all("error" not in st for st in states)
    assert states[-1]["phase"] == "draw"
    assert [e["op"] for e in scn["events"][:3]] == ["deal", "replace_flowers", "reveal_gold"]
    assert ("dice" in scn["events"][2]) == (scn["ruleset"] == "luoyuan144")


@pytest.mark.parametrize("seed", [s for s, _, _ in SEEDS])
def test_the_tiles_leave_the_top_walls_in_the_engines_order(hands, seed):
    tv, ctl, hp, _, before = hands[seed]
    removed = [slot for _, slot, _ in hp.taken]
    assert removed == engine_slots(hp.scenario)
    assert removed == [slot for _, _, slot, kind in hp.timeline if slot is not None]
    times = [t for t, _, _ in hp.taken]
    assert times == sorted(times) and times == [t for t, _, s, _ in hp.timeline if s is not None]
    assert all(tile is before[slot // CAP][slot] for _, slot, tile in hp.taken)
    left = ALL_SLOTS - set(removed)
    for side in range(4):
        seen = ctl.scan(side, 1)
        assert set(seen) == left & side_slots(side)
        assert all(before[side][slot].uid == uid for slot, uid in seen.items())
    # every kong's key press comes just before its replacement
    kongs = [i for i, e in enumerate(hp.scenario["events"]) if e["op"] == "kong"]
    for i in kongs:
        rows = [r for r in hp.timeline if r[1] == i]
        assert rows[0][3] == "press" and rows[0][0] < rows[1][0] <= rows[0][0] + 1500
        seat = hp.scenario["events"][i]["seat"]
        assert (rows[0][0], seat) in tv.players.presses


def test_kongs_flower_chains_and_stray_takes_occur(hands):
    kongs = takes = chains = 0
    for tv, ctl, hp, _, _ in hands.values():
        ops = [e["op"] for e in hp.scenario["events"]]
        kongs += ops.count("kong")
        takes += ops.count("take")
        per_event = {}
        for _, i, slot, kind in hp.timeline:
            if slot is not None and kind in ("draw", "kong"):
                per_event[i] = per_event.get(i, 0) + 1
        chains += sum(1 for n in per_event.values() if n >= 2)
        assert replay(hp.scenario)[-1]["irregular"] == ops.count("take")
    assert kongs >= 2 and takes >= 1 and chains >= 2, (kongs, takes, chains)


def test_the_same_seed_plays_the_same_hand(hands):
    seed, ruleset, rate = SEEDS[0]
    _, _, again, _, _ = play(seed, ruleset, rate)
    _, _, first, _, _ = hands[seed]
    assert again.scenario == first.scenario and again.timeline == first.timeline
    other = play(seed + 100, ruleset, rate)[2]
    assert other.scenario["tiles"] != first.scenario["tiles"]


@pytest.mark.parametrize("seed", [s for s, _, _ in SEEDS])
def test_nothing_is_taken_before_the_walls_are_all_up(hands, seed):
    tv, ctl, hp, _, _ = hands[seed]
    up = [t for t, src, _, what, *_ in tv.log if what.startswith("walls up")]
    assert up == [hp.walls_up_at]
    assert hp.timeline[0][0] > hp.walls_up_at
    assert all(t > hp.walls_up_at for t, _, _ in hp.taken)
    assert len(hp.taken) == 4 * CAP - sum(len(w) for w in tv.top_walls.values())


def test_a_wall_with_a_missing_tile_is_not_played():
    tv = VirtualTable(4, faults=["missing_tile:5z"])
    hp = HandPlayers(tv, 4)
    ctl = Ctl(tv)
    ctl.start_build()
    ctl.wait_ms(40000)                      # 143 tiles: one wall lacks a tile
    assert sum(ctl.counts) == 4 * CAP - 1
    for n in range(4):
        ctl.out("lane_feed", n, 0)
    ctl.out("plate_motor", None, 0)
    assert ctl.lift(True)
    ctl.wait_ms(20)
    assert hp.walls_up_at is not None and hp.scenario is None and hp.timeline == []
