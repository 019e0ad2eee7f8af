"""The rebuild of a hand the power cut (firmware/controller/rebuild.py), on
both interpreters: a hand played on a table top (firmware/fakes/follow.py, Top), its
record as saved (hand_record.py, through JSON as on the flash), then a fresh
follower rebuilt from the record and the slots still holding tiles: the
same public state, turn and record as the follower that saw it all; a
tile gone that nothing explains, or one that is not the record's, is
named and nothing is guessed."""

import json

from engine_core.replay import PUBLIC_KEYS, from_wire
from firmware.controller import hand_record
from firmware.controller import rebuild
from firmware.controller.follower import REC_NOTED
from firmware.controller.states import NAMES
from firmware.fakes.follow import Top

OPENING = [{"op": "deal"}, {"op": "replace_flowers"}, {"op": "reveal_gold"}]
PLAY = [{"op": "draw", "seat": 1}, {"op": "draw", "seat": 2},
        {"op": "kong", "seat": 2, "kind": "exposed"}, {"op": "draw", "seat": 3},
        {"op": "take", "slot": None}, {"op": "draw", "seat": 0}, {"op": "draw", "seat": 1}]


class _Shows:
    def __init__(self):
        self.dice = None

    def show_dealer(self, now, seat, streak):
        pass

    def show_dice(self, now, a, b, rolling):
        self.dice = (a, b, rolling)


class _Devices:
    def __init__(self):
        self.display = _Shows()


class _Dealership:
    streak = 0


class _Table:
    """What rebuild.py asks of the controller."""

    def __init__(self, top):
        self.follower = top.follower
        self.in_play = bytearray(len(top.ids))
        self.devices = _Devices()
        self.dealership = _Dealership()
        self.gold_rolling = False
        self.dice_unshown = False
        self.hand_cut = True
        self.events = []

    def emit(self, name, fields):
        self.events.append((name, fields))


class _Read:
    """The four sides as the boot read them: the players' table top."""

    def __init__(self, reader):
        self.seen = bytearray(reader.present)
        self.ids = bytearray(reader.ids)


def _played(events, placed=None):
    top = Top(dealer=0, dice=(3, 4), placed=placed or {})
    for ev in events:
        if ev["op"] == "take":              # a tile from the middle of the walls
            wall = top.shadow.wall
            left = [p for p in range(len(wall.how)) if not wall.how[p]]
            ev = {"op": "take", "slot": wall.geo.slot_of_pos[left[len(left) // 2]]}
        top.play(ev)
        top.read_rounds(3)
    return top


def _rebuilt(top, placed=None, read=None):
    rec = json.loads(json.dumps(hand_record.make(top.follower, 1, 0)))
    fresh = Top(dealer=0, dice=(3, 4), placed=placed or {})
    ctl = _Table(fresh)
    r = read if read is not None else _Read(top.reader)
    return ctl, rebuild.rebuild(ctl, top.now, r, rec), rec


def test_a_hand_in_play_comes_back_as_the_follower_that_saw_it_all():
    top = _played(OPENING + PLAY)
    ctl, to, rec = _rebuilt(top)
    assert to == NAMES.index("in_hand"), to
    assert [c[0] for c in rec["changes"]] == ["kong"] and len(rec["takes"]) == 1, rec
    (name, fields), = ctl.events
    assert name == "hand_resumed" and "op" not in fields
    want = top.follower.public()
    assert from_wire(fields) == from_wire(want) and fields["n"] == want["n"], (fields, want)
    f = ctl.follower
    assert f.turn == top.follower.turn and f.active
    mine, seen = bytearray(f.rec), bytearray(top.follower.rec)
    mine[REC_NOTED] = seen[REC_NOTED] = 0
    assert mine == seen
    assert ctl.hand_cut                      # nothing moves unasked to the hand's end
    # The hand's dice shown again (a cut may have come before their frame).
    assert ctl.devices.display.dice == (3, 4, False)
    assert fields["dice"] == [3, 4] and fields["gold_dice"] is None


def test_a_gold_rolled_before_the_cut_comes_back_with_its_roll_shown():
    top = Top(ruleset="luoyuan144", dealer=0, dice=(3, 4))
    for ev in OPENING[:2]:
        top.play(ev)
        top.read_rounds(3)
    assert top.follower.gold_dice(top.now, 2, 6) is None
    rec = json.loads(json.dumps(hand_record.make(top.follower, 1, 0)))
    assert rec["gold_dice"] == [2, 6]
    # Cut before the gold's tile was turned up: the roll is the record's.
    fresh = Top(ruleset="luoyuan144", dealer=0, dice=(3, 4))
    ctl = _Table(fresh)
    to = rebuild.rebuild(ctl, top.now, _Read(top.reader), rec)
    assert to == NAMES.index("in_hand"), to
    assert not ctl.follower.wants_gold_dice()        # not rolled again
    assert ctl.devices.display.dice == (2, 6, False)
    (name, fields), = ctl.events
    assert fields["gold_dice"] == [2, 6] and fields["dice"] == [3, 4]


def test_a_cut_in_the_deal_leaves_the_deal_waiting_for_its_tiles():
    top = Top(dealer=0, dice=(3, 4))
    slots = top.play({"op": "deal"})
    for s in slots[20:]:
        top.put_back(s)                     # only 20 dealt when the power went
    top.read_rounds(3)
    ctl, to, _ = _rebuilt(top)
    assert to == NAMES.index("in_hand")
    (name, fields), = ctl.events
    assert fields["n"] == 0 and fields["phase"] == "new", fields
    f = ctl.follower
    assert f.queued == 1 and f.hand.phase_name == "dealt"     # the deal, its tiles awaited


def test_what_nothing_explains_or_the_record_does_not_hold_is_named():
    top = _played(OPENING + PLAY[:2])
    read = _Read(top.reader)
    middle = [s for s in range(len(read.seen)) if read.seen[s]]
    read.seen[middle[len(middle) // 2]] = 0          # taken while the power was off
    assert _rebuilt(top, read=read)[1] == "unexplained"
    read = _Read(top.reader)
    a, b = middle[3], middle[-3]
    if read.ids[a] == read.ids[b]:
        b = middle[-4]
    read.ids[a], read.ids[b] = read.ids[b], read.ids[a]   # two tiles swapped
    assert _rebuilt(top, read=read)[1] == "mismatch"


def test_the_record_keeps_where_each_change_and_take_fell():
    top = _played(OPENING + PLAY)
    rec = hand_record.make(top.follower, 1, 0)
    hand = top.follower.hand
    assert rec["heads"][-1] <= hand.wall.head_pos() and rec["full"] == 0
    assert rec["takes"][0][0] == "take" and rec["takes"][0][3] == len(rec["changes"])
    ids = bytes.fromhex(rec["tiles"]) if hasattr(bytes, "fromhex") else None
    if ids is not None:
        assert ids == bytes(top.ids)
    assert set(PUBLIC_KEYS) <= set(from_wire(top.follower.public()))
