"""The soak (host_tools/qa/soak/) as `make test` runs it: 200 hands with
faults, on three tables at once (seeds 3, 4, 5), each table checked in
full: every hand equal to its replay, nothing stuck, no firmware error,
no restart, the live link fuzzed after every hand and answered, and the
controller's counters equal to the virtual table's own counts. `make soak`
runs the long one (docs/reliability.md). About 2 minutes on two free
cores."""

import copy

import pytest

from host_tools.qa.soak import BriskPlayers, soak_tables, sum_tables
from host_tools.qa.soak.hand_check import players_of
from host_tools.tests.vtable_helpers import Ctl
from host_tools.sim import VirtualTable
from host_tools.sim.hand_players import HandPlayers, Parlour

HANDS = 200
TABLES = 3


@pytest.mark.long
def test_200_hands_with_faults_on_three_tables_pass_the_soak():
    out = soak_tables(HANDS, TABLES, seed=3, fault_rate=0.2)
    assert out["ok"], {k: v for k, v in out.items() if k != "tables"}
    assert out["hands"] == HANDS and out["complete"]
    assert out["results"]["win"] + out["results"]["draw"] == HANDS
    assert [t["hands"] for t in out["tables"]] == [67, 67, 66]
    assert out["seeds"] == [3, 4, 5]
    for t in out["tables"]:
        # Each table on its own: the sums could hide a difference in each.
        assert t["ok"] and t["counters_equal"], t
        assert t["counters"]["tiles_fed"] == t["table_counts"]["tiles_fed"]
        # One set more lifted than hands played: the next hand's walls.
        assert t["counters"]["lifts"] == t["table_counts"]["lifts"] == t["hands"] + 1
        assert t["counters"]["hands"] == t["hands"]
        # Every fault the technician injected was reported and repaired
        # (a second fault may follow from one: a jam's missing_tile), but
        # for one injected after the last result, which nobody waits for.
        assert t["faults"] >= t["injected"] - 1 and t["injected"] >= 1, t
        assert t["link_fuzz"]["live"]["answered"] == t["hands"]
    # The brisk players leave the next set's build inside the hand, so
    # faults still land while the table builds during play, and in play.
    assert out["landed"]["building_in_hand"] >= 1, out["landed"]
    assert out["landed"]["in_hand"] >= 1, out["landed"]
    assert out["injected"] >= 20
    assert out["link_fuzz"]["live"]["frames"] == 50 * HANDS


def _table(seed, hands=10):
    """A passing table's summary, in the shape soak() gives it."""
    fed = [36 * (hands + 1)] * 4
    return {"seed": seed, "hands": hands, "asked": hands, "complete": True,
            "ok": True, "checks_ok": True, "results": {"win": 4, "draw": hands - 4},
            "faults": 1, "injected": 1, "mismatches": 0, "stuck": 0, "firmware_errors": 0,
            "restarts": 0, "traceback": False, "virtual_s": 500.0, "counters_equal": True,
            "landed": {"building_in_hand": 1, "building": 0, "in_hand": 0, "other": 0},
            "counters": {"cycles": hands, "hands": hands, "lifts": hands + 1,
                         "tiles_fed": list(fed)},
            "table_counts": {"lifts": hands + 1, "tiles_fed": list(fed), "tipped": [0] * 4,
                             "firmware_errors": 0},
            "link_fuzz": {"live": {"frames": 50 * hands, "bursts": hands, "answered": hands,
                                   "garbage": 100, "bad_crc": 1, "errors": 1,
                                   "failures": [], "ok": True}}}


def test_the_totals_add_the_tables_and_fail_when_any_table_fails():
    tables = [_table(1), _table(2)]
    out = sum_tables(20, tables, 1.0, None)
    assert out["ok"] and out["hands"] == 20 and out["faults"] == 2
    assert out["counters"]["tiles_fed"] == [2 * 396] * 4
    assert out["link_fuzz"]["frames"] == 1000
    # One table's counters off by a tile: the total fails, although the
    # tables' sums could be made to agree.
    bad = copy.deepcopy(tables)
    bad[1]["counters_equal"] = bad[1]["ok"] = bad[1]["checks_ok"] = False
    assert not sum_tables(20, bad, 1.0, None)["ok"]
    # A table that died without its summary fails the soak.
    crashed = [tables[0], {"seed": 2, "ok": False, "checks_ok": False, "hands": 0,
                           "crashed": "exit -9"}]
    out = sum_tables(20, crashed, 1.0, None)
    assert not out["ok"] and not out["checks_ok"] and out["hands"] == 10
    # Fewer hands than asked (--max-wall): every check may pass, the run
    # is not complete and so not ok.
    short = [_table(1), _table(2, hands=5)]
    short[1]["asked"], short[1]["complete"], short[1]["ok"] = 10, False, False
    out = sum_tables(20, short, 1.0, None)
    assert out["checks_ok"] and not out["complete"] and not out["ok"]
    # The fuzz in process failing fails the soak.
    assert not sum_tables(20, tables, 1.0, {"frames": 10, "ok": False})["ok"]


def _planned(cls, seed):
    """A hand planned by `cls` on a virtual table's walls (virtual time
    only, no firmware: the build and lift of vtable_helpers.py's `Ctl`), with
    many kongs and stray takes."""
    tv = VirtualTable(seed)
    hp = cls(tv, seed, kong_rate=0.3, take_rate=0.15, win_rate=0,
             dealer=seed % 4, dice=[1 + seed % 6, 1 + seed * 5 % 6])
    ctl = Ctl(tv)
    ctl.start_build()
    ctl.build_and_audit()
    assert ctl.lift(True)
    ctl.wait_ms(20)
    return hp


def _gaps(hp):
    """(op, kind of the first entry, ms from the previous event's last
    entry to this event's first, previous op) for every event after the
    gold; and the deal's gaps."""
    firsts, lasts = {}, {}
    for t, index, _slot, kind in hp.timeline:
        firsts.setdefault(index, (t, kind))
        lasts[index] = t
    events = hp.scenario["events"]
    gold = next(i for i, e in enumerate(events) if e["op"] == "reveal_gold")
    out = [(events[i]["op"], firsts[i][1], firsts[i][0] - lasts[i - 1], events[i - 1]["op"])
           for i in sorted(firsts) if i > gold]
    deal = [t for t, index, _s, _k in hp.timeline if index == 0]
    return out, [b - a for a, b in zip(deal, deal[1:])]


@pytest.mark.parametrize("seed", [4, 14])
def test_brisk_players_hurry_only_the_draws(seed):
    brisk, deal = _gaps(_planned(BriskPlayers, seed))
    assert set(deal) == {BriskPlayers.deal_ms}
    kinds = {op for op, _, _, _ in brisk}
    assert {"draw", "kong", "take"} <= kinds, kinds      # the plan has them all
    lo, hi = BriskPlayers.think_ms
    klo, khi = BriskPlayers.key_think_ms
    after_take = BriskPlayers.after_take_ms
    grace = VirtualTable(seed).config.draw_grace_ms
    for op, first, gap, prev in brisk:
        extra = after_take if prev == "take" else 0
        if op == "draw" and gap == grace:
            continue                                       # the draw called at the end
        if op == "draw":
            assert lo + extra <= gap <= hi + extra, (op, gap, prev)
        else:
            # A kong's key press or a stray take: the parlour's pause.
            assert first in ("press", "take"), (op, first)
            assert klo + extra <= gap <= khi + extra, (op, gap, prev)
    # The parlour's players keep their pace (make run, the bench).
    parlour, deal = _gaps(_planned(HandPlayers, seed))
    assert set(deal) == {HandPlayers.deal_ms}
    assert all(gap >= HandPlayers.think_ms[0] for op, _, gap, _ in parlour), parlour


def test_a_result_is_checked_against_the_players_of_its_own_walls():
    # The table runs ahead of the soak's loop: when the loop reads a hand's
    # result, the next set may be up, with its players the parlour's
    # current. The result belongs to the last walls up before it.
    parlour = Parlour(VirtualTable(1), seed=1)
    parlour.walls_up(30000)
    parlour.walls_up(150000)
    first, second = parlour.hands
    assert players_of(parlour, 140000) is first
    assert players_of(parlour, 150000) is second
    assert players_of(parlour, 260000) is second
    assert parlour.current is second
