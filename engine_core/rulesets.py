"""Rulesets as data (docs/rules.md §2): the named ones, overrides, validation.

A ruleset is plain data so that a parlour can change its reserve or its gold
method in the table's config file without touching code. `load()` is the one
place that turns a name or an override object into a checked `Ruleset`.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

from engine_core import tiles
from engine_core.tiles import is_int

# The tables are tuples of constants: frozen into the image they stay in
# flash whole, so reading them takes no heap (docs/firmware.md, Memory).

# name, tile set, stacks per side, reserve base, gold method; the other
# parameters take the defaults of OVERRIDES. The first is the default.
NAMED = (("fuzhou144", "full144", 18, 18, "tail"),
         ("luoyuan144", "full144", 18, 20, "dice"),
         ("luoyuan128", "luoyuan128", 16, 18, "dice"))

# Tile sets as runs (first id, last id, copies) of tile ids (tiles.CODES).
SETS = (("full144", ((0, 26, 4), (27, 33, 4), (34, 41, 1))),
        ("luoyuan128", ((0, 26, 4), (27, 30, 4), (33, 33, 4))))

# Override key, kind, minimum (maximum: the tiles of the set) and default;
# None has no default: it comes from NAMED. A ruleset's tile set and stacks
# are the physical machine and cannot be overridden.
OVERRIDES = (("reserve_base", "int", 4, None),
             ("final_group", "int", 0, 4),
             ("set_is_quad", "bool", 0, False),
             ("gold_in_reserve", "bool", 0, False),
             ("kong_exposed", "int", 0, 1),
             ("kong_concealed", "int", 0, 2),
             ("quad", "int", 0, 2),
             ("gold_method", "method", 0, None))
GOLD_METHODS = ("tail", "dice")


def names():
    """The named rulesets; the first is the default."""
    return [row[0] for row in NAMED]


class Ruleset:
    """One checked ruleset. Attributes are read-only by convention."""

    def __init__(self, name, set_name, stacks, params):
        self.name = name
        self.set_name = set_name
        self.stacks = stacks
        self.reserve_base = params["reserve_base"]
        self.gold_method = params["gold_method"]
        self.final_group = params["final_group"]
        self.set_is_quad = params["set_is_quad"]
        self.gold_in_reserve = params["gold_in_reserve"]
        self.kong_exposed = params["kong_exposed"]
        self.kong_concealed = params["kong_concealed"]
        self.quad = params["quad"]

    @property
    def n_tiles(self):
        return self.stacks * 8

    def tile_counts(self):
        """The ruleset's multiset as a bytearray indexed by tile id."""
        out = bytearray(tiles.N_KINDS)
        for name, runs in SETS:
            if name == self.set_name:
                for first, last, copies in runs:
                    for tid in range(first, last + 1):
                        out[tid] = copies
        return out

    def tile_codes(self):
        """The ruleset's tiles as a list of codes, in code order."""
        counts = self.tile_counts()
        out = []
        for tid in range(tiles.N_KINDS):
            out.extend([tiles.CODES[tid]] * counts[tid])
        return out

    def audit(self, ids):
        """How a wall (tile ids per slot) differs from this ruleset's set:
        a list of (code, on the table, expected, slots of the extra copies),
        empty when the set is right (§11: missing, extra, duplicate)."""
        want = self.tile_counts()
        have = bytearray(tiles.N_KINDS)
        for t in ids:
            have[t] += 1
        out = []
        for tid in range(tiles.N_KINDS):
            if have[tid] != want[tid]:
                slots = []
                if have[tid] > want[tid]:
                    slots = [s for s in range(len(ids)) if ids[s] == tid]
                out.append((tiles.CODES[tid], have[tid], want[tid], slots))
        return out


class SettingError(ValueError):
    """A setting refused (a ruleset's here; the firmware's config and
    telemetry settings raise it too): `facts`, the reason's word ("why")
    and the fields it takes, from which a host says it in the technician's
    language (host_tools/texts: docs/protocol.md, Errors). Its own text is
    those facts, for a console ("config: timings.lift_up_ms range lo=500
    hi=20000 got=99999"): the sentences live in the host's tables, one
    per language."""

    def __init__(self, facts, where="ruleset"):
        text = "%s: %s %s" % (where, facts.get("key", "-"), facts["why"])
        for k in ("lo", "hi", "got", "gpio", "other"):
            if k in facts:
                text += " %s=%r" % (k, facts[k])
        super().__init__(text)
        self.facts = facts


def _check(key, kind, low, value, n_tiles):
    if kind == "bool":
        if value is not True and value is not False:
            raise SettingError({"why": "bool", "key": "ruleset." + key, "got": value})
    elif kind == "method":
        if value not in GOLD_METHODS:
            raise SettingError({"why": "gold_method", "key": "ruleset.gold_method", "got": value})
    elif not is_int(value, low, n_tiles):
        raise SettingError({"why": "range", "key": "ruleset." + key, "lo": low, "hi": n_tiles,
                            "got": value})


def load(spec=None):
    """A Ruleset from a name, a {"base": name, ...overrides} object, or None.

    Raises SettingError, its sentence one a technician can act on.
    """
    if spec is None:
        spec = names()[0]
    overrides = {}
    if isinstance(spec, dict):
        overrides = dict(spec)
        if "base" not in overrides:
            raise SettingError({"why": "ruleset_base", "key": "ruleset.base"})
        base = overrides.pop("base")
    else:
        base = spec
    named = None
    for row in NAMED:
        if row[0] == base:
            named = row
    if named is None:
        raise SettingError({"why": "ruleset_name", "key": "ruleset", "got": base})
    stacks = named[2]
    params = {"reserve_base": named[3], "gold_method": named[4]}
    for key, _kind, _low, default in OVERRIDES:
        if default is not None:
            params[key] = default
    for key in sorted(overrides):
        row = None
        for r in OVERRIDES:
            if r[0] == key:
                row = r
        if row is None:
            raise SettingError({"why": "unknown_key", "key": "ruleset." + str(key)})
        _check(key, row[1], row[2], overrides[key], stacks * 8)
        params[key] = overrides[key]
    return Ruleset(base, named[1], stacks, params)
