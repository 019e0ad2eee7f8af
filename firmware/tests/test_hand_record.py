"""What a hand needs to come back after a power cut, on both interpreters:
the hand's record the follower keeps (firmware/controller/follower.py) is
what engine_core.replay says after the gold, a flower quad and each kong;
firmware/controller/hand_record.py reads it back and refuses a damaged or foreign record
with its reason; the controller keeps the dealer and the streak in the
counters' file, restores them at boot, draws a new first dealer only for a
new game, and writes nothing in its tick (TableController.write)."""

import json
import os

from engine_core.replay import state
from engine_core.rulesets import load as load_ruleset
from firmware import persist
from firmware.controller import hand_record, record_check
from firmware.controller.follower import REC_NOTED
from firmware.hal import HalCommon
from firmware.fakes.hal import FakeHal
from firmware.sealed import Sealer
from firmware.fakes.follow import Top, reserve_changes
from firmware.tests.test_learned import Board as _LearnedBoard

OPENING = [{"op": "deal"}, {"op": "replace_flowers"}, {"op": "reveal_gold"}]
PATH = "hr-hand.rec"
KEY = bytes(range(32))


def _changes(top, events):
    """The reserve changes the replay makes of `events`, as the record
    lists them: [op, seat or None, concealed, R after]."""
    from engine_core.hand import Hand
    hand = Hand(top.rules, top.dealer, top.dice[0] + top.dice[1], top.ids)
    return reserve_changes(hand, events), state(hand)


def _record(top):
    return hand_record.make(top.follower, 5, 2)


def test_the_record_after_the_gold_a_quad_and_each_kong_is_the_replays():
    # Seat 0 is dealt four 5z (a flower quad at the deal: R rises), and
    # two kongs follow the gold.
    top = Top(dealer=0, dice=(3, 4), placed={0: "5z", 1: "5z", 2: "5z", 3: "5z"})
    f = top.follower
    assert f.rec[REC_NOTED] & 1                      # the new hand's record is due
    events = []
    for ev in OPENING:
        top.play(ev)
        top.read_rounds(2)
        events.append(ev)
    rec = _record(top)
    want, st = _changes(top, events)
    assert rec["changes"] == want and want and want[0][0] == "deal", (rec, want)
    assert rec["gold"] == st["gold"] is not None and rec["reserve"] == st["reserve"]
    assert rec["dice"] == [3, 4] and rec["dealer"] == 0 and rec["gold_dice"] is None
    assert (rec["n"], rec["wins_in_row"], rec["ruleset"]) == (5, 2, "fuzhou144")
    for ev in ({"op": "draw", "seat": 1}, {"op": "kong", "seat": 2, "kind": "concealed"},
               {"op": "draw", "seat": 3}, {"op": "kong", "seat": 0, "kind": "exposed"}):
        f.rec[REC_NOTED] = 0
        top.play(ev)
        top.read_rounds(2)
        events.append(ev)
        want, st = _changes(top, events)
        rec = _record(top)
        assert rec["changes"] == want and rec["reserve"] == st["reserve"], (ev, rec, want)
        assert bool(f.rec[REC_NOTED] & 1) == (ev["op"] == "kong")    # a write only for a change
    assert [c[0] for c in rec["changes"]][-2:] == ["kong", "kong"]
    assert record_check.check(rec, top.rules) is rec


def test_the_gold_by_the_dice_is_recorded_with_its_roll():
    top = Top(ruleset="luoyuan144")
    for ev in OPENING[:2]:
        top.play(ev)
        top.read_rounds(2)
    assert _record(top)["gold"] is None and _record(top)["gold_dice"] is None
    assert top.follower.gold_dice(top.now, 2, 5) is None
    top.play({"op": "reveal_gold", "dice": [2, 5]})
    top.read_rounds(2)
    rec = _record(top)
    assert rec["gold_dice"] == [2, 5] and rec["gold"] == top.states()[-1]["gold"] is not None
    assert record_check.check(rec, top.rules) is rec


def _clean(*paths):
    for p in paths:
        for q in (p, p + ".new"):
            try:
                os.remove(q)
            except OSError:
                pass


def _refused(rec, rules, words):
    try:
        record_check.check(rec, rules)
    except ValueError as e:
        assert words in str(e), (words, str(e))
        return
    raise AssertionError("taken: %r" % (rec,))


def _good(rules):
    """A record as the follower writes it, that checks."""
    r = rules.reserve_base
    return {"v": 3, "n": 3, "ruleset": "fuzhou144", "dealer": 2, "wins_in_row": 1,
            "dice": [3, 5], "gold": "5m", "gold_dice": None, "reserve": r + 4,
            "changes": [["deal", None, 0, r + 2], ["kong", 1, 1, r + 4]],
            "heads": [65, 80], "takes": [["take", 40, 80, 2]], "full": 0,
            "tiles": "00" * 144}


def _but(good, **kw):
    rec = dict(good)
    rec.update(kw)
    return rec


def test_a_damaged_or_foreign_record_is_refused_with_its_reason():
    rules = load_ruleset("fuzhou144")
    r = rules.reserve_base
    good = _good(rules)
    assert record_check.check(dict(good), rules)["reserve"] == r + 4

    def but(**kw):
        return _but(good, **kw)
    _refused([1, 2], rules, "not an object")
    extra = but(turn=1)
    _refused(extra, rules, "not this firmware's")
    missing = dict(good)
    del missing["gold"]
    _refused(missing, rules, "not this firmware's")
    _refused(but(v=2), rules, "version 2")
    _refused(but(heads=[65]), rules, "one per change")
    _refused(but(heads=[65, 144]), rules, "not a position")
    _refused(but(takes=[["take", 144, 80, 2]]), rules, "is not [op, slot")
    _refused(but(takes=[["take", 4, 80, 3]]), rules, "is not [op, slot")
    _refused(but(full=2), rules, "full must be")
    _refused(but(tiles="00"), rules, "288 hex digits")
    _refused(but(ruleset="luoyuan144"), rules, "ruleset 'luoyuan144'")


def test_a_record_with_a_wrong_dealer_dice_gold_or_reserve_is_refused_with_its_reason():
    rules = load_ruleset("fuzhou144")
    r = rules.reserve_base
    good = _good(rules)

    def but(**kw):
        return _but(good, **kw)
    _refused(but(dealer=4), rules, "dealer must be 0..3")
    _refused(but(dealer=True), rules, "dealer must be 0..3")
    _refused(but(dice=[0, 3]), rules, "dice must be two faces")
    _refused(but(gold="9z"), rules, "not a tile")
    _refused(but(gold="3f"), rules, "is a flower")
    _refused(but(gold_dice=[3, 4]), rules, "turns the gold from the tail")
    _refused(but(reserve=r + 5), rules, "its changes make it %d" % (r + 4))
    _refused(but(changes=[["kong", 1, 1, r]]), rules, "the reserve goes from %d to %d" % (r, r))
    _refused(but(changes=[["take", 1, 0, r + 4]]), rules, "not a reserve change")
    _refused(but(changes=[["draw", 1, 1, r + 4]]), rules, "not a reserve change")
    _refused(but(changes=[["kong", None, 0, r + 4]]), rules, "not a reserve change")


def test_a_record_of_the_gold_by_the_dice_without_its_roll_is_refused():
    good = _good(load_ruleset("fuzhou144"))

    def but(**kw):
        return _but(good, **kw)
    dice_rules = load_ruleset("luoyuan144")
    _refused(but(ruleset="luoyuan144", changes=[], reserve=dice_rules.reserve_base),
             dice_rules, "the gold and its roll go together")
    for faces in (7, [3, 7], [0, 4], [3], [3, 4, 1], [True, 2]):
        _refused(but(ruleset="luoyuan144", changes=[], reserve=dice_rules.reserve_base,
                     gold_dice=faces), dice_rules, "gold_dice must be two faces")


def test_a_sealed_record_changed_cut_short_or_another_tables_is_refused():
    # Sealed on the flash: changed, cut short or another table's, refused.
    rules = load_ruleset("fuzhou144")
    good = _good(rules)
    _clean(PATH)
    seal = Sealer(KEY, FakeHal(seed=1).rand, b"hand")
    try:
        assert record_check.load(seal, PATH, rules) is None
        seal.save(PATH, json.dumps(good).encode())
        assert record_check.load(seal, PATH, rules) == good
        with open(PATH, "rb") as f:
            data = bytearray(f.read())
        for at in (3, 12, len(data) - 1):         # the nonce, the text, the tag
            bad = bytearray(data)
            bad[at] ^= 0x01
            _refused_file(bad, seal, rules, "does not check")
        _refused_file(data[:-1], seal, rules, "does not check")
        _refused_file(b"0000 {}", seal, rules, "not a sealed file")
        other = Sealer(bytes(32), FakeHal(seed=1).rand, b"hand")
        other.save(PATH, json.dumps(good).encode())
        _refused_file(None, seal, rules, "does not check")     # another table's key
        walls = Sealer(KEY, FakeHal(seed=1).rand, b"walls")
        walls.save(PATH, json.dumps(good).encode())
        _refused_file(None, seal, rules, "does not check")     # walls passed off as a record
    finally:
        _clean(PATH)


def test_the_record_of_the_hand_cut_is_taken_and_no_other():
    # The hand cut: its record, none (not begun), or another hand's.
    rules = load_ruleset("fuzhou144")
    good = _good(rules)
    _clean(PATH)
    seal = Sealer(KEY, FakeHal(seed=1).rand, b"hand")
    try:
        seal.save(PATH, json.dumps(good).encode())
        assert record_check.cut_hand(seal, PATH, rules, 2) == good
        assert record_check.cut_hand(seal, PATH, rules, 3) is None    # hand 3 had ended
        try:
            record_check.cut_hand(seal, PATH, rules, 7)
            raise AssertionError("another hand's record was taken")
        except ValueError as e:
            assert "of hand 3, the hand cut was hand 8" in str(e), str(e)
        try:
            record_check.cut_hand(None, PATH, rules, 2)
            raise AssertionError("a record taken on a table without a key")
        except ValueError as e:
            assert "no key" in str(e), str(e)
        _clean(PATH)
        assert record_check.cut_hand(seal, PATH, rules, 2) is None      # erased: not begun
    finally:
        _clean(PATH)


def _refused_file(data, seal, rules, why):
    """The file at PATH (written as `data` first, unless None) refused with `why`."""
    if data is not None:
        with open(PATH, "wb") as f:
            f.write(data)
    try:
        record_check.load(seal, PATH, rules)
    except ValueError as e:
        assert "the hand's record" in str(e) and why in str(e), str(e)
        return
    raise AssertionError("taken: %r" % (data,))


# -- the controller: the dealer and the streak across restarts -------------------

class Board(_LearnedBoard):
    store = "hr-"                          # hr-counters.json in the current directory

    # The flags as files of the store, as the real HAL keeps them.
    def flag(self, name):
        return HalCommon.flag(self, name)

    def set_flag(self, name, on):
        HalCommon.set_flag(self, name, on)


def _controller(events=None):
    from firmware import config, tags
    from firmware.controller.table import TableController
    from firmware.devices import Devices
    from firmware.fakes.hal import FIRMWARE_DIR
    cfg = config.load(FIRMWARE_DIR + "/config.json")
    hal = Board()
    for pin in cfg.pins["lift_bottom"]:
        hal.set(pin, 1)
    out = [] if events is None else events
    ctl = TableController(hal, cfg, Devices(hal, cfg, tags.load(FIRMWARE_DIR + "/tags.txt")),
                          lambda name, fields: out.append((name, fields)), KEY)
    ctl.boot(0)
    return hal, ctl


def _files():
    _clean("hr-counters.json", "hr-hand.rec", "hr-walls.rec")
    for flag in ("hr-cycle", "hr-hand", "hr-gave_up"):
        _clean(flag)


def test_the_dealer_and_the_streak_come_back_after_a_restart_and_a_new_game_is_asked_for():
    _files()
    try:
        _hal, ctl = _controller()
        first = ctl.dealership.dealer
        saved = persist.load("hr-counters.json")     # kept at once: a new game
        assert saved["dealer"] == [first, 0], saved
        ds = ctl.dealership
        ds.dealer, ds.wins_in_row = (first + 1) % 4, 3
        ctl.write(2)                                 # what a hand's end notes
        for _ in range(3):                           # restarts: the game goes on
            _hal, ctl = _controller()
            assert (ctl.dealership.dealer, ctl.dealership.wins_in_row) == ((first + 1) % 4, 3)
            assert ctl.lost is None
        # A new game (a session's request): drawn again, the streak 0, kept.
        from firmware.link import service
        answer = service.new_game(None, ctl, 0, {})
        assert answer["dealer"] == ctl.dealership.dealer and ctl.dealership.wins_in_row == 0
        assert persist.load("hr-counters.json")["dealer"] == [answer["dealer"], 0]
    finally:
        _files()


def test_a_damaged_dealer_is_reported_and_a_new_game_begins():
    _files()
    try:
        _hal, ctl = _controller()
        saved = persist.load("hr-counters.json")
        saved["dealer"] = [5, 0]
        persist.save("hr-counters.json", saved)
        _hal, ctl = _controller()
        assert "a damaged dealer" in ctl.lost and "a new game" in ctl.lost, ctl.lost
        assert persist.load("hr-counters.json")["dealer"] == [ctl.dealership.dealer, 0]
    finally:
        _files()


def test_a_damaged_record_of_a_cut_hand_is_reported_at_boot():
    _files()
    try:
        _hal, ctl = _controller()
        with open("hr-hand", "w") as f:              # a hand was in play at the cut
            f.write("1")
        with open("hr-hand.rec", "w") as f:
            f.write("SL1 a record changed by hand")
        _hal, ctl = _controller()
        assert ctl.hand_cut and "the hand's record" in ctl.lost, ctl.lost
        assert "does not check" in ctl.lost, ctl.lost
        # Given up with its reason, and not tried again at the next boot.
        assert ctl.fault_detail == {"reason": "record"}, ctl.fault_detail
        _hal, ctl = _controller()
        assert ctl.fault_detail is None and ctl.hand_cut, ctl.fault_detail   # idle, still a hand
    finally:
        _files()
