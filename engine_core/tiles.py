"""Tile codes (docs/rules.md §1) and their compact ids.

A tile kind is stored as one byte everywhere in the core (walls are
bytearrays), so the code string only appears at the edges (JSON in, JSON out).

    id  0..8   1m..9m   characters  suit
    id  9..17  1p..9p   dots        suit
    id 18..26  1s..9s   bamboo      suit
    id 27..33  1z..7z   winds and dragons: flowers in Fuzhou rules
    id 34..41  1f..8f   seasons and plants: flowers, one copy each
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

N_KINDS = const(42)
_FIRST_HONOR = const(27)  # 1z (hand.py keeps its own copy, and 1f = 34)
NO_TILE = const(255)      # "nothing here" in a tile bytearray

# The code of every tile id. A tuple of constants: frozen into the image
# it stays in flash whole (no heap at import, none when a code is read).
CODES = ("1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m",
         "1p", "2p", "3p", "4p", "5p", "6p", "7p", "8p", "9p",
         "1s", "2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s",
         "1z", "2z", "3z", "4z", "5z", "6z", "7z",
         "1f", "2f", "3f", "4f", "5f", "6f", "7f", "8f")


def tile_id(code):
    """The id of a code string; ValueError names the bad code."""
    if code not in CODES:
        raise ValueError("unknown tile code %r" % (code,))
    return CODES.index(code)


def is_flower(tid):
    """Every honor (z) and every bonus tile (f) is a flower in Fuzhou rules."""
    return tid >= _FIRST_HONOR


def counts_of(seq):
    """Multiset of a list of codes as a bytearray indexed by tile id."""
    out = bytearray(N_KINDS)
    for c in seq:
        out[tile_id(c)] += 1
    return out


def is_int(v, lo, hi):
    """A whole number lo..hi: the one integer check of every input. True and
    False are ints that compare equal to 1/0 on both interpreters; as input
    they are mistakes, so they are refused. (Here rather than in a module of
    its own: a module costs the controller's heap its object and two
    interned names.)"""
    return isinstance(v, int) and v is not True and v is not False and lo <= v <= hi
