"""Naive reference model of the replay semantics (docs/rules.md §13), a test oracle.

Written from the rules of docs/rules.md and its decisions 1-14 only, without
looking at engine_core, so that differential tests compare two independent
readings.  Clarity over speed: plain lists and dicts, everything recomputed by
scanning, the whole state deep-copied before each event.
"""
import copy

# §1 tile codes; every z and every f tile is a flower
SUITS = [str(n) + s for s in "mps" for n in range(1, 10)]
HONORS = [str(n) + "z" for n in range(1, 8)]
BONUS = [str(n) + "f" for n in range(1, 9)]
ALL_CODES = SUITS + HONORS + BONUS

# Used when a line has no "ruleset" key (§2 calls fuzhou144 the default).
DEFAULT_RULESET = "fuzhou144"

def is_flower(code):
    # §1 every honor (z) and every f tile is a flower
    return code[-1] in ("z", "f")

def _named(stacks, reserve_base, gold_method, z_codes, f_codes):
    # §2 columns, plus the parameters shared by all three named rulesets
    return {"stacks": stacks, "reserve_base": reserve_base, "gold_method": gold_method,
            "z_codes": list(z_codes), "f_codes": list(f_codes),
            "final_group": 4, "set_is_quad": False, "gold_in_reserve": False,
            "kong_exposed": 1, "kong_concealed": 2, "quad": 2}

# §2 the three named rulesets
RULESETS = {
    "fuzhou144": _named(18, 18, "tail", HONORS, BONUS),
    "luoyuan144": _named(18, 20, "dice", HONORS, BONUS),
    "luoyuan128": _named(16, 18, "dice", ["1z", "2z", "3z", "4z", "7z"], []),
}

# D1 override keys: kind and lower bound
OVERRIDES = {
    "reserve_base": ("int", 4), "final_group": ("int", 0),
    "kong_exposed": ("int", 0), "kong_concealed": ("int", 0), "quad": ("int", 0),
    "set_is_quad": ("bool", None), "gold_in_reserve": ("bool", None),
    "gold_method": ("choice", ("tail", "dice")),
}

def full_tile_set(ruleset_name):
    # §1/§2 multiset: suits x4, the ruleset's z codes x4, its f codes x1
    rs = RULESETS[ruleset_name]
    return SUITS * 4 + rs["z_codes"] * 4 + list(rs["f_codes"])

def _is_int(v):
    return type(v) is int  # bool is not an int here

def _valid_dice(v):  # D9/D12: a list of two ints 1..6
    return isinstance(v, list) and len(v) == 2 and all(_is_int(x) and 1 <= x <= 6 for x in v)

class Refused(Exception):
    """An event the rules do not allow here; the state is restored."""

def _parse_ruleset(value):
    # D1: a name, or {"base": name, ...overrides}; None means malformed
    if isinstance(value, str):
        return copy.deepcopy(RULESETS[value]) if value in RULESETS else None
    if not isinstance(value, dict):
        return None
    base = value.get("base")
    if not isinstance(base, str) or base not in RULESETS:
        return None
    rs = copy.deepcopy(RULESETS[base])
    for key, v in value.items():
        if key == "base":
            continue
        kind, arg = OVERRIDES.get(key, (None, None))
        if not ((kind == "int" and _is_int(v) and v >= arg) or (kind == "choice" and v in arg)
                or (kind == "bool" and type(v) is bool)):
            return None  # unknown key or bad value
        rs[key] = v
    return rs

# ---------------------------------------------------------------- geometry

def _stack_of(st, i):
    # §4 draw order: stack i is at seat (c - (d+i)//S) % 4, k = (d+i) % S
    S, c, d = st["S"], st["c"], st["d"]
    return ((c - (d + i) // S) % 4, (d + i) % S)

def _slot_of(st, p):
    # §4 p = 2i + layer; §13 slot = (seat*S + k)*2 + layer
    seat, k = _stack_of(st, p // 2)
    return (seat * st["S"] + k) * 2 + p % 2

def _stack_has_tile(st, i):
    return st["wall"][2 * i] is not None or st["wall"][2 * i + 1] is not None

def _occupied_from_tail(st):
    # §9/D4/D5: stacks holding >= 1 tile, the tail end first
    return [i for i in range(4 * st["S"] - 1, -1, -1) if _stack_has_tile(st, i)]

def _head_pos(st):
    # §4/D11: head = lowest draw-order position still present (gaps skipped)
    for p in range(len(st["wall"])):
        if st["wall"][p] is not None:
            return p
    return None

def _tail_pos(st):
    # §4/D14: last stack still holding a tile, top before bottom
    occupied = _occupied_from_tail(st)
    if not occupied:
        return None
    i = occupied[0]
    return 2 * i if st["wall"][2 * i] is not None else 2 * i + 1

def _take(st, p):
    # §4 a position is taken at most once; taking from an empty wall is an error (D7)
    if p is None or st["wall"][p] is None:
        raise Refused("the wall is empty")
    code = st["wall"][p]
    st["wall"][p] = None
    return code

# ---------------------------------------------------------------- reserve

def _quad_check(st, seat):
    # §8/D2: a quad adds `quad` to R once, when its completing tile reaches the seat.
    # Received flowers = flowers still in the opening hand + flowers set aside.
    rs = st["rules"]
    received = [t for t in st["hands"][seat] if is_flower(t)] + st["flowers"][seat]
    groups = [(z, [z] * 4) for z in HONORS]
    if rs["set_is_quad"]:
        groups += [("1f-4f", ["1f", "2f", "3f", "4f"]), ("5f-8f", ["5f", "6f", "7f", "8f"])]
    for key, need in groups:
        complete = all(received.count(t) >= need.count(t) for t in need)
        if complete and [seat, key] not in st["counted_quads"]:
            st["counted_quads"].append([seat, key])
            st["reserve"] += rs["quad"]

def _set_aside(st, seat, code):
    # §6-§8 a flower goes to the seat's flowers (with the quad check)
    st["flowers"][seat].append(code)
    _quad_check(st, seat)

def _effective_reserve(st):
    # D4/§13: with gold_in_reserve the revealed indicator counts as one reserved tile
    revealed_and_reserved = st["rules"]["gold_in_reserve"] and st["gold"] is not None
    return st["reserve"] - 1 if revealed_and_reserved else st["reserve"]

def _wall_count(st):
    # §8 W = tiles still in the wall (the indicator has left it)
    return sum(1 for t in st["wall"] if t is not None)

def _drawable(st):
    # §8 D = W - R (R' per D4)
    return _wall_count(st) - _effective_reserve(st)

# ---------------------------------------------------------------- events

def _ev_take(st, ev):
    # §11/D6: irregular removal, any phase, no flower handling
    slot = ev.get("slot")
    if not _is_int(slot) or not 0 <= slot < 8 * st["S"]:
        raise Refused("bad slot")
    p = [q for q in range(8 * st["S"]) if _slot_of(st, q) == slot][0]
    if st["wall"][p] is None:
        raise Refused("slot already empty")
    st["wall"][p] = None
    st["irregular"] += 1

def _deal_one(st, seat):
    code = _take(st, _head_pos(st))
    st["hands"][seat].append(code)
    if is_flower(code):
        _quad_check(st, seat)  # D2 quads count during the deal

def _ev_deal(st, ev):
    # §5/D11: four rounds of 4 head tiles per seat from the dealer, then 1 more
    if st["phase"] != "new":
        raise Refused("deal not allowed in phase " + st["phase"])
    dealer = st["dealer"]
    for _round in range(4):
        for j in range(4):
            seat = (dealer + j) % 4
            for _n in range(4):
                _deal_one(st, seat)
    _deal_one(st, dealer)
    st["phase"] = "dealt"

def _move_flowers_out(st, seat):
    # §6 set aside every flower in the hand (already quad-checked on arrival)
    hand = st["hands"][seat]
    st["flowers"][seat] += [t for t in hand if is_flower(t)]
    st["hands"][seat] = [t for t in hand if not is_flower(t)]

def _ev_replace_flowers(st, ev):
    # §6: rounds in turn order from the dealer, replacements from the tail
    if st["phase"] != "dealt":
        raise Refused("replace_flowers not allowed in phase " + st["phase"])
    order = [(st["dealer"] + j) % 4 for j in range(4)]
    due = [sum(1 for t in st["hands"][s] if is_flower(t)) for s in range(4)]
    first_round = True
    while any(due):
        took = [0, 0, 0, 0]
        for seat in order:
            if first_round:
                _move_flowers_out(st, seat)  # round 1: the dealt flowers
            for _n in range(due[seat]):
                code = _take(st, _tail_pos(st))
                st["hands"][seat].append(code)
                if is_flower(code):
                    took[seat] += 1
                    _quad_check(st, seat)  # D2 counts when it reaches the seat
        for seat in order:
            _move_flowers_out(st, seat)  # flowers taken this round, set aside at its end
        due = took
        first_round = False
    st["phase"] = "replaced"

def _ev_reveal_gold(st, ev):
    # §7 revealing the gold; flowers turned up go to the dealer (no replacement)
    if st["phase"] != "replaced":
        raise Refused("reveal_gold not allowed in phase " + st["phase"])
    dealer = st["dealer"]
    if st["rules"]["gold_method"] == "tail":
        # §7 tail method / D9: no dice allowed
        if "dice" in ev:
            raise Refused("tail method takes no dice")
        code = _take(st, _tail_pos(st))
        while is_flower(code):
            _set_aside(st, dealer, code)
            code = _take(st, _tail_pos(st))
    else:
        # §7 dice method / D5 / D9
        dice = ev.get("dice")
        if not _valid_dice(dice):
            raise Refused("bad dice")
        n = dice[0] + dice[1]
        occupied = _occupied_from_tail(st)
        if len(occupied) < n:
            raise Refused("not enough stacks")
        i = occupied[n - 1]
        while True:
            p = 2 * i if st["wall"][2 * i] is not None else 2 * i + 1  # uppermost
            code = _take(st, p)
            if not is_flower(code):
                break
            _set_aside(st, dealer, code)
            further = [j for j in occupied if j < i and _stack_has_tile(st, j)]
            if not further:
                raise Refused("not enough stacks")
            i = further[0]  # occupied is tail-first, so this is the next one back
    st["gold"] = code
    st["phase"] = "play"

def _check_seat(ev):
    seat = ev.get("seat")
    if not _is_int(seat) or not 0 <= seat <= 3:
        raise Refused("bad seat")
    return seat

def _replace_from_tail(st, seat, code):
    # §8 a flower in play is set aside and replaced from the tail, again while flower
    while is_flower(code):
        _set_aside(st, seat, code)
        code = _take(st, _tail_pos(st))

def _ev_draw(st, ev):
    # §8/D10 a normal head draw due for `seat`
    seat = _check_seat(ev)
    if st["phase"] not in ("play", "final"):
        raise Refused("draw not allowed in phase " + st["phase"])
    D = _drawable(st)
    if D <= 0:
        st["phase"] = "draw"  # §8 the hand is a draw at once, nothing taken
    elif st["phase"] == "final":
        _take(st, _head_pos(st))  # §8 final group: counted off only
    elif D <= st["rules"]["final_group"]:
        st["phase"] = "final"
        _take(st, _head_pos(st))
    else:
        _replace_from_tail(st, seat, _take(st, _head_pos(st)))

def _ev_kong(st, ev):
    # §8/D8 raise R, then one tail replacement (flowers as in draw); play only
    seat = _check_seat(ev)
    kind = ev.get("kind")
    if kind not in ("exposed", "concealed"):
        raise Refused("bad kong kind")
    if st["phase"] != "play":
        raise Refused("kong not allowed in phase " + st["phase"])
    st["reserve"] += st["rules"]["kong_" + kind]
    _replace_from_tail(st, seat, _take(st, _tail_pos(st)))

EVENTS = {"take": _ev_take, "deal": _ev_deal, "replace_flowers": _ev_replace_flowers,
          "reveal_gold": _ev_reveal_gold, "draw": _ev_draw, "kong": _ev_kong}

def _apply(st, ev):
    # D13: non-object, missing or unknown op -> refused
    if not isinstance(ev, dict):
        raise Refused("event is not an object")
    op = ev.get("op")
    if not isinstance(op, str) or op not in EVENTS:
        raise Refused("unknown op")
    EVENTS[op](st, ev)

# ---------------------------------------------------------------- output

def _seat_stack(st, i):
    seat, k = _stack_of(st, i)
    return {"seat": seat, "stack": k}

def _where(st, p):
    return None if p is None else _seat_stack(st, p // 2)

def _view(st):
    # §13 output state
    rp = _effective_reserve(st)
    occupied = _occupied_from_tail(st)
    m = (rp + 1) // 2  # §9/D4 ceil(R'/2)
    marker = _seat_stack(st, occupied[m - 1]) if 1 <= m <= len(occupied) else None
    return {
        "phase": st["phase"],
        "wall": _wall_count(st),
        "reserve": st["reserve"],
        "drawable": _drawable(st),
        "gold": st["gold"],
        "marker": marker,
        "head": _where(st, _head_pos(st)),
        "tail": _where(st, _tail_pos(st)),
        "hand_sizes": [len(h) for h in st["hands"]],  # D3
        "flowers": [sorted(f) for f in st["flowers"]],  # D3
        "irregular": st["irregular"],
    }

def replay_scenario(scn):
    # §13 malformed line checks (D1, D12)
    if not isinstance(scn, dict):
        return {"error": "line is not an object"}
    rules = _parse_ruleset(scn.get("ruleset", DEFAULT_RULESET))
    if rules is None:
        return {"error": "bad ruleset"}
    dealer = scn.get("dealer")
    if not _is_int(dealer) or not 0 <= dealer <= 3:
        return {"error": "bad dealer"}
    dice = scn.get("dice")
    if not _valid_dice(dice):
        return {"error": "bad dice"}
    S = rules["stacks"]
    tiles = scn.get("tiles")
    if not isinstance(tiles, list) or len(tiles) != 8 * S:
        return {"error": "bad tiles length"}
    if not all(isinstance(t, str) and t in ALL_CODES for t in tiles):
        return {"error": "unknown tile code"}
    events = scn.get("events")
    if not isinstance(events, list):
        return {"error": "bad events"}

    # §4 the break: c = (dealer + d - 1) % 4, head at stack d of seat c
    d = dice[0] + dice[1]
    st = {"rules": rules, "S": S, "d": d, "c": (dealer + d - 1) % 4, "dealer": dealer,
          "phase": "new", "reserve": rules["reserve_base"], "gold": None,
          "hands": [[], [], [], []], "flowers": [[], [], [], []],
          "counted_quads": [], "irregular": 0, "wall": [None] * (8 * S)}
    for p in range(8 * S):
        st["wall"][p] = tiles[_slot_of(st, p)]  # wall indexed by draw-order position p

    # §13 one state per event; a refused event leaves the state unchanged
    out = []
    for ev in events:
        saved = copy.deepcopy(st)
        try:
            _apply(st, ev)
            out.append(_view(st))
        except Refused as exc:
            st = saved
            out.append(dict(_view(st), error=str(exc)))
    return out
