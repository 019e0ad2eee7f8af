"""The hand follower (firmware/controller/follower.py) on a scripted table
top: what it publishes equals engine_core.replay of what the players did,
and odd sequences (two tiles at once, a tile lifted and put back, a read
glitch, a stray take) neither crash it nor miscount. Both interpreters."""

from engine_core.hand import DRAW, FINAL, PLAY, Hand
from engine_core.replay import apply
from firmware.drivers import panel as dsp
from firmware.tags import UNKNOWN
from firmware.fakes.follow import OPENING, Top, opened, same



def test_the_opening_is_published_as_the_replay_has_it():
    # A flower dealt to seat 1, a flower as the first replacement (a chain),
    # and a flower turned up before the gold (§6, §7).
    top = Top(placed={4: "1f", 142: "2f", 140: "3p", 141: "5z", 143: "7m"})
    for ev in OPENING:
        top.play(ev)
        top.read_rounds(2)
    assert same(top.states(), top.replayed(OPENING)), top.states()
    assert [s["op"] for s in top.states()] == ["deal", "replace_flowers", "reveal_gold"]
    assert top.follower.phase == PLAY
    gold = top.states()[-1]["gold"]
    assert gold is not None
    assert top.display.last("gold")[1] != 255           # the 金 display shows it
    st = top.states()[-1]
    assert top.display.last("count") == ("count", st["drawable"], st["marker"][0],
                                         st["marker"][1])


def test_nothing_is_published_before_the_tiles_have_gone():
    top = Top()
    top.play({"op": "deal"})
    top.read_rounds(1)                   # seen missing once: could be a glitch
    assert top.states() == []
    top.read_rounds(1)
    # No flower was dealt: the flower rounds take nothing and follow at once.
    assert [s["op"] for s in top.states()] == ["deal", "replace_flowers"]


def test_draws_and_kongs_in_turn_match_the_replay():
    top = opened(placed={66: "1z", 67: "2z"})   # draws that hit flowers
    events = list(OPENING)
    seat = 1
    for j in range(10):
        if j == 4:
            ev = {"op": "kong", "seat": 3, "kind": "concealed"}
            seat = 0
        elif j == 7:
            ev = {"op": "kong", "seat": 1, "kind": "exposed"}
            seat = 2
        else:
            ev = {"op": "draw", "seat": seat}
            seat = (seat + 1) % 4
        events.append(ev)
        top.play(ev)
        top.read_rounds(2)
    assert same(top.states(), top.replayed(events))
    assert [s.get("seat") for s in top.states()[3:]] == [e["seat"] for e in events[3:]]


def test_two_tiles_taken_at_once_are_two_draws_in_order():
    top = opened()
    top.play({"op": "draw", "seat": 1})
    top.play({"op": "draw", "seat": 2})     # before the reader saw the first go
    top.read_rounds(2)
    evs = OPENING + [{"op": "draw", "seat": 1}, {"op": "draw", "seat": 2}]
    assert same(top.states(), top.replayed(evs))


def test_a_tile_lifted_and_put_back_between_reads_changes_nothing():
    top = opened()
    head = top.play({"op": "draw", "seat": 1})[0]
    top.put_back(head)                   # looked at it and put it back at once
    n = len(top.states())
    top.read_rounds(3)
    assert len(top.states()) == n


def test_a_read_glitch_is_not_a_draw():
    top = opened()
    shadow_head = top.shadow.wall.geo.slot_of_pos[top.shadow.wall.head_pos()]
    n = len(top.states())
    top.reader.drop = shadow_head        # one answer leaves the head's tag out
    top.read_rounds(3)
    assert len(top.states()) == n
    assert top.follower.glitches == 1


def test_a_stray_take_is_irregular_and_published_as_a_take():
    top = opened()
    wall = top.shadow.wall
    stray = wall.geo.slot_of_pos[wall.head_pos() + 9]
    top.take(stray)
    top.read_rounds(2)
    assert len(top.states()) == 3        # not yet: the head may still explain it
    top.read_rounds(2)
    evs = OPENING + [{"op": "take", "slot": stray}]
    assert same(top.states(), top.replayed(evs))
    assert top.states()[-1]["slot"] == stray and top.follower.irregular == 1


def test_a_tile_put_back_after_a_take_returns_to_the_wall():
    top = opened()
    wall = top.shadow.wall
    stray = wall.geo.slot_of_pos[wall.head_pos() + 9]
    before = top.states()[-1]["wall"]
    top.take(stray)
    top.read_rounds(4)
    top.put_back(stray)
    top.read_rounds(1)
    last = top.states()[-1]
    assert last["op"] == "put_back" and last["slot"] == stray
    assert last["wall"] == before
    # and it can be drawn in turn later: nothing is lost
    assert top.follower.hand.wall.count == before


def test_a_strange_tag_put_back_is_reported_not_counted():
    top = opened()
    wall = top.shadow.wall
    stray = wall.geo.slot_of_pos[wall.head_pos() + 9]
    top.take(stray)
    top.read_rounds(4)
    count = top.follower.hand.wall.count
    top.reader.ids[stray] = UNKNOWN       # a tag of no tile
    top.put_back(stray)
    top.read_rounds(1)
    assert top.events[-1][0] == "irregular" and top.events[-1][1]["slot"] == stray
    assert top.follower.hand.wall.count == count


def test_a_kong_outside_play_is_refused_and_changes_nothing():
    top = Top()
    why = top.follower.kong(0, 2, False)
    assert why and "play" in why
    assert top.states() == [] and top.follower.hand.reserve == 18


def test_nothing_left_to_draw_is_a_draw_after_the_grace_time():
    top = opened()
    events = list(OPENING)
    seat = 1
    final_seen = False
    while top.shadow.drawable > 0:
        ev = {"op": "draw", "seat": seat}
        seat = (seat + 1) % 4
        events.append(ev)
        top.play(ev)
        top.read_rounds(2)
        final_seen = final_seen or top.follower.phase == FINAL
    assert final_seen and top.display.last("alert")[1] != dsp.ALERT_NONE
    assert top.follower.phase == FINAL
    top.wait(Top.GRACE - 500)
    assert top.follower.phase == FINAL   # a win on the last tile may still come
    top.wait(1000)
    assert top.follower.phase == DRAW
    events.append({"op": "draw", "seat": seat})
    assert same(top.states(), top.replayed(events))
    assert top.display.last("alert") == ("alert", dsp.ALERT_DRAW)
    assert top.buzzer.calls                                  # final group and draw beeped


def test_a_kong_key_just_after_its_replacement_was_taken_still_counts():
    top = opened()
    wall = top.shadow.wall
    tail = wall.geo.slot_of_pos[wall.tail_pos()]
    top.take(tail)                       # the replacement first ...
    top.read_rounds(2)                   # seen gone, not explained yet
    assert len(top.states()) == 3
    why = top.follower.kong(top.now, 2, False)     # ... then the key
    assert why is None
    ev = {"op": "kong", "seat": 2, "kind": "exposed"}
    assert top.states()[-1]["op"] == "kong"
    assert same(top.states(), top.replayed(OPENING + [ev]))
    assert top.follower.irregular == 0


def test_a_seats_second_kong_before_its_replacement_is_refused_as_the_same_press():
    # After a power cut a player cannot tell that the kong was read and
    # presses again: one kong, not two, until its replacement is seen gone.
    top = opened()
    ev = {"op": "kong", "seat": 2, "kind": "concealed"}
    slots = top.play(ev)
    assert len(slots) == 1
    top.put_back(slots[0])               # the replacement not taken yet
    top.read_rounds(2)
    why = top.follower.kong(top.now, 2, True)
    assert why is not None and "replacement" in why, why
    top.take(slots[0])
    top.read_rounds(2)
    assert same(top.states(), top.replayed(OPENING + [ev])), top.states()
    again = top.follower.kong(top.now, 2, False)             # its replacement taken: a kong
    assert again is None, again
    assert top.follower.kong(top.now, 3, False) is None     # another seat's is its own


def test_the_gold_by_the_dice_waits_for_the_roll_then_is_followed():
    top = Top(ruleset="luoyuan144")
    for ev in OPENING[:2]:
        top.play(ev)
        top.read_rounds(2)
    assert top.follower.wants_gold_dice()
    assert top.follower.kong(top.now, 1, False)          # not in play yet: refused
    gold = {"op": "reveal_gold", "dice": [2, 5]}
    assert top.follower.gold_dice(top.now, 2, 5) is None
    assert not top.follower.wants_gold_dice()
    top.play(gold)                       # the shadow turns the same tiles up
    top.read_rounds(2)
    assert same(top.states(), top.replayed(OPENING[:2] + [gold]))
    assert top.follower.phase == PLAY and top.states()[-1]["gold"] is not None
    assert top.follower.gold_dice(top.now, 2, 5) == "no gold roll is due"


def test_a_gold_roll_before_the_flower_tiles_were_seen_go_is_not_lost():
    top = Top(ruleset="luoyuan144", placed={4: "1f"})    # one flower to replace
    top.play({"op": "deal"})
    top.read_rounds(2)
    top.play({"op": "replace_flowers"})
    top.read_rounds(1)                   # its tile seen missing once only
    assert top.follower.wants_gold_dice()
    gold = {"op": "reveal_gold", "dice": [3, 3]}
    assert top.follower.gold_dice(top.now, 3, 3) is None
    top.play(gold)
    top.read_rounds(2)
    assert same(top.states(), top.replayed([{"op": "deal"}, {"op": "replace_flowers"}, gold]))


def test_a_reader_in_fault_is_not_asked_again_until_the_fault_is_cleared():
    """The table finds a reader's fault after the follower's step, on the
    same tick: a request asked then would go to a reader still down, and
    time out again after the clear (hw_tests/test_faults.py shows it end
    to end)."""
    top = opened()
    asked = top.reader.requests
    top.reader.fault = 23                  # rfid_timeout
    top.read_rounds(2)
    assert top.reader.requests == asked
    top.reader.fault = 0                   # cleared
    top.read_rounds(1)
    assert top.reader.requests == asked + 4


def test_every_stack_of_every_break_goes_into_a_row_as_stack_at_has_it():
    # The follower writes a stack's seat and k with Geometry's ints (no
    # tuple in the control loop); read back as the link sends them, they
    # are stack_at's, for every stack, dealer and dice sum.
    top = Top()
    f = top.follower
    geo = f.hand.wall.geo
    for dealer in range(4):
        for d in range(2, 13):
            f.begin(0, dealer, (d + 1) // 2, d // 2, top.ids)
            for i in range(geo.n_stacks):
                f._stack(8, i)
                assert f._pair(8) == list(geo.stack_at(i)), (dealer, d, i)
            f._stack(8, -1)
            assert f._pair(8) is None


def test_a_display_shown_again_shows_what_was_published_not_the_core():
    # No flower dealt: once the deal is published the flower round is too,
    # and the rules core turns the gold up at once; its tile is still in
    # the wall. A display board back from a fault shows the published state.
    top = Top()
    top.play({"op": "deal"})
    top.read_rounds(2)
    assert [s["op"] for s in top.states()] == ["deal", "replace_flowers"]
    assert top.follower.hand.gold_code is not None       # ahead of the tiles
    top.display.calls = []
    top.follower.show_again(top.now)
    st = top.states()[-1]
    assert top.display.last("gold") == ("gold", 255)
    assert top.display.last("count") == ("count", st["drawable"], st["marker"][0],
                                         st["marker"][1])
    top.play({"op": "replace_flowers"})                  # the shadow's: no tile
    top.play({"op": "reveal_gold"})
    top.read_rounds(2)
    assert top.display.last("gold")[1] != 255


def test_a_full_queue_never_publishes_a_gold_before_its_tile_has_gone():
    # The gold by the dice is turned up in the core when the roll settles;
    # eight kongs declared before its tile is taken fill the queue: the
    # gold waits for its tile (two kongs behind it become one), the kongs
    # wait for the gold.
    top = Top(ruleset="luoyuan144")
    for ev in OPENING[:2]:
        top.play(ev)
        top.read_rounds(2)
    assert top.follower.gold_dice(top.now, 2, 5) is None
    kongs = [{"op": "kong", "seat": k % 4, "kind": "exposed"} for k in range(8)]
    # The core's order (the gold, then the kongs) tells each kong's
    # replacement; a seat takes its first one before its second kong.
    ahead = Hand(top.rules, top.dealer, top.dice[0] + top.dice[1], top.ids)
    for ev in OPENING[:2] + [{"op": "reveal_gold", "dice": [3, 4]}]:
        apply(ahead, ev)
    for k, ev in enumerate(kongs):
        assert top.follower.kong(top.now, ev["seat"], False) is None
        if k < 4:
            how = bytearray(ahead.wall.how)
            apply(ahead, ev)
            for p in range(len(how)):
                if ahead.wall.how[p] and not how[p]:
                    top.take(ahead.wall.geo.slot_of_pos[p])
        if k == 3:
            top.read_rounds(2)
    assert top.follower.queued == 8
    top.read_rounds(2)
    assert all(s["gold"] is None for s in top.states()), top.states()
    assert all(c[1] == 255 for c in top.display.calls if c[0] == "gold")
    top.play({"op": "reveal_gold", "dice": [3, 4]})      # its tile turned up
    top.read_rounds(2)
    ops = [st["op"] for st in top.states()]
    assert "reveal_gold" in ops and top.states()[ops.index("reveal_gold")]["gold"] is not None
    assert top.display.last("gold")[1] != 255
    for ev in kongs:                                    # the replacements taken
        how = bytearray(top.shadow.wall.how)
        apply(top.shadow, ev)
        for p in range(len(how)):
            if top.shadow.wall.how[p] and not how[p]:
                top.take(top.shadow.wall.geo.slot_of_pos[p])
    top.read_rounds(2)
    events = OPENING[:2] + [{"op": "reveal_gold", "dice": [3, 4]}] + kongs
    assert same(top.states()[-1:], top.replayed(events)[-1:])
    assert top.follower.queued == 0
