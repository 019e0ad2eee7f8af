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
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

N_KINDS = const(42)
_FIRST_HONOR = const(27)  # 1z (hand.py keeps its own copy, and 1f = 34)
NO_TILE = const(255)      # "nothing here" in a tile bytearray

# The code of every tile id, 2 characters each, in one string constant: on a
# board a string stays in flash (ROMFS), where a tuple of 42 strings costs
# about 2 KB of heap. CODES reads it like a tuple of codes. A private const:
# the compiler puts the string where it is used, no global or name is kept.
_CODE_TEXT = const("1m2m3m4m5m6m7m8m9m1p2p3p4p5p6p7p8p9p1s2s3s4s5s6s7s8s9s1z2z3z4z5z6z7z1f2f3f4f5f6f7f8f")


class _Codes:
    """tiles.CODES: indexable like a tuple of codes, and so iterable and
    searchable too (`for`, `in` and list() index it until IndexError;
    `tile_id(code)` finds a code's index): each method costs heap on the
    board, so only these two."""

    def __len__(self):
        return N_KINDS

    def __getitem__(self, tid):
        if tid < 0:
            tid += N_KINDS
        if not 0 <= tid < N_KINDS:
            raise IndexError("tile id out of range")
        return _CODE_TEXT[2 * tid:2 * tid + 2]



CODES = _Codes()


def tile_id(code):
    """The id of a code string; ValueError names the bad code."""
    i = _CODE_TEXT.find(code) if isinstance(code, str) and len(code) == 2 else -1
    while i >= 0 and i % 2:
        i = _CODE_TEXT.find(code, i + 1)
    if i < 0:
        raise ValueError("unknown tile code %r" % (code,))
    return i // 2


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
