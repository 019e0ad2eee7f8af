"""A cut as a concealed kong's gesture is read, or not yet: the virtual
players press it again after the boot when the cut comes before their
estimate of the controller's read (HandPlayers._press_in_flight: the last
release, key_double_ms, 50 ms more). Where the controller had read and
recorded it, the press again is refused (a seat's kong is taken until its
replacement is seen gone: docs/hand.md, Keys); where it had not, the press
again is the kong. Either way the resumed hand is its replay, with one
kong."""

import pytest

from host_tools.cli.ops import run_hand
from host_tools.sim.hand_players import HandPlayers
from hw_tests.test_power_cut_in_hand import _tile_times


def _after_kong_read(off):
    """`off` ms after the earliest instant the controller reads the first
    kong's gesture (its last release, then key_double_ms)."""
    def when(players):
        idx = [i for i, ev in enumerate(players.scenario["events"]) if ev["op"] == "kong"]
        if not idx:
            return None
        ev = players.scenario["events"][idx[0]]
        release = _tile_times(players, "kong")[0] + players.tap_ms
        if ev.get("kind") == "concealed":
            release += players.tap_ms + players.tap_gap_ms
        return release + players.table.config.key_double_ms + off
    return when


def _one_kong(make_target, off):
    players = []
    target = make_target(seed=1, setup=lambda table: players.append(
        HandPlayers(table, seed=1, cut_on=_after_kong_read(off))))
    out = run_hand(target.sim, target.link, players[0], timeout_s=target.hand_wall_s)
    assert players[0].cuts
    # The kong rebuilt from the record is no event of its own after the
    # boot (the rebuild publishes nothing): one at most.
    kongs = [st for st in out["observed"] if st["op"] == "kong"]
    assert len(kongs) <= 1 and out["replay_ok"], (len(kongs), out["mismatches"][:2])


@pytest.mark.needs_sim
@pytest.mark.parametrize("off", [5, 20, 28, 35, 45, 55])
def test_a_cut_as_a_kong_is_read_resumes_with_one_kong(make_target, off):
    _one_kong(make_target, off)
