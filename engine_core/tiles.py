"""Tile codes (spec §1) and their compact ids.

A tile kind is stored as one byte everywhere in the core (walls are
bytearrays), so the code string only appears at the edges (JSON in, JSON out).

    id  0..8   1m..9m   characters  suit
    id  9..17  1p..9p   dots        suit
    id 18..26  1s..9s   bamboo      suit
    id 27..33  1z..7z   winds and dragons: flowers in Fuzhou rules
    id 34..41  1f..8f   seasons and plants: flowers, one copy each
"""

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x

N_KINDS = const(42)
FIRST_HONOR = const(27)   # 1z
FIRST_BONUS = const(34)   # 1f
NO_TILE = const(255)      # "nothing here" in a tile bytearray

CODES = tuple(
    ["%dm" % n for n in range(1, 10)]
    + ["%dp" % n for n in range(1, 10)]
    + ["%ds" % n for n in range(1, 10)]
    + ["%dz" % n for n in range(1, 8)]
    + ["%df" % n for n in range(1, 9)]
)

_IDS = {}
for _i, _c in enumerate(CODES):
    _IDS[_c] = _i


def tile_id(code):
    """The id of a code string; ValueError names the bad code."""
    tid = _IDS.get(code) if isinstance(code, str) else None
    if tid is None:
        raise ValueError("unknown tile code %r" % (code,))
    return tid


def code(tid):
    return CODES[tid]


def is_flower(tid):
    """Every honor (z) and every bonus tile (f) is a flower in Fuzhou rules."""
    return tid >= FIRST_HONOR


def counts_of(codes):
    """Multiset of a list of codes as a bytearray indexed by tile id."""
    out = bytearray(N_KINDS)
    for c in codes:
        out[tile_id(c)] += 1
    return out
