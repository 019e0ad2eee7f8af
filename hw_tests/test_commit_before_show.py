"""What a power cut must not change is in the flash before anyone sees it
(docs/reliability.md, Written before shown; docs/security.md): the dice,
so the break, and the dealer are the hand's record's before the display
or the link shows them. A cut at every tick from the dice settling
through the hand's first read of the walls, and at the instant each dice
frame leaves for the display: every boot shows the dice seen before the
cut, or, when none were seen and none written, the dealer rolls again.
On the virtual table (the real firmware under MicroPython; virtual time,
nothing sleeps)."""

import json

import pytest

from host_tools.cli.ops import run_hand
from host_tools.sim.config import DEFAULT_PATH
from host_tools.sim.display import SHOW_DICE
from host_tools.sim.hand_players import HandPlayers
from hw_tests.harness import saved_record

AFTER_READ = 1             # cuts past the hand's first read of the walls


def _settled(table, since):
    """The settled dice the display showed from virtual time `since` on."""
    return [tuple(v[:2]) for t, what, v in table.display.history
            if what == "dice" and not v[2] and t >= since]


class _Cutter:
    """One cut per cycle, armed before its roll: a number of ticks after
    the roll's time is up, or the instant a dice frame leaves the
    controller (the rolling one, or the settled one). What the table
    showed and saved at that moment, for the test."""

    def __init__(self, target):
        self.target = target
        self.table = target.table
        self.plan = None
        self.rolled_at = None
        self.reads_at_show = None  # the reader's replies when the settled dice left
        self.armed_at = 0          # the table's time when this cycle's cut was armed
        self.at_cut = None
        display = self.table.display
        sent = display.receive

        def receive(data, t):
            sent(data, t)
            for _t, cmd, body in display.incoming:
                if cmd != SHOW_DICE:
                    continue
                # A settled frame counts only after this cycle's rolling
                # one: the last cycle's may reach the board late, after
                # the host heard its `dice` event and armed this cut.
                if not body[2] and not self._rolling():
                    continue
                if not body[2] and self.reads_at_show is None:
                    self.reads_at_show = self.table.rfid.replies
                if self.plan == ("frame", bool(body[2])):
                    self._cut()          # the frame on the cable, not yet on the board
                    return
        display.receive = receive       # the bus thread calls it, as it calls the hook

    def arm(self, plan, roll_ms, tick_ms):
        """`plan`: ("frame", rolling) or ("tick", k), k ticks after the
        roll's time is up (negative: before)."""
        table = self.table
        start = table.now
        self.at_cut = self.rolled_at = self.reads_at_show = None
        self.armed_at = start
        self.plan = plan

        def rolled():
            self.rolled_at = table.now
            if plan[0] == "tick":
                self.target.hook.at(table.now + roll_ms + plan[1] * tick_ms, self._cut)
        self.target.when_table(self._rolling, rolled)

    def _rolling(self):
        """The display showed this cycle's rolling dice."""
        return any(what == "dice" and v[2] and t >= self.armed_at
                   for t, what, v in self.table.display.history)

    def _cut(self):
        table = self.table
        self.plan = None
        self.at_cut = {"t": table.now, "shown": _settled(table, self.rolled_at or 0),
                       "record": saved_record(self.target.sim),
                       "dealer": table.display.dealer,
                       "read": self.reads_at_show is not None
                       and table.rfid.replies > self.reads_at_show}
        table.power_cut()


def _one_cut(target, cutter, plan, hands):
    """One cycle cut by `plan`, checked; what the table showed and saved
    at the cut."""
    target.drain()                       # the last cycle's events
    cutter.arm(plan, target.timing("dice_roll_ms"), target.timing("tick_ms"))
    restarts = target.sim.restarts
    boot = target.wait_event(lambda e: e["ev"] in ("hand_resumed", "fault") or (
        e["ev"] == "state" and e["state"] == "dealer" and target.sim.restarts > restarts),
        "the boot after the cut %r" % (plan,))
    cut = cutter.at_cut
    assert cut is not None and target.sim.restarts == restarts + 1, (plan, boot)
    assert boot["ev"] != "fault", (plan, boot, cut)
    rec = cut["record"]
    written = type(rec) is dict and rec["n"] == hands + 1
    if cut["shown"] or written:
        # Seen or written: the hand comes back with those dice, shown again.
        assert boot["ev"] == "hand_resumed", (plan, cut, boot)
        got = tuple(boot["dice"])
        assert got == tuple(rec["dice"]), (plan, cut, got)
        assert not cut["shown"] or cut["shown"][-1] == got, (plan, cut, got)
        target.wait_table_time(100)                  # the frame's way to the board
        shown = target.in_table(lambda: _settled(target.table, cut["t"]))
        assert shown == [got], (plan, shown, got)
    else:
        # Neither seen nor written: the dealer's key again, a new roll.
        assert boot["ev"] == "state", (plan, cut, boot)
        table = target.table
        target.when_table(lambda: table.display.dealer_seat is not None,     # the lamp lit
                          lambda: table.players.press(table.display.dealer_seat))
        target.wait_event(lambda e: e["ev"] == "dice" and e["t"] > cut["t"], "the roll again")
    assert target.status()["dealer"] == cut["dealer"][0], (plan, cut)
    return cut


@pytest.mark.long
@pytest.mark.needs_sim
def test_every_boot_shows_the_dice_seen_or_written_before_the_cut(make_target):
    target = make_target(seed=4)
    cutter = _Cutter(target)
    target.start()
    plans = [("frame", True), ("frame", False)] + [("tick", k) for k in range(-2, 40)]
    seen = []
    reads = 0
    for hands, plan in enumerate(plans):
        cut = _one_cut(target, cutter, plan, hands)
        seen.append((plan, bool(cut["shown"]), type(cut["record"]) is dict
                     and cut["record"]["n"] == hands + 1))
        target.request("hand_end", winner=None)       # a draw: the dealer stays
        reads += plan[0] == "tick" and cut["read"]
        if reads > AFTER_READ:
            break
    assert reads > AFTER_READ, seen                   # cut through the hand's first read
    # Every kind of moment was met: a roll no one saw nor kept, dice kept
    # but not yet shown, dice shown.
    kinds = {(shown, written) for _plan, shown, written in seen}
    assert kinds >= {(False, False), (False, True), (True, True)}, seen


@pytest.mark.needs_sim
@pytest.mark.parametrize("rolling", [False, True], ids=["settled", "rolling"])
def test_a_cut_as_a_gold_roll_frame_leaves_keeps_the_roll_written(make_target, tmp_path, rolling):
    """luoyuan144 finds the gold by the dealer's second roll: the power cut
    at the instant a frame of that roll leaves the controller. The
    settled one: the roll was written before it, so the boot resumes the
    hand with it and shows it first, and the players turn the gold up
    where it says. The rolling one: nothing of the roll was shown nor
    kept, the boot shows no dice, and the dealer rolls again. Either way
    the hand is its replay to the end."""
    cfg = json.loads(DEFAULT_PATH.read_text())
    cfg["ruleset"] = "luoyuan144"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    players = []
    target = make_target(seed=0, config_path=path,
                         setup=lambda table: players.append(HandPlayers(table, seed=0)))
    table = target.table
    display = table.display
    sent = display.receive
    cut = {}

    def receive(data, t):
        sent(data, t)
        frames = [body for _t, cmd, body in display.incoming
                  if cmd == SHOW_DICE and bool(body[2]) == rolling]
        rolls = [v for _t, what, v in display.history if what == "dice" and not v[2]]
        if frames and len(rolls) == 1 and not cut:      # the second roll: the gold's
            cut.update(t=table.now, frame=tuple(frames[0][:2]), record=saved_record(target.sim))
            table.power_cut()
    display.receive = receive
    out = run_hand(target.sim, target.link, players[0], cuts=True, timeout_s=target.hand_wall_s)
    assert cut, "the gold's roll never left the controller"
    assert out["resumed"] is True and out["replay_ok"] and out["ok"], {
        k: out.get(k) for k in ("resumed", "fallback", "faults", "mismatches")}
    after = [tuple(v[:2]) for t, what, v in display.history
             if what == "dice" and not v[2] and t > cut["t"]]
    assert after[:1] == [tuple(players[0].gold_dice)], after   # the gold's roll, first
    if rolling:
        assert cut["record"]["gold_dice"] is None, cut
        # Rolled on the board for the break and for the gold after the
        # boot; the cut roll's frame never reached it.
        assert len([1 for _t, what, v in display.history if what == "dice" and v[2]]) == 2
    else:
        assert cut["record"]["gold_dice"] == list(cut["frame"]), cut   # written before it left
        assert players[0].gold_dice == list(cut["frame"])
