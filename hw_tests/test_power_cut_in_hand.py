"""A power cut during a hand loses nothing (controller/resume.py,
docs/reliability.md, Resuming a hand), on the virtual table (the real
firmware under MicroPython; virtual time, nothing sleeps).

A cut at each moment of a hand (the deal, the flower rounds, the gold's
turn, a kong's key before its replacement, the final group, the grace
before a draw): the table reads the walls at boot, announces
`hand_resumed`, and every state from there on is the replay's
(engine_core.replay) of what the players did. A cut while the dice roll:
the dealer's key again, the walls checked whole. Each reason the hand
cannot come back, made on purpose while the power is off: power_lost with
that reason, never a guess."""

import os

import pytest

from engine_core.replay import build, state
from firmware.controller.saved_state import RECORD_FILE
from firmware.sealed import Sealer
from host_tools.cli.ops import run_hand
from host_tools.sim.hand_players import HandPlayers
from host_tools.sim.tileset import Tile
from hw_tests.harness import save_record, saved_record


def _tile_times(players, op, k=0):
    """The virtual times of the tiles (and key presses) of the k-th event
    `op` of the plan; [] if there is none."""
    idx = [i for i, ev in enumerate(players.scenario["events"]) if ev["op"] == op]
    if len(idx) <= k:
        return []
    return [t for t, i, _slot, _kind in players.timeline if i == idx[k]]


def _phase_after(players, phase):
    """The time of the first tile taken once the replay is in `phase`."""
    hand = build(players.scenario)
    from engine_core.replay import apply
    for i, ev in enumerate(players.scenario["events"]):
        apply(hand, ev)
        if state(hand)["phase"] == phase:
            times = [t for t, j, slot, _ in players.timeline if j == i and slot is not None]
            if times:
                return times[0]
    return None


def _after_first(op):
    def when(players):
        times = _tile_times(players, op)
        return times[0] + 1 if len(times) > 1 else None
    return when


def _gold_tile(players):
    times = _tile_times(players, "reveal_gold")
    return times[-1] - 1 if times else None          # its last tile (the gold) still there


def _kong_key(players):
    times = _tile_times(players, "kong")             # the key, then the replacement
    return times[0] + 300 if times else None


def _final(players):
    t = _phase_after(players, "final")
    return t + 1 if t is not None else None


def _draw_grace(players):
    if not players.result or not players.result.get("draw"):
        return None
    ev = players.scenario["events"]
    last = [t for t, i, slot, _ in players.timeline if slot is not None]
    return last[-1] + 1000 if ev[-1]["op"] == "draw" and last else None


PHASES = [                       # (id, seed, when to cut, the phase resumed in)
    ("deal", 2, _after_first("deal"), ("new",)),
    ("flowers", 2, _after_first("replace_flowers"), ("dealt", "replaced")),
    ("gold", 2, _gold_tile, ("replaced", "play")),
    ("kong", 1, _kong_key, ("play",)),
    ("final", 2, _final, ("final",)),
    ("draw", 2, _draw_grace, ("final", "draw")),
]


@pytest.mark.needs_sim
@pytest.mark.parametrize("name,seed,when,phases", PHASES, ids=[p[0] for p in PHASES])
def test_a_hand_cut_at_each_moment_comes_back_as_its_replay(make_target, name, seed, when,
                                                            phases):
    players = []
    target = make_target(seed=seed, setup=lambda table: players.append(
        HandPlayers(table, seed=seed, cut_on=when)))
    out = run_hand(target.sim, target.link, players[0], timeout_s=target.hand_wall_s)
    p = players[0]
    assert p.cuts, "the players never cut: %s" % name
    resumed = [st for st in out["observed"] if st["op"] == "resumed"]
    assert out["resumed"] is True and len(resumed) == 1, {k: out.get(k) for k in (
        "resumed", "fallback", "faults")}
    assert resumed[0]["phase"] in phases, (name, resumed[0])
    assert out["replay_ok"], out["mismatches"][:3]
    assert out["ok"], {k: out[k] for k in out if k not in ("scenario", "observed")}
    assert target.sim.restarts == 1


@pytest.mark.needs_sim
def test_a_cut_while_the_dice_roll_rolls_them_again(make_target):
    """Cut while the dealer's dice roll: the walls read whole, the dealer's
    key again (no power_lost), the hand then played and followed."""
    players = []
    target = make_target(seed=3, setup=lambda table: players.append(HandPlayers(table, seed=3)))
    table = target.table
    target.when_table(lambda: table.display.dice is not None and table.display.dice[2],
                      table.power_cut)
    out = run_hand(target.sim, target.link, players[0], cuts=True,
                   timeout_s=target.hand_wall_s)
    assert target.sim.restarts == 1 and players[0].cuts
    assert not out["faults"] and out["ok"], {k: out[k] for k in out if k != "scenario"}
    rolls = [v for _, what, v in table.display.history if what == "dice" and v[2]]
    assert len(rolls) >= 2, rolls                    # rolled, cut, rolled again
    assert out["resumed"] is None and out["fallback"] is None


def _sorted_and_idle(target):
    target.in_table(target.table.technician_sorts_the_sets)
    target.drain()
    target.request("clear")
    target.wait_state("idle")


def _record_with(sim, **changes):
    """The record changed by someone holding the table's key: sealed
    again, so only its contents can be refused."""
    def edit(table):
        rec = saved_record(sim)
        rec.update(changes)
        save_record(sim, rec)
    return edit


def _forged(sim):
    """The record rewritten by someone without the table's key: its tiles
    changed, sealed with another key (what a flash reader could make)."""
    def forge(table):
        rec = saved_record(sim)
        rec["tiles"] = rec["tiles"][2:] + rec["tiles"][:2]
        save_record(sim, rec, seal=Sealer(bytes(32), os.urandom, b"hand"))
    return forge


def _unknown_tile(table):
    """The tile at the middle slot of a wall replaced by one whose tag the
    table does not know."""
    side = table.top_walls[1]
    slot = sorted(side)[len(side) // 2]
    side[slot] = Tile(side[slot].tid, 7, 3)


def _swap_two(table):
    side = table.top_walls[2]
    a, b = sorted(side)[3], sorted(side)[-3]
    if side[a].tid == side[b].tid:
        b = sorted(side)[-4]
    side[a], side[b] = side[b], side[a]


def _take_middle(table):
    side = table.top_walls[3]
    table.players_take(sorted(side)[len(side) // 2])


@pytest.mark.needs_sim
def test_each_reason_a_hand_cannot_come_back_is_named(make_target):
    """Cycle after cycle on one table, each cut with one thing the
    controller cannot be sure of done while the power is off: power_lost
    with that reason, the dealer kept; cleared, the next cycle goes on."""
    target = make_target(seed=5)
    table = target.table
    cases = [
        ("not_whole", "dealer", _take_middle),
        ("unexplained", "in_hand", _take_middle),
        ("mismatch", "in_hand", _swap_two),
        ("reader", "in_hand", lambda t: t.inject("rfid_timeout")),
        ("record_full", "in_hand", _record_with(target.sim, full=1)),
        ("put_back", "in_hand", _record_with(target.sim, takes=[["put_back", 3, 0, 0]])),
        ("record", "in_hand", _record_with(target.sim, n=99)),
        ("record", "in_hand", _forged(target.sim)),
        ("unknown_tag", "in_hand", _unknown_tile),   # last: a tile of the set is gone for it
    ]
    for reason, where, while_off in cases:
        target.drain()
        target.start()
        target.wait_state(where)
        if where == "in_hand":
            target.wait_table_time(500)              # the record written
        dealer = target.status()["dealer"]
        restarts = target.sim.restarts

        saved = []

        def cut():
            table.power_cut()
            if while_off is not None:
                while_off(table)
            saved.append(target.sim.stored(RECORD_FILE))
        target.in_table(cut)
        ev = target.wait_event(lambda e: e["ev"] in ("fault", "hand_resumed") or (
            e["ev"] == "state" and e["state"] == "idle"), "the boot after the cut")
        assert target.sim.restarts == restarts + 1
        assert (ev["ev"], ev.get("name"), ev.get("detail", {}).get("reason")) == (
            "fault", "power_lost", reason), (reason, ev)
        assert target.status()["dealer"] == dealer, reason
        assert target.sim.stored(RECORD_FILE) == saved[0], reason      # the record as it was
        if reason == "reader":
            target.in_table(lambda: table.clear_fault("rfid_timeout"))
        if reason != "unknown_tag":
            _sorted_and_idle(target)
