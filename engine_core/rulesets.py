"""Rulesets as data (spec §2): the named ones, overrides, validation.

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

# The tables are string constants, parsed when a ruleset is loaded: on a
# board strings stay in flash (ROMFS) while tuples and dicts would take heap.

# Private constants (`_X = const(...)`): compiled away on the board, no
# global and no interned name (docs/firmware.md, Memory).

# name, tile set, stacks per side, reserve base, gold method; the other
# parameters take the defaults of _OVERRIDES.
_NAMED = const("""fuzhou144 full144 18 18 tail
luoyuan144 full144 18 20 dice
luoyuan128 luoyuan128 16 18 dice""")      # the first is the default

# Tile sets as runs of tile ids (tiles.CODES) with their copies.
_SETS = const("""full144 0-26:4 27-33:4 34-41:1
luoyuan128 0-26:4 27-30:4 33-33:4""")

# Override key, kind, minimum (maximum: the tiles of the set) and default;
# "-" has no default: it comes from _NAMED. A ruleset's tile set and stacks
# are the physical machine and cannot be overridden.
_OVERRIDES = const("""reserve_base int 4 -
final_group int 0 4
set_is_quad bool 0 false
gold_in_reserve bool 0 false
kong_exposed int 0 1
kong_concealed int 0 2
quad int 0 2
gold_method method 0 -""")
_GOLD_METHODS = const("tail dice")


def _rows(table):
    return [line.split() for line in table.split("\n")]


def names():
    """The named rulesets; the first is the default."""
    return [row[0] for row in _rows(_NAMED)]


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
        for row in _rows(_SETS):
            if row[0] == self.set_name:
                for run in row[1:]:
                    span, copies = run.split(":")
                    first, last = span.split("-")
                    for tid in range(int(first), int(last) + 1):
                        out[tid] = int(copies)
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


def _check(key, kind, low, value, n_tiles):
    if kind == "bool":
        if value is not True and value is not False:
            raise ValueError("ruleset: %s must be true or false, not %r" % (key, value))
    elif kind == "method":
        if value not in _GOLD_METHODS.split():
            raise ValueError("ruleset: gold_method must be 'tail' or 'dice', not %r" % (value,))
    elif not is_int(value, low, n_tiles):
        raise ValueError("ruleset: %s must be a whole number %d..%d, not %r"
                           % (key, low, n_tiles, value))


def load(spec=None):
    """A Ruleset from a name, a {"base": name, ...overrides} object, or None.

    Raises ValueError with a sentence a technician can act on (no class of
    its own: the firmware forgets this module after boot, but a name stays).
    """
    if spec is None:
        spec = names()[0]
    overrides = {}
    if isinstance(spec, dict):
        overrides = dict(spec)
        if "base" not in overrides:
            raise ValueError("ruleset: an override object needs \"base\": one of %s"
                               % ", ".join(names()))
        base = overrides.pop("base")
    else:
        base = spec
    named = None
    for row in _rows(_NAMED):
        if row[0] == base:
            named = row
    if named is None:
        raise ValueError("ruleset: unknown name %r (known: %s)" % (base, ", ".join(names())))
    stacks = int(named[2])
    params = {"reserve_base": int(named[3]), "gold_method": named[4]}
    kinds = {}
    for key, kind, low, default in _rows(_OVERRIDES):
        kinds[key] = (kind, int(low))
        if default != "-":
            params[key] = (default == "true") if kind == "bool" else int(default)
    for key in sorted(overrides):
        if key not in kinds:
            raise ValueError("ruleset: unknown parameter %r (known: base, %s)"
                               % (key, ", ".join([row[0] for row in _rows(_OVERRIDES)])))
        _check(key, kinds[key][0], kinds[key][1], overrides[key], stacks * 8)
        params[key] = overrides[key]
    return Ruleset(base, named[1], stacks, params)
