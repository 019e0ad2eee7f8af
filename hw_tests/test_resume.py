"""What a hand needs to come back after a power cut, on the virtual table
(the real firmware under MicroPython; virtual time, nothing sleeps): the
dealer and the streak survive power cuts in a row; the hand's record
(hand.rec, sealed) follows the hand as engine_core.replay does, written a
few times a hand and never in the tick, and is erased at its end; a
damaged record of a cut hand is reported at boot, not guessed."""

import os
import tempfile

import pytest

from engine_core.replay import build, state
from engine_core.rulesets import load as load_ruleset
from firmware.controller import record_check
from firmware.fakes.follow import reserve_changes
from host_tools.cli.ops import run_hand
from host_tools.sim.hand_players import HandPlayers, Parlour
from firmware.controller.saved_state import RECORD_FILE
from hw_tests.harness import HEAP_BUDGET, saved_record, seal_of

FILES = ("counters.json", RECORD_FILE, "hand", "cycle")


class Writes:
    """The store's files looked at every TICK (between two loop turns of
    the firmware, whose writes are done by then): every write of a file
    is a new file (persist.py's rename; a flag made or removed), so a
    change of its inode, size or time is one write. `log`: (t, name, the
    record's contents for the hand's record, opened with the table's key)."""

    def __init__(self, target):
        self.store = target.sim.store
        self.sim = target.sim
        self.table = target.table
        self.seen = {name: self._stat(name) for name in FILES}
        self.log = []
        self._inner = self.table.advance_to
        self.table.advance_to = self._advance_to

    def _stat(self, name):
        try:
            st = os.stat(os.path.join(self.store, name))
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _advance_to(self, t):
        for name in FILES:
            now = self._stat(name)
            if now != self.seen[name]:
                self.seen[name] = now
                rec = None
                if name == RECORD_FILE and now is not None:
                    rec = saved_record(self.sim)
                self.log.append((self.table.now, name, rec))
        return self._inner(t)

    def between(self, t0, t1):
        return [w for w in self.log if t0 <= w[0] <= t1]


def _expected_changes(scn):
    """The reserve changes the replay makes of the players' scenario, as
    the record lists them, and the replay's state after each event."""
    hand = build(scn)
    states = []
    changes = reserve_changes(hand, scn["events"], lambda h: states.append(state(h)))
    return hand.rules, changes, states


@pytest.mark.needs_sim
def test_the_hands_record_follows_the_replay_and_is_written_a_few_times_a_hand(make_target):
    players = []
    # Seed 1: the players make kongs (hw_tests/test_hand.py's seeds); in the heap budget.
    target = make_target(seed=1, heap=HEAP_BUDGET,
                         setup=lambda table: players.append(HandPlayers(table, seed=1)))
    writes = Writes(target)
    out = run_hand(target.sim, target.link, players[0], timeout_s=target.hand_wall_s)
    assert out["ok"], {k: out[k] for k in out if k not in ("scenario", "observed")}
    scn = out["scenario"]
    rules, changes, states = _expected_changes(scn)
    assert [c for c in changes if c[0] == "kong"], "no kong in this hand: %r" % changes
    # The hand's walls: from the flag `hand` set at their lift to its
    # removal at the hand's end (the counters of the end written with it).
    target.wait_virtual(target.status()["uptime"] + 100)    # the hand end's writes done
    flag = [(t, rec) for t, name, rec in writes.log if name == "hand"]
    assert len(flag) == 2, writes.log
    hand_writes = writes.between(flag[0][0], flag[1][0])
    records = [rec for _, name, rec in hand_writes if name == RECORD_FILE and rec is not None]
    # Each record written: this hand's, checked by the boot's reader, its
    # changes the replay's so far; the gold the replay's once turned up.
    assert records, hand_writes
    for rec in records:
        assert record_check.check(rec, rules) is rec
        assert (rec["dealer"], rec["dice"], rec["ruleset"]) == (
            scn["dealer"], scn["dice"], scn["ruleset"])
        assert rec["changes"] == changes[:len(rec["changes"])], (rec, changes)
        assert rec["gold"] in (None, states[-1]["gold"]), rec
    assert records[0]["gold"] is None and records[0]["changes"] in ([], changes[:1])
    assert records[-1]["changes"] == changes and records[-1]["gold"] == states[-1]["gold"]
    assert records[-1]["n"] == target.request("counters")["hands"]
    # A write for the hand's start, the gold, each change after it (those
    # of one tick together: a flower quad at the gold's turn), no more.
    after_gold = [c for c in changes if c[0] in ("kong", "draw")]
    assert 2 <= len(records) <= 2 + len(after_gold), (len(records), changes)
    counts = {}
    for _, name, _ in hand_writes:
        counts[name] = counts.get(name, 0) + 1
    # The counters (the dealer with them) at the lift, the dice and the
    # hand's end; the flag `hand` set at the lift, cleared at the end, the
    # record erased with it.
    assert counts.get("counters.json") == 3 and counts.get("hand") == 2, counts
    assert writes.log[-1][1:] == (RECORD_FILE, None) or not os.path.exists(
        os.path.join(writes.store, RECORD_FILE)), writes.log[-3:]
    total = sum(counts.values())
    print("flash writes in hand (lift to result): %d %r; reserve changes %d"
          % (total, counts, len(changes)))
    assert total <= 8 + len(after_gold), counts


def _cut(target, table, while_off=None):
    """The power cut (and `while_off()` done while it is off): the boot's
    power_lost, its idle state, or the hand resumed."""
    target.drain()
    restarts = target.sim.restarts

    def cut():
        table.power_cut()
        if while_off is not None:
            while_off()
    target.in_table(cut)
    ev = target.wait_event(lambda e: (e["ev"] == "fault" and e["name"] == "power_lost")
                           or e["ev"] == "hand_resumed"
                           or (e["ev"] == "state" and e["state"] == "idle"), "the restart")
    assert target.sim.restarts == restarts + 1
    return ev


@pytest.mark.long
@pytest.mark.needs_sim
def test_the_dealer_and_the_streak_survive_three_power_cuts_in_a_row(make_target):
    """Hands until the dealer has won one (a streak to keep), then the power
    cut mid-hand, again while power_lost stands, again with the table idle
    after the repair: after each restart the same dealer and streak, and
    the next walls come up with that dealer's lamp and streak."""
    parlour = []
    target = make_target(seed=7, setup=lambda table: parlour.append(
        Parlour(table, seed=7, win_rate=0.05)))
    table = target.table
    link = target.link
    link.request("start")
    res = None
    for _ in range(10):
        res = link.wait_event(lambda e: e["ev"] == "result", timeout=target.hand_wall_s)
        if res["wins_in_row"] >= 1:
            break
    assert res["wins_in_row"] >= 1, res
    kept = (res["dealer"], res["wins_in_row"])
    dice = link.wait_event(lambda e: e["ev"] == "dice" and e["t"] > res["t"], timeout=120)
    assert dice["dealer"] == kept[0], (res, dice)
    target.wait_virtual(dice["t"] + 20000)               # well into the next hand
    hands = target.request("counters")["hands"]
    for k, why in enumerate(("in a hand", "in a hand, a tile taken while off",
                             "power_lost standing", "idle after the repair")):
        if k == 1:
            target.wait_virtual(target.status()["uptime"] + 5000)
        ev = _cut(target, table, while_off=(lambda: _take_middle(table)) if k == 1 else None)
        c = target.request("counters")
        assert "lost" not in c and c["unsaved"] == 0, (why, c)
        assert c["hands"] == hands
        assert target.sim.saved("counters.json")["dealer"] == list(kept), why
        assert target.status()["dealer"] == kept[0], why
        if k == 0:
            assert ev["ev"] == "hand_resumed", ev
            # The cut hand's record: this hand's, readable at boot.
            with tempfile.TemporaryDirectory() as folder:
                rec = record_check.cut_hand(seal_of(target.sim, b"hand"),
                                            target.sim.stored_copy(RECORD_FILE, folder),
                                            load_ruleset("fuzhou144"), hands)
            assert rec is not None and rec["dice"] == [dice["a"], dice["b"]], rec
            assert (rec["dealer"], rec["wins_in_row"]) == kept
        if k == 1:
            assert ev["ev"] == "fault" and ev["detail"]["reason"] == "unexplained", ev
        if k == 2:
            target.in_table(table.technician_sorts_the_sets)
            target.drain()
            target.request("clear")
            target.wait_state("idle")
    target.drain()
    link.request("start")
    again = link.wait_event(lambda e: e["ev"] == "dice", timeout=120)
    assert again["dealer"] == kept[0], again
    lamps = [v for _, what, v in table.display.history if what == "dealer"]
    assert lamps[-1] == (kept[0], max(0, kept[1] - 1)), lamps[-3:]


def _take_middle(table):
    """A player takes a tile in the middle of the walls still standing
    (neither head nor tail) while the power is off."""
    slots = []
    for side in range(4):
        slots += sorted(table.top_walls[side])
    table.players_take(slots[len(slots) // 2])


@pytest.mark.needs_sim
def test_a_damaged_record_of_a_cut_hand_is_reported_at_boot(make_target):
    """The flash damaged while the table was off: the boot says so in
    `counters` (`lost`), keeps the counters and the dealer, and goes on."""
    parlour = []
    target = make_target(seed=3, setup=lambda table: parlour.append(Parlour(table, seed=3)))
    table = target.table
    target.link.request("start")
    dice = target.link.wait_event(lambda e: e["ev"] == "dice", timeout=120)
    target.wait_virtual(dice["t"] + 15000)

    def damage():
        data = bytearray(target.sim.stored(RECORD_FILE))
        data[-3] ^= 0x20                                 # one bit of the flash flipped
        target.sim.change_while_off({RECORD_FILE: bytes(data)})
    ev = _cut(target, table, while_off=damage)           # the boot reads it
    assert ev["ev"] == "fault" and ev["detail"]["reason"] == "record", ev
    c = target.request("counters")
    assert "the hand's record" in c["lost"] and "does not check" in c["lost"], c
    assert c["cycles"] >= 1 and target.status()["dealer"] == dice["dealer"]
    target.in_table(table.technician_sorts_the_sets)
    target.drain()
    target.request("clear")
    target.wait_state("idle")
    assert target.run_cycle().ok
