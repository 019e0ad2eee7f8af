"""Physical tiles and their tags (docs/hardware.md, "Tags").

A tile is an object, not a code: the same code exists four times (and
eight with two sets), so the model follows each piece.
"""

from engine_core import tiles as core_tiles

TAG_PREFIX = 0x4D4A


SET_STEP = 0x10       # copy byte of set n: 0x10 * n + copy (firmware/tags.txt)


def tag_uid(tid, copy, set_no=0):
    """`0x4D4A`, tile id, copy: 0x4D4A1B02 is the third copy of 1z in the
    first set, 0x4D4A1B12 the same tile of the second set."""
    return (TAG_PREFIX << 16) | (tid << 8) | (SET_STEP * set_no + copy)


class Tile:
    __slots__ = ("tid", "copy", "uid", "set_no", "extra")

    def __init__(self, tid, copy, set_no, extra=False):
        self.tid = tid
        self.copy = copy
        self.set_no = set_no    # which physical set (0, 1)
        self.uid = self.proper_uid()
        self.extra = extra      # injected by the extra_tile fault

    def proper_uid(self):
        return tag_uid(self.tid, self.copy, self.set_no)

    @property
    def code(self):
        return core_tiles.CODES[self.tid]

    def __repr__(self):
        return "Tile(%s#%d set %d uid %08x)" % (self.code, self.copy, self.set_no, self.uid)


def make_set(ruleset, set_no):
    """One physical set of the ruleset's tiles, in code order."""
    out = []
    seen = {}
    for code in ruleset.tile_codes():
        tid = core_tiles.tile_id(code)
        copy = seen.get(tid, 0)
        seen[tid] = copy + 1
        out.append(Tile(tid, copy, set_no))
    return out
