"""Rulesets as data (spec §2): the named ones, overrides, validation.

A ruleset is plain data so that a parlour can change its reserve or its gold
method in the table's config file without touching code. `load()` is the one
place that turns a name or an override object into a checked `Ruleset`.
"""

from engine_core import tiles
from engine_core.check import is_int

SUITS = tuple(tiles.CODES[:tiles.FIRST_HONOR])
HONORS = ("1z", "2z", "3z", "4z", "5z", "6z", "7z")
BONUS = tuple(tiles.CODES[tiles.FIRST_BONUS:])

# Tile sets as (codes, copies) groups; the sets are built on demand.
_SETS = {
    "full144": ((SUITS, 4), (HONORS, 4), (BONUS, 1)),
    "luoyuan128": ((SUITS, 4), (("1z", "2z", "3z", "4z", "7z"), 4)),
}

# name -> (tile set, stacks per side, reserve base, gold method).
# Every other parameter takes DEFAULTS.
NAMED = {
    "fuzhou144": ("full144", 18, 18, "tail"),
    "luoyuan144": ("full144", 18, 20, "dice"),
    "luoyuan128": ("luoyuan128", 16, 18, "dice"),
}
DEFAULT_NAME = "fuzhou144"

DEFAULTS = {
    "final_group": 4,
    "set_is_quad": False,
    "gold_in_reserve": False,
    "kong_exposed": 1,
    "kong_concealed": 2,
    "quad": 2,
}

# Override key -> (kind, minimum). A ruleset's tile set and stacks are the
# physical machine and cannot be overridden; everything else can.
_OVERRIDES = {
    "reserve_base": ("int", 4),
    "final_group": ("int", 0),
    "set_is_quad": ("bool", 0),
    "gold_in_reserve": ("bool", 0),
    "kong_exposed": ("int", 0),
    "kong_concealed": ("int", 0),
    "quad": ("int", 0),
    "gold_method": ("method", 0),
}
GOLD_METHODS = ("tail", "dice")


class RulesetError(ValueError):
    pass


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
        for codes, copies in _SETS[self.set_name]:
            for c in codes:
                out[tiles.tile_id(c)] = copies
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

    def as_dict(self):
        d = {"name": self.name, "stacks": self.stacks,
             "reserve_base": self.reserve_base, "gold_method": self.gold_method}
        for k in DEFAULTS:
            d[k] = getattr(self, k)
        return d


def _check(key, value, n_tiles):
    kind, low = _OVERRIDES[key]
    if kind == "bool":
        if value is not True and value is not False:
            raise RulesetError("ruleset: %s must be true or false, not %r" % (key, value))
    elif kind == "method":
        if value not in GOLD_METHODS:
            raise RulesetError("ruleset: gold_method must be 'tail' or 'dice', not %r" % (value,))
    else:
        if not is_int(value, low, n_tiles):
            raise RulesetError("ruleset: %s must be a whole number %d..%d, not %r" % (key, low, n_tiles, value))


def load(spec=None):
    """A Ruleset from a name, a {"base": name, ...overrides} object, or None.

    Raises RulesetError with a sentence a technician can act on.
    """
    if spec is None:
        spec = DEFAULT_NAME
    overrides = {}
    if isinstance(spec, dict):
        overrides = dict(spec)
        if "base" not in overrides:
            raise RulesetError("ruleset: an override object needs \"base\": one of %s"
                               % ", ".join(sorted(NAMED)))
        base = overrides.pop("base")
    else:
        base = spec
    if not isinstance(base, str) or base not in NAMED:
        raise RulesetError("ruleset: unknown name %r (known: %s)"
                           % (base, ", ".join(sorted(NAMED))))
    set_name, stacks, reserve_base, method = NAMED[base]
    params = dict(DEFAULTS)
    params["reserve_base"] = reserve_base
    params["gold_method"] = method
    for key in sorted(overrides):
        if key not in _OVERRIDES:
            raise RulesetError("ruleset: unknown parameter %r (known: base, %s)"
                               % (key, ", ".join(sorted(_OVERRIDES))))
        _check(key, overrides[key], stacks * 8)
        params[key] = overrides[key]
    return Ruleset(base, set_name, stacks, params)
