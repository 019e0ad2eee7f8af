"""Writes scenarios/tricky.jsonl: named §13 scenarios for the cases that are
easy to get wrong, each with the facts a careful reading of the rules gives
(docs/rules.md).

    python -m engine_core.tests.make_scenarios      (CPython; rerun after edits)

Every line is a valid replay input (the extra keys "name" and "expect" are
ignored by the replay tool). "expect" maps an event index to the state
fields that event must leave; test_cpy_scenarios.py checks them on both
interpreters, and the whole output against the reference model.
"""

import json
import os

from engine_core.tests.test_rules import EXAMPLE, suits_then_flowers
from engine_core.tests.walls import OPENING, scenario

HERE = os.path.join(os.path.dirname(__file__), "scenarios")


def draws(n, first=1):
    return [{"op": "draw", "seat": (first + j) % 4} for j in range(n)]


def kong(seat, kind="exposed"):
    return {"op": "kong", "seat": seat, "kind": kind}


def named(name, expect, ruleset, placed, events, dealer=0, dice=(3, 4)):
    scn = scenario(ruleset, dealer, dice, placed, events)
    scn["name"] = name
    scn["expect"] = expect
    return scn


def build():
    r40 = {"base": "fuzhou144", "reserve_base": 40}
    walls99 = suits_then_flowers(99)
    return [
        named("worked example (§12)",
              {"2": {"wall": 78, "reserve": 18, "drawable": 60, "gold": "5s",
                     "marker": {"seat": 3, "stack": 16}, "tail": {"seat": 2, "stack": 6}},
               "0": {"head": {"seat": 0, "stack": 3}},
               "3": {"head": {"seat": 0, "stack": 4}, "wall": 77}},
              "fuzhou144", {142: "5s"}, OPENING + draws(2)),
        named("flower chains in the opening (§6)",
              {"1": {"flowers": [["1z"], ["2z", "3z", "5z"], [], ["4z", "6z", "7z"]],
                     "wall": 72, "hand_sizes": [17, 16, 16, 16]}},
              "fuzhou144", {0: "1z", 4: "2z", 5: "3z", 12: "4z", 143: "5z", 141: "6z", 139: "7z"},
              OPENING),
        named("gold turned as a flower (§7 tail)",
              {"2": {"gold": "5s", "wall": 76, "flowers": [["1f", "2z"], [], [], []]}},
              "fuzhou144", {142: "1f", 143: "2z", 140: "5s"}, OPENING),
        named("flower quad in the opening (§8)",
              {"0": {"reserve": 20}, "1": {"reserve": 20, "flowers": [["1z"] * 4, [], [], []]},
               "2": {"drawable": 78 - 4 - 20}},
              "fuzhou144", {0: "1z", 1: "1z", 2: "1z", 3: "1z"}, OPENING),
        named("kong at wall = R + 4 (§8 example)",
              {"36": {"wall": 44, "drawable": 4, "phase": "play"},
               "37": {"reserve": 41, "wall": 43, "drawable": 2, "phase": "play"},
               "38": {"phase": "final", "drawable": 1},
               "39": {"phase": "final", "drawable": 0},
               "40": {"phase": "draw", "wall": 41}},
              r40, walls99, OPENING + draws(34) + [kong(2)] + draws(3, 3)),
        named("consecutive kongs to D <= 0 (§8)",
              {"37": {"drawable": 2}, "38": {"drawable": -1}, "39": {"drawable": -3, "phase": "play"},
               "40": {"phase": "draw", "wall": 41}},
              r40, walls99, OPENING + draws(34) + [kong(1), kong(1, "concealed"), kong(2)]
              + draws(1, 3) + [kong(0)]),
        named("dice method with a gap (§7 dice)",
              {"4": {"gold": "9s", "irregular": 2, "wall": 144 - 2 - 65 - 1}},
              "luoyuan144", {132: "9s"},
              [{"op": "take", "slot": EXAMPLE.slot_of_pos[p]} for p in (140, 141)]
              + OPENING[:2] + [{"op": "reveal_gold", "dice": [3, 2]}] + [kong(1)] * 3),
        named("dice method, flower turned in place (§7 dice)",
              {"2": {"gold": "7p", "flowers": [["3z"], [], [], []], "wall": 77, "reserve": 20}},
              "luoyuan144", {134: "3z", 132: "7p"},
              OPENING[:2] + [{"op": "reveal_gold", "dice": [2, 3]}] + draws(3)),
        named("custom reserve 16 with the gold in the reserve (§2, §9)",
              {"2": {"reserve": 16, "drawable": 78 - 15, "marker": {"seat": 3, "stack": 17}}},
              {"base": "fuzhou144", "reserve_base": 16, "gold_in_reserve": True}, {142: "5s"},
              OPENING + draws(4)),
        named("luoyuan128: 16 stacks, reserve 18",
              {"0": {"wall": 128 - 65, "hand_sizes": [16, 16, 16, 17]}},
              "luoyuan128", {}, OPENING[:2] + [{"op": "reveal_gold", "dice": [6, 6]}] + draws(8),
              dealer=3, dice=(6, 5)),
    ]


def main():
    path = os.path.join(HERE, "tricky.jsonl")
    with open(path, "w") as f:
        for scn in build():
            f.write(json.dumps(scn, separators=(",", ":")) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
