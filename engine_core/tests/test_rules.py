"""One or more tests per rule of docs/rules.md §3-§11. Runs on CPython and
MicroPython (plain asserts; engine_core/tests/mp_runner.py runs it there).

Most tests lay out a wall with `walls.arrange` (chosen tiles at chosen
draw-order positions), replay events, and check the public state. Expected
values are the rules' own numbers or follow from it in a line of arithmetic
written next to them.
"""

from engine_core.dealer import Dealership
from engine_core.dice import chosen_seat, random_seat, roll, uniform
from engine_core.hand import Hand, Refused
from engine_core.replay import PUBLIC_KEYS, from_wire, replay
from engine_core.rulesets import load
from engine_core import tiles
from engine_core.wall import ALREADY_EMPTY, BAD_SLOT, HEAD, IRREGULAR, NOT_EMPTY, TAIL, Geometry, Wall
from engine_core.tests.walls import OPENING, arrange, scenario

EXAMPLE = Geometry(18, 0, 7)        # §12: dealer 0, dice 3 + 4


def stack(i, geo=EXAMPLE):
    seat, k = geo.stack_at(i)
    return {"seat": seat, "stack": k}


def run(placed, events, ruleset="fuzhou144", dealer=0, dice=(3, 4)):
    return replay(scenario(ruleset, dealer, dice, placed, events))


def suits_then_flowers(first_flower, ruleset="fuzhou144"):
    """Draw order with every flower in one run starting at `first_flower`."""
    rules = load(ruleset)
    codes = rules.tile_codes()
    suits = [c for c in codes if not tiles.is_flower(tiles.tile_id(c))]
    flowers = [c for c in codes if tiles.is_flower(tiles.tile_id(c))]
    order = suits[:first_flower] + flowers + suits[first_flower:]
    placed = {}
    for p, c in enumerate(order):
        placed[p] = c
    return placed


# -- §3 geometry --------------------------------------------------------------

def test_s3_slot_formula_and_walls_join_clockwise():
    for dealer in range(4):
        for d in range(2, 13):
            g = Geometry(18, dealer, d)
            for i in range(g.n_stacks):
                seat, k = g.stack_at(i)
                for layer in (0, 1):
                    slot = (seat * 18 + k) * 2 + layer
                    assert g.slot_of_pos[2 * i + layer] == slot
                    assert g.pos_of_slot[slot] == 2 * i + layer
                if i + 1 < g.n_stacks:
                    s2, k2 = g.stack_at(i + 1)
                    # along one wall to its left end, then onto 上家's right end
                    assert (s2, k2) == (seat, k + 1) or (k, k2, s2) == (17, 0, (seat - 1) % 4)


def test_s3_seat_of_stack_of_and_the_wire_form_agree_with_stack_at_everywhere():
    # Every stack of every break, for both wall lengths: the ints the
    # follower publishes, and what a host makes of them, are stack_at's.
    for stacks in (16, 18):
        for dealer in range(4):
            for d in range(2, 13):
                g = Geometry(stacks, dealer, d)
                for i in range(g.n_stacks):
                    seat, k = g.stack_at(i)
                    assert (g.seat_of(i), g.stack_of(i)) == (seat, k)
                    ev = {"n": i, "op": "draw", "seat": 3, "phase": "play", "wall": 9,
                          "reserve": 4, "drawable": 5, "gold": None,
                          "marker": [seat, k], "head": [seat, k], "tail": None}
                    got = from_wire(ev)
                    assert sorted(got) == sorted(PUBLIC_KEYS)
                    assert got["marker"] == got["head"] == {"seat": seat, "stack": k} == stack(i, g)
                    assert got["tail"] is None
                    assert (got["phase"], got["wall"], got["reserve"], got["drawable"],
                            got["gold"]) == ("play", 9, 4, 5, None)


# -- §4 dice and the break ----------------------------------------------------

def test_s4_chosen_seat_counts_counter_clockwise_from_the_dealer():
    for dealer in range(4):
        for d in (5, 9):
            assert chosen_seat(dealer, d) == dealer
        for d in (2, 6, 10):
            assert chosen_seat(dealer, d) == (dealer + 1) % 4
        for d in (3, 7, 11):
            assert chosen_seat(dealer, d) == (dealer + 2) % 4
        for d in (4, 8, 12):
            assert chosen_seat(dealer, d) == (dealer + 3) % 4


def test_s4_head_is_stack_d_and_tail_is_stack_d_minus_1_of_the_chosen_seat():
    for dealer in range(4):
        for d in range(2, 13):
            for stacks in (16, 18):
                g = Geometry(stacks, dealer, d)
                c = chosen_seat(dealer, d)
                assert g.stack_at(0) == (c, d)
                assert g.stack_at(g.n_stacks - 1) == (c, d - 1)


def test_s4_tail_takes_top_before_bottom_from_the_last_stack():
    wall = Wall(EXAMPLE, bytearray(144))
    order = []
    for _ in range(6):
        p = wall.tail_pos()
        order.append(p)
        assert wall.taken(EXAMPLE.slot_of_pos[p]) == TAIL
    assert order == [142, 143, 140, 141, 138, 139]


def test_s4_a_position_is_taken_once_and_an_empty_wall_refuses():
    wall = Wall(EXAMPLE, bytearray(144))
    slot = EXAMPLE.slot_of_pos[0]
    assert wall.taken(slot) == HEAD
    assert wall.taken(slot) == ALREADY_EMPTY
    takes = [{"op": "take", "slot": s} for s in range(144)]
    out = run({}, takes + [{"op": "take", "slot": 0}, {"op": "deal"}])
    assert out[143]["wall"] == 0 and out[143]["head"] is None and out[143]["tail"] is None
    assert "already empty" in out[144]["error"]
    assert "empty" in out[145]["error"] and out[145]["phase"] == "new"


# -- §5 dealing -----------------------------------------------------------------

def test_s5_deal_gives_17_and_16_and_takes_65_head_tiles():
    out = run({}, [{"op": "deal"}])
    assert out[0]["phase"] == "dealt"
    assert out[0]["hand_sizes"] == [17, 16, 16, 16]
    assert out[0]["wall"] == 144 - 65
    assert out[0]["head"] == stack(32)     # the bottom of i = 32 is next (p = 65)


def test_s5_deal_order_two_stacks_each_from_the_dealer_then_the_extra_tile():
    # Round 1: p 0-3 dealer, 4-7 next seat, 8-11, 12-15; round 2 from p 16;
    # the dealer's 17th tile is p 64. Flowers show whose hand a tile reached.
    for dealer in range(4):
        placed = {4: "1f", 16: "2f", 64: "3f", 15: "4f"}
        out = run(placed, OPENING[:2], dealer=dealer)
        fl = out[1]["flowers"]
        assert fl[dealer] == ["2f", "3f"]
        assert fl[(dealer + 1) % 4] == ["1f"]
        assert fl[(dealer + 3) % 4] == ["4f"]
        assert fl[(dealer + 2) % 4] == []


def test_s5_dealing_skips_a_gap_left_by_an_irregular_take():
    out = run({}, [{"op": "take", "slot": EXAMPLE.slot_of_pos[0]}, {"op": "deal"}])
    assert out[1]["wall"] == 144 - 1 - 65
    assert out[1]["head"] == stack(33)      # p = 1..65 dealt, p = 66 next
    assert out[1]["hand_sizes"] == [17, 16, 16, 16]


# -- §6 flower replacement ------------------------------------------------------

def test_s6_flower_rounds_in_seat_order_with_chains():
    placed = {0: "1z", 4: "2z", 5: "3z", 12: "4z",   # dealt: seats 0, 1, 1, 3
              143: "5z", 141: "6z", 139: "7z"}        # replacements that are flowers
    # Tail order 142 143 140 141 138 139 136: round 1: seat 0 takes 142,
    # seat 1 takes 143 (5z) and 140, seat 3 takes 141 (6z); round 2: seat 1
    # takes 138, seat 3 takes 139 (7z); round 3: seat 3 takes 136.
    out = run(placed, OPENING[:2])[1]
    assert out["phase"] == "replaced"
    assert out["flowers"] == [["1z"], ["2z", "3z", "5z"], [], ["4z", "6z", "7z"]]
    assert out["hand_sizes"] == [17, 16, 16, 16]
    assert out["wall"] == 144 - 65 - 7
    assert out["tail"] == stack(68)         # p 137, the bottom of i = 68, is left
    assert out["reserve"] == 18


def test_s6_replace_flowers_only_after_the_deal():
    out = run({}, [{"op": "replace_flowers"}, {"op": "deal"}, {"op": "deal"}])
    assert "not allowed" in out[0]["error"] and out[0]["phase"] == "new"
    assert "error" not in out[1]
    assert "not allowed" in out[2]["error"] and out[2]["wall"] == out[1]["wall"]


# -- §7 the gold ----------------------------------------------------------------

def test_s7_tail_gold_skips_flowers_to_the_dealer():
    out = run({142: "1f", 143: "2z", 140: "5s"}, OPENING)[2]
    assert out["gold"] == "5s"
    assert out["flowers"][0] == ["1f", "2z"]
    assert out["hand_sizes"] == [17, 16, 16, 16]
    assert out["wall"] == 144 - 65 - 3       # the indicator is not in the wall
    # Stack i = 71 is empty, i = 70 holds its bottom: 9 back is i = 62.
    assert out["tail"] == stack(70) and out["marker"] == stack(62)


def test_s7_dice_gold_counts_back_and_turns_the_top_tile_in_place():
    gold = {"op": "reveal_gold", "dice": [2, 3]}     # n = 5: i = 71..67
    out = run({134: "3z", 132: "7p"}, OPENING[:2] + [gold], ruleset="luoyuan144")[2]
    assert out["gold"] == "7p"                       # 3z on top of i = 67 went to the dealer
    assert out["flowers"][0] == ["3z"]
    assert out["wall"] == 144 - 65 - 2
    assert out["reserve"] == 20
    assert out["tail"] == stack(71)                  # the tail is untouched


def test_s7_dice_gold_leaves_gaps_that_the_tail_skips():
    rules = load("luoyuan144")
    ids = bytearray(tiles.tile_id(c) for c in arrange(rules, 0, 7, {134: "3z", 132: "7p"}))
    hand = Hand(rules, 0, 7, ids)
    hand.deal()
    hand.replace_flowers()
    hand.reveal_gold(5)
    taken = []
    for _ in range(10):
        taken.append(hand.wall.tail_pos())
        hand.kong(1, False)
    assert taken == [142, 143, 140, 141, 138, 139, 136, 137, 135, 133]


def test_s7_dice_gold_counts_only_stacks_that_hold_a_tile():
    gap = [{"op": "take", "slot": EXAMPLE.slot_of_pos[p]} for p in (140, 141)]
    gold = {"op": "reveal_gold", "dice": [3, 2]}     # 71, (70 empty), 69, 68, 67, 66
    out = run({132: "9s"}, gap + OPENING[:2] + [gold], ruleset="luoyuan144")[-1]
    assert out["gold"] == "9s" and out["irregular"] == 2


def test_s7_gold_needs_the_right_inputs():
    out = run({}, OPENING[:2] + [{"op": "reveal_gold", "dice": [1, 1]}, {"op": "reveal_gold"}])
    assert "no dice" in out[2]["error"] and out[2]["gold"] is None
    assert out[3]["gold"] is not None and out[3]["phase"] == "play"
    out = run({}, OPENING[:2] + [{"op": "reveal_gold"}, {"op": "reveal_gold", "dice": [7, 1]}],
              ruleset="luoyuan128")
    assert "dice" in out[2]["error"] and "error" in out[3] and out[3]["phase"] == "replaced"


# -- §8 reserve, drawable, final group, draw -------------------------------------

def test_s8_kongs_raise_the_reserve_and_take_from_the_tail():
    events = OPENING + [{"op": "kong", "seat": 1, "kind": "exposed"},
                        {"op": "kong", "seat": 2, "kind": "concealed"}]
    out = run({142: "5s"}, events)
    assert (out[2]["reserve"], out[2]["wall"], out[2]["drawable"]) == (18, 78, 60)
    assert (out[3]["reserve"], out[3]["wall"], out[3]["drawable"]) == (19, 77, 58)
    assert (out[4]["reserve"], out[4]["wall"], out[4]["drawable"]) == (21, 76, 55)


def test_s8_a_flower_quad_counts_once_when_its_fourth_tile_arrives():
    dealt = {0: "1z", 1: "1z", 2: "1z", 3: "1z"}      # all four 1z to the dealer
    out = run(dealt, OPENING[:2])
    assert out[0]["reserve"] == 20 and out[1]["reserve"] == 20
    # Three 2z dealt are replaced by p 142, 143, 140; the fourth 2z is the
    # gold reveal's first tail tile (p 141), which goes to the dealer.
    out = run({0: "2z", 1: "2z", 2: "2z", 141: "2z"}, OPENING)
    assert [s["reserve"] for s in out] == [18, 18, 20]
    # Split between seats: no quad.
    out = run({0: "3z", 1: "3z", 2: "3z", 4: "3z"}, OPENING[:2])
    assert out[1]["reserve"] == 18


def test_s8_a_bonus_set_is_not_a_quad_unless_the_ruleset_says_so():
    dealt = {0: "1f", 1: "2f", 2: "3f", 3: "4f", 16: "5f", 17: "6f", 18: "7f"}
    assert run(dealt, OPENING[:2])[1]["reserve"] == 18
    rules = {"base": "fuzhou144", "set_is_quad": True}
    assert run(dealt, OPENING[:2], ruleset=rules)[1]["reserve"] == 20   # 春夏秋冬 only


def test_s8_a_flower_drawn_in_play_is_replaced_from_the_tail():
    out = run({65: "6z", 142: "5s", 143: "6z", 140: "2m"}, OPENING + [{"op": "draw", "seat": 1}])
    last = out[3]
    assert last["flowers"][1] == ["6z", "6z"]
    assert last["wall"] == 78 - 3                     # head 65, tail 143 (6z), tail 140


def test_s8_kong_at_wall_reserve_plus_4_leaves_a_final_group_of_two():
    # Reserve 40; suit tiles up to p 98; 34 draws bring W to 44 = R + 4.
    rules = {"base": "fuzhou144", "reserve_base": 40}
    draws = [{"op": "draw", "seat": (1 + j) % 4} for j in range(34)]
    tail = [{"op": "kong", "seat": 2, "kind": "exposed"}] + [{"op": "draw", "seat": 3}] * 3
    out = run(suits_then_flowers(99), OPENING + draws + tail, ruleset=rules)
    at = 3 + 34
    assert (out[at - 1]["wall"], out[at - 1]["drawable"], out[at - 1]["phase"]) == (44, 4, "play")
    assert (out[at]["reserve"], out[at]["wall"], out[at]["drawable"]) == (41, 43, 2)
    assert out[at]["phase"] == "play"
    assert [s["phase"] for s in out[at + 1:]] == ["final", "final", "draw"]
    assert [s["drawable"] for s in out[at + 1:]] == [1, 0, 0]


def test_s8_final_group_takes_tiles_without_flower_handling():
    rules = {"base": "fuzhou144", "reserve_base": 40}
    draws = [{"op": "draw", "seat": (1 + j) % 4} for j in range(35)]
    out = run(suits_then_flowers(99), OPENING + draws, ruleset=rules)
    last = out[-1]                                    # the 35th draw takes p 99, a flower
    assert (last["phase"], last["wall"], last["drawable"]) == ("final", 43, 3)
    assert last["flowers"] == [[], [], [], []]
    refused = run(suits_then_flowers(99), OPENING + draws + [{"op": "kong", "seat": 0,
                                                             "kind": "exposed"}], ruleset=rules)
    assert "not allowed" in refused[-1]["error"] and refused[-1]["reserve"] == 40


def test_s8_consecutive_kongs_to_d_below_zero_then_the_hand_is_a_draw():
    rules = {"base": "fuzhou144", "reserve_base": 40}
    draws = [{"op": "draw", "seat": (1 + j) % 4} for j in range(34)]
    kongs = [{"op": "kong", "seat": 1, "kind": "exposed"},
             {"op": "kong", "seat": 1, "kind": "concealed"},
             {"op": "kong", "seat": 2, "kind": "exposed"}]
    end = [{"op": "draw", "seat": 3}, {"op": "draw", "seat": 0},
           {"op": "kong", "seat": 0, "kind": "exposed"}]
    out = run(suits_then_flowers(99), OPENING + draws + kongs + end, ruleset=rules)[-6:]
    assert [s["drawable"] for s in out[:3]] == [2, -1, -3]
    assert [s["phase"] for s in out[:3]] == ["play", "play", "play"]
    assert out[3]["phase"] == "draw" and out[3]["wall"] == out[2]["wall"]   # nothing taken
    assert "not allowed" in out[4]["error"] and "not allowed" in out[5]["error"]


def test_s8_gold_in_reserve_counts_the_indicator_as_reserved():
    rules = {"base": "fuzhou144", "reserve_base": 20, "gold_in_reserve": True}
    out = run({142: "5s"}, OPENING, ruleset=rules)
    assert out[1]["drawable"] == 79 - 20              # before the reveal: R counts
    assert (out[2]["reserve"], out[2]["wall"], out[2]["drawable"]) == (20, 78, 78 - 19)
    assert out[2]["marker"] == stack(62)              # ceil(19 / 2) = 10 back from i = 71


# -- §9 the marker ----------------------------------------------------------------

def test_s9_marker_moves_when_the_tail_stack_empties_and_as_r_grows():
    out = run({142: "5s"}, OPENING + [{"op": "kong", "seat": 1, "kind": "concealed"}])
    assert out[2]["marker"] == stack(63)              # §12: stack 16 of seat 3
    assert out[2]["marker"] == {"seat": 3, "stack": 16}
    # The kong empties i = 71 (R = 20, 10 back from i = 70 is i = 61).
    assert out[3]["marker"] == stack(61)


def test_s9_marker_is_null_when_too_few_stacks_hold_tiles():
    out = run({}, [{"op": "take", "slot": 0}, {"op": "deal"}],
              ruleset={"base": "fuzhou144", "reserve_base": 144})
    assert out[0]["marker"] == stack(0)               # 72 stacks still hold tiles
    assert out[1]["marker"] is None


# -- §10 dealer and streak ----------------------------------------------------------

def test_s10_dealer_and_streak():
    d = Dealership(2)
    d.hand_ended(2)
    assert (d.dealer, d.wins_in_row, d.streak) == (2, 1, 0)   # 站顶: first win not counted
    d.hand_ended(2)
    assert (d.dealer, d.wins_in_row, d.streak) == (2, 2, 1)
    d.hand_ended(None)                                        # 和局: dealer stays
    assert (d.dealer, d.wins_in_row, d.streak) == (2, 2, 1)
    d.hand_ended(0)
    assert (d.dealer, d.wins_in_row, d.streak) == (3, 0, 0)
    d.hand_ended(1)
    assert d.dealer == 0
    for bad in (4, -1, True, "1"):
        try:
            d.hand_ended(bad)
        except ValueError:
            continue
        raise AssertionError(bad)
    assert d.dealer == 0


def _counting_rng(values):
    state = [0]

    def rand(n):
        v = values[state[0] % len(values)]
        state[0] += 1
        return bytes([v])
    return rand


def test_s10_first_dealer_and_dice_are_fair_draws_from_the_rng():
    assert Dealership.first(_counting_rng([6])).dealer == 2
    # Bytes 252..255 would favour faces 1..4: they are rejected.
    assert uniform(_counting_rng([255, 253, 11]), 6) == 11 % 6
    assert roll(_counting_rng([0, 5])) == (1, 6)
    counts = [0] * 6
    for b in range(252):
        counts[uniform(_counting_rng([b]), 6)] += 1
    assert counts == [42] * 6
    assert random_seat(_counting_rng([254])) == 2


# -- §11 irregular events and the event-by-event API ------------------------------

def test_s11_take_counts_irregular_and_never_corrects():
    events = OPENING + [{"op": "take", "slot": EXAMPLE.slot_of_pos[100]},
                        {"op": "take", "slot": EXAMPLE.slot_of_pos[100]},
                        {"op": "take", "slot": 144}, {"op": "take", "slot": "3"}]
    out = run({142: "5s"}, events)
    assert (out[3]["irregular"], out[3]["wall"]) == (1, 77)
    for s in out[4:]:
        assert "error" in s and s["irregular"] == 1 and s["wall"] == 77


def test_s11_wall_api_classifies_head_tail_and_irregular():
    wall = Wall(EXAMPLE, bytearray(144))
    slot = EXAMPLE.slot_of_pos
    assert wall.taken(slot[0]) == HEAD
    assert wall.taken(slot[142]) == TAIL
    assert wall.taken(slot[50]) == IRREGULAR
    assert wall.taken(slot[50]) == ALREADY_EMPTY
    assert wall.taken(144) == BAD_SLOT and wall.taken(-1) == BAD_SLOT
    assert wall.count == 141
    assert wall.put_back(slot[50]) == IRREGULAR and wall.count == 142
    assert wall.put_back(slot[50]) == NOT_EMPTY
    assert wall.put_back(slot[0]) == IRREGULAR and wall.head_pos() == 0
    assert wall.put_back(slot[142]) == IRREGULAR and wall.tail_pos() == 142
    assert wall.taken(slot[1]) == IRREGULAR           # p 0 is back: p 1 is not the head


# -- §12 the worked example -----------------------------------------------------------

def test_s12_worked_example():
    out = run({142: "5s"}, OPENING + [{"op": "draw", "seat": 1}])
    assert out[0]["head"] == {"seat": 0, "stack": 3}  # p 65: bottom of i = 32
    gold = out[2]
    assert (gold["wall"], gold["reserve"], gold["drawable"]) == (78, 18, 60)
    assert gold["gold"] == "5s" and gold["phase"] == "play"
    assert gold["tail"] == {"seat": 2, "stack": 6}
    assert gold["marker"] == {"seat": 3, "stack": 16}
    assert stack(0) == {"seat": 2, "stack": 7} and stack(11) == {"seat": 1, "stack": 0}
    assert out[3]["wall"] == 77 and out[3]["head"] == stack(33)


# -- §13 the replay tool's refusals --------------------------------------------------

def test_s13_refused_events_leave_the_state_unchanged():
    events = [{"op": "draw", "seat": 0}, {"op": "deal"}, {"op": "fly"}, {"seat": 1}, "x",
              {"op": "kong", "seat": 0, "kind": "exposed"}, {"op": "draw", "seat": 9},
              {"op": "take", "slot": None}]
    out = run({}, events)
    assert out[0]["phase"] == "new" and "not allowed" in out[0]["error"]
    base = out[1]
    assert "error" not in base
    for s in out[2:]:
        assert "error" in s
        s = dict(s)
        del s["error"]
        assert s == base


def test_s13_malformed_lines_are_named():
    good = scenario("fuzhou144", 0, (3, 4), {}, [])
    for key, value, words in (("dealer", 4, "dealer"), ("dealer", True, "dealer"),
                              ("dice", [0, 3], "1..6"), ("dice", [3], "two"),
                              ("tiles", ["1m"] * 143, "144"), ("ruleset", "x", "ruleset_name"),
                              ("events", {}, "events")):
        bad = dict(good)
        bad[key] = value
        err = replay(bad)["error"]
        assert words in err, (key, err)
    bad = dict(good)
    bad["tiles"] = list(good["tiles"])
    bad["tiles"][5] = "9z"
    assert "slot 5" in replay(bad)["error"]
    bad = dict(good)
    del bad["dice"]
    assert "dice" in replay(bad)["error"]
    assert "object" in replay([1, 2])["error"]
    del good["ruleset"]                               # the default ruleset
    assert replay(good) == []
