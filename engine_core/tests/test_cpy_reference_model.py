"""Checks of the reference model against the worked examples of docs/rules.md (§12, §8)."""
try:
    from . import reference_model as rm  # when tests/ is a package
except ImportError:
    import reference_model as rm

S = 18  # fuzhou144 stacks per side


def stack_of(dealer, dice, i):
    # §4, restated here: c = (dealer + d - 1) % 4; seat = (c - (d+i)//S) % 4, k = (d+i) % S
    d = sum(dice)
    c = (dealer + d - 1) % 4
    return (c - (d + i) // S) % 4, (d + i) % S


def slot_of(dealer, dice, p):
    # §13 physical slot = (seat*S + k)*2 + layer, with p = 2i + layer
    seat, k = stack_of(dealer, dice, p // 2)
    return (seat * S + k) * 2 + p % 2


def tiles_from_draw_order(dealer, dice, by_p):
    tiles = [None] * len(by_p)
    for p, code in enumerate(by_p):
        tiles[slot_of(dealer, dice, p)] = code
    assert None not in tiles
    return tiles


def run(by_p, events, dealer=0, dice=(3, 4), ruleset="fuzhou144"):
    scn = {"ruleset": ruleset, "dealer": dealer, "dice": list(dice),
           "tiles": tiles_from_draw_order(dealer, dice, by_p), "events": events}
    return rm.replay_scenario(scn)


def example_wall():
    # §12: no dealt tile (p = 0..64) is a flower and the first tail tile (p = 142) is a suit
    tiles = rm.full_tile_set("fuzhou144")
    assert len(tiles) == 144 and len([t for t in tiles if not rm.is_flower(t)]) == 108
    tiles.remove("5p")
    suits = [t for t in tiles if not rm.is_flower(t)]
    flowers = [t for t in tiles if rm.is_flower(t)]
    rest = suits[65:] + flowers  # 42 suits + 36 flowers for the untouched positions
    by_p = suits[:65] + rest[:142 - 65] + ["5p"] + rest[142 - 65:]
    assert len(by_p) == 144 and sorted(by_p) == sorted(rm.full_tile_set("fuzhou144"))
    return by_p


def test_geometry_of_worked_example():
    # §12 head, tail, the i = 11 stack, p = 65, and the marker stack i = 63
    assert stack_of(0, (3, 4), 0) == (2, 7)
    assert stack_of(0, (3, 4), 71) == (2, 6)
    assert stack_of(0, (3, 4), 11) == (1, 0)
    assert stack_of(0, (3, 4), 32) == (0, 3)
    assert stack_of(0, (3, 4), 63) == (3, 16)
    # the model agrees: untouched wall, and after removing stacks i = 0..10 the head is i = 11
    by_p = example_wall()
    takes = [{"op": "take", "slot": slot_of(0, (3, 4), p)} for p in range(22)]
    states = run(by_p, takes)
    assert states[0]["tail"] == {"seat": 2, "stack": 6}
    assert states[0]["head"] == {"seat": 2, "stack": 7}
    assert states[-1]["head"] == {"seat": 1, "stack": 0}
    assert states[-1]["irregular"] == 22 and states[-1]["wall"] == 122
    assert all("error" not in s for s in states)


def test_worked_example_replay():
    by_p = example_wall()
    dealt, replaced, revealed = run(by_p, [{"op": "deal"}, {"op": "replace_flowers"},
                                           {"op": "reveal_gold"}])
    assert dealt["phase"] == "dealt" and dealt["wall"] == 144 - 65
    assert dealt["hand_sizes"] == [17, 16, 16, 16]
    assert dealt["head"] == {"seat": 0, "stack": 3}  # p = 65, bottom of i = 32
    assert replaced["phase"] == "replaced" and replaced["wall"] == 79
    assert replaced["flowers"] == [[], [], [], []]
    assert revealed["phase"] == "play"
    assert revealed["gold"] == "5p"
    assert revealed["wall"] == 78 and revealed["reserve"] == 18 and revealed["drawable"] == 60
    assert revealed["head"] == {"seat": 0, "stack": 3}
    assert revealed["tail"] == {"seat": 2, "stack": 6}  # i = 71 still holds p = 143
    assert revealed["marker"] == {"seat": 3, "stack": 16}
    assert revealed["hand_sizes"] == [17, 16, 16, 16]


def test_deal_takes_p0_to_p64():
    by_p = example_wall()
    events = [{"op": "deal"}]
    events += [{"op": "take", "slot": slot_of(0, (3, 4), p)} for p in range(66)]
    states = run(by_p, events)
    for s in states[1:66]:  # p = 0..64 were dealt: already empty
        assert "error" in s and s["irregular"] == 0 and s["wall"] == 79
    assert "error" not in states[66] and states[66]["irregular"] == 1
    assert states[66]["wall"] == 78 and states[66]["head"] == {"seat": 0, "stack": 4}


def kong_wall():
    # 36 flowers dealt (p = 0..35, no seat gets a quad), suits everywhere else
    flowers = rm.HONORS * 4 + rm.BONUS
    suits = [t for t in rm.full_tile_set("fuzhou144") if not rm.is_flower(t)]
    return flowers + suits


def test_kong_at_wall_r_plus_4_gives_final_group_of_two():
    by_p = kong_wall()
    opening = run(by_p, [{"op": "deal"}, {"op": "replace_flowers"}, {"op": "reveal_gold"}])
    replaced, revealed = opening[1], opening[2]
    assert replaced["hand_sizes"] == [17, 16, 16, 16]
    assert [len(f) for f in replaced["flowers"]] == [12, 8, 8, 8]
    assert replaced["reserve"] == 18
    assert revealed["wall"] == 144 - 65 - 36 - 1 and revealed["drawable"] == 24
    assert revealed["gold"] == by_p[106]  # top of i = 53, after 36 tail replacements
    assert revealed["marker"] == {"seat": 0, "stack": 16}  # i = 45
    events = [{"op": "deal"}, {"op": "replace_flowers"}, {"op": "reveal_gold"}]
    events += [{"op": "draw", "seat": n % 4} for n in range(20)]
    events += [{"op": "kong", "seat": 2, "kind": "exposed"}]
    events += [{"op": "draw", "seat": 3}, {"op": "kong", "seat": 0, "kind": "exposed"},
               {"op": "draw", "seat": 0}, {"op": "draw", "seat": 1}, {"op": "draw", "seat": 1}]
    states = run(by_p, events)
    before = states[22]
    assert before["phase"] == "play"
    assert before["wall"] == before["reserve"] + 4 == 22 and before["drawable"] == 4
    kong = states[23]  # §8: R = N + 1, W = N + 3, D = 2
    assert kong["phase"] == "play" and kong["reserve"] == 19
    assert kong["wall"] == 21 and kong["drawable"] == 2
    assert states[24]["phase"] == "final" and states[24]["drawable"] == 1
    assert "error" in states[25] and states[25]["reserve"] == 19  # no kong in the final group
    assert states[26]["phase"] == "final" and states[26]["drawable"] == 0
    assert states[27]["phase"] == "draw" and states[27]["wall"] == 19
    assert "error" in states[28] and states[28]["phase"] == "draw"
    assert all("error" not in s for i, s in enumerate(states) if i not in (25, 28))


def test_quad_dealt_raises_reserve_once():
    others = [z for z in rm.HONORS if z != "1z"]
    by_p = ["1z"] * 4 + others * 4 + rm.BONUS + kong_wall()[36:]  # dealer: four 1z in round 1
    assert sorted(by_p) == sorted(rm.full_tile_set("fuzhou144"))
    states = run(by_p, [{"op": "deal"}, {"op": "replace_flowers"}])
    assert states[0]["reserve"] == 20 and states[0]["flowers"] == [[], [], [], []]
    assert states[1]["reserve"] == 20 and states[1]["flowers"][0].count("1z") == 4


def test_malformed_lines():
    good = {"ruleset": "fuzhou144", "dealer": 0, "dice": [3, 4],
            "tiles": example_wall(), "events": []}
    assert rm.replay_scenario(good) == []
    for key, bad in [("ruleset", "fuzhou"), ("ruleset", {"base": "fuzhou144", "x": 1}),
                     ("ruleset", {"base": "fuzhou144", "reserve_base": 3}),
                     ("dealer", 4), ("dealer", True), ("dice", [0, 3]), ("dice", [3]),
                     ("tiles", good["tiles"][:-1]), ("tiles", ["9z"] + good["tiles"][1:])]:
        scn = dict(good)
        scn[key] = bad
        result = rm.replay_scenario(scn)
        assert isinstance(result, dict) and isinstance(result.get("error"), str), (key, bad)
