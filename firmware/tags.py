"""The tag table: RFID tag UID -> tile id, stored on the device (tags.txt).

One tag per line, "UID code" (8 hex digits, a tile code); '#' comments.
Read line by line into two parallel arrays kept sorted by UID (a 4-byte
UID and a tile id byte per tag): a lookup is a bisection that allocates
nothing, and 288 tags cost about 1.5 KB of heap. A JSON file would need the
whole table as a dict of strings in memory first, which a 64 KB heap cannot
spare.
"""

from array import array

from engine_core import tiles

UNKNOWN = 255


class TagError(ValueError):
    pass


class TagTable:
    def __init__(self, n):
        self.uids = array("I", bytearray(4 * n))    # 'I': 32 bits on both ports
        self.ids = bytearray(n)
        self.n = 0

    def __len__(self):
        return self.n

    def _find(self, uid):
        lo = 0
        hi = self.n
        uids = self.uids
        while lo < hi:
            mid = (lo + hi) >> 1
            if uids[mid] < uid:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def add(self, uid, tid):
        """Insert keeping the order; a UID listed twice is an error."""
        i = self._find(uid)
        if i < self.n and self.uids[i] == uid:
            raise TagError("tags: UID %08x is listed twice" % uid)
        for j in range(self.n, i, -1):
            self.uids[j] = self.uids[j - 1]
            self.ids[j] = self.ids[j - 1]
        self.uids[i] = uid
        self.ids[i] = tid
        self.n += 1

    def lookup(self, uid):
        """Tile id of a UID, or UNKNOWN."""
        i = self._find(uid)
        if i < self.n and self.uids[i] == uid:
            return self.ids[i]
        return UNKNOWN


def _parse(line, number):
    """(uid, tile id) of a line, None for a blank or comment line."""
    line = line.split("#")[0].strip()
    if not line:
        return None
    parts = line.split()
    if len(parts) != 2 or len(parts[0]) != 8:
        raise TagError("tags line %d: expected 'UID code' with an 8-digit hex UID, not %r"
                       % (number, line))
    for ch in parts[0]:
        if ch not in "0123456789abcdefABCDEF":
            raise TagError("tags line %d: %r is not a hex UID" % (number, parts[0]))
    uid = int(parts[0], 16)
    try:
        return uid, tiles.tile_id(parts[1])
    except ValueError:
        raise TagError("tags line %d: unknown tile code %r" % (number, parts[1]))


def load(path):
    """Read the tag table; TagError names the first wrong line."""
    try:
        n = 0
        with open(path) as f:
            for line in f:
                if line.split("#")[0].strip():
                    n += 1
        table = TagTable(n)
        with open(path) as f:
            number = 0
            for line in f:
                number += 1
                entry = _parse(line, number)
                if entry is not None:
                    table.add(entry[0], entry[1])
    except OSError as e:
        raise TagError("tags: cannot read %s (%s)" % (path, e))
    return table
