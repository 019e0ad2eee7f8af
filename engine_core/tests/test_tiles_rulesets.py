"""docs/rules.md §1 (tiles) and §2 (rulesets). Runs on CPython and MicroPython."""

from engine_core import tiles
from engine_core.rulesets import SettingError, load


def _raises(fn, arg, facts):
    """fn(arg) raises SettingError with these facts (and no others), its
    text naming the key and the reason's word."""
    try:
        fn(arg)
    except SettingError as e:
        assert e.facts == facts, (arg, e.facts)
        assert str(e).startswith("ruleset: %s %s" % (facts.get("key", "-"), facts["why"])), str(e)
        return
    raise AssertionError("no error for %r" % (arg,))


def test_s1_codes_round_trip_and_flower_class():
    assert len(tiles.CODES) == tiles.N_KINDS == 42
    for tid, c in enumerate(tiles.CODES):
        assert tiles.tile_id(c) == tid
        assert tiles.is_flower(tid) == (c[1] in "zf")


def test_s1_hand_copies_the_id_layout():
    # hand.py has private const() copies of 1z's and 1f's ids; on CPython
    # const() is a plain function, so the names are there to compare.
    from engine_core import hand
    if hasattr(hand, "_FIRST_HONOR"):
        assert hand._FIRST_HONOR == tiles.tile_id("1z")
        assert hand._FIRST_BONUS == tiles.tile_id("1f")
        assert hand._N_FLOWER == tiles.N_KINDS - tiles.tile_id("1z")


def test_s1_unknown_codes_are_named():
    for bad in ("0m", "8z", "9f", "1x", "", None, 5):
        try:
            tiles.tile_id(bad)
        except ValueError as e:
            assert "unknown tile code" in str(e), str(e)
            continue
        raise AssertionError("no error for %r" % (bad,))


def test_s2_fuzhou144_full_set():
    r = load("fuzhou144")
    assert (r.stacks, r.reserve_base, r.gold_method) == (18, 18, "tail")
    codes = r.tile_codes()
    assert len(codes) == 144 == r.n_tiles
    assert codes.count("5m") == 4 and codes.count("7z") == 4 and codes.count("3f") == 1
    assert sum(1 for c in codes if c[1] in "zf") == 36


def test_s2_luoyuan_sets():
    r = load("luoyuan144")
    assert (r.stacks, r.reserve_base, r.gold_method, r.n_tiles) == (18, 20, "dice", 144)
    r = load("luoyuan128")
    assert (r.stacks, r.reserve_base, r.gold_method) == (16, 18, "dice")
    codes = r.tile_codes()
    assert len(codes) == 128 == r.stacks * 8
    for c in ("5z", "6z", "1f", "8f"):
        assert c not in codes
    for c in ("1z", "2z", "3z", "4z", "7z"):
        assert codes.count(c) == 4


def test_s2_defaults_of_every_named_ruleset():
    for name in ("fuzhou144", "luoyuan144", "luoyuan128"):
        r = load(name)
        assert r.final_group == 4 and r.set_is_quad is False and r.gold_in_reserve is False
        assert (r.kong_exposed, r.kong_concealed, r.quad) == (1, 2, 2)
    assert load(None).name == "fuzhou144"


def test_s2_overrides_apply():
    r = load({"base": "fuzhou144", "reserve_base": 16, "final_group": 0,
              "set_is_quad": True, "gold_in_reserve": True, "kong_exposed": 2,
              "kong_concealed": 3, "quad": 1, "gold_method": "dice"})
    assert (r.reserve_base, r.final_group, r.set_is_quad, r.gold_in_reserve) == (16, 0, True, True)
    assert (r.kong_exposed, r.kong_concealed, r.quad, r.gold_method) == (2, 3, 1, "dice")
    assert r.stacks == 18


def test_s2_bad_rulesets_get_clear_errors():
    _raises(load, "shanghai", {"why": "ruleset_name", "key": "ruleset", "got": "shanghai"})
    _raises(load, {"reserve_base": 16}, {"why": "ruleset_base", "key": "ruleset.base"})
    _raises(load, {"base": "fuzhou144", "stacks": 12}, {"why": "unknown_key",
                                                        "key": "ruleset.stacks"})
    for key, value in (("reserve_base", 3), ("reserve_base", "18"), ("reserve_base", True),
                       ("quad", -1)):
        lo = 4 if key == "reserve_base" else 0
        _raises(load, {"base": "fuzhou144", key: value},
                {"why": "range", "key": "ruleset." + key, "lo": lo, "hi": 144, "got": value})
    _raises(load, {"base": "fuzhou144", "set_is_quad": 1}, {"why": "bool",
                                                            "key": "ruleset.set_is_quad", "got": 1})
    _raises(load, {"base": "fuzhou144", "gold_method": "coin"},
            {"why": "gold_method", "key": "ruleset.gold_method", "got": "coin"})
    _raises(load, 7, {"why": "ruleset_name", "key": "ruleset", "got": 7})


def test_s11_audit_names_missing_extra_and_duplicate_tiles():
    r = load("fuzhou144")
    ids = bytearray(tiles.tile_id(c) for c in r.tile_codes())
    assert r.audit(ids) == []
    ids[0] = tiles.tile_id("9s")         # a 1m read as a fifth 9s
    ids[143] = tiles.tile_id("1f")       # the 8f read as a second 1f
    found = r.audit(ids)
    assert ("1m", 3, 4, []) in found and ("8f", 0, 1, []) in found
    assert ("9s", 5, 4, [0, 104, 105, 106, 107]) in found
    assert ("1f", 2, 1, [136, 143]) in found
    assert len(found) == 4
