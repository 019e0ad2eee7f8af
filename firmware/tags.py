"""The tag table: RFID tag UID -> tile id, the table's secret `tags.txt`
(hal.secret: a file in the store, the encrypted NVS of a production board).

One tag per line, "UID code" (8 hex digits, a tile code); '#' comments.
Read line by line into two bytearrays kept sorted by UID (4 bytes of UID
and a tile id byte per tag): a lookup is a bisection that allocates
nothing, and 288 tags cost about 1.5 KB of heap. A JSON file would need the
whole table as a dict of strings in memory first, which a 64 KB heap cannot
spare.
"""

import gc

from engine_core import tiles

UNKNOWN = 255


class TagTable:
    """UIDs as big-endian bytes in four byte planes (keys[j][i] is byte j of
    entry i), sorted, and the tile id of each entry: no integers to build
    when the reader's bytes are looked up (a UID is above a board's small
    ints), and no allocation bigger than one byte per tag (a fragmented heap
    at boot has no room for one 1 KB block)."""

    def __init__(self, n):
        self.keys = [bytearray(n), bytearray(n), bytearray(n), bytearray(n)]
        self.ids = bytearray(n)
        self.n = 0
        self.path = ""

    def __len__(self):
        return self.n

    def uid(self, i):
        k = self.keys
        return (k[0][i] << 24) | (k[1][i] << 16) | (k[2][i] << 8) | k[3][i]

    def find(self, buf, at):
        """The index where the UID at buf[at:at + 4] is, or would go."""
        k = self.keys
        lo = 0
        hi = self.n
        while lo < hi:
            mid = (lo + hi) >> 1
            below = False              # entry mid < the UID?
            for j in range(4):
                if k[j][mid] != buf[at + j]:
                    below = k[j][mid] < buf[at + j]
                    break
            if below:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _equal(self, i, buf, at):
        k = self.keys
        return i < self.n and k[0][i] == buf[at] and k[1][i] == buf[at + 1] \
            and k[2][i] == buf[at + 2] and k[3][i] == buf[at + 3]

    def add(self, uid, tid):
        """Insert keeping the order; a UID listed twice is an error."""
        key = bytes(((uid >> 24) & 0xFF, (uid >> 16) & 0xFF, (uid >> 8) & 0xFF, uid & 0xFF))
        i = self.find(key, 0)
        if self._equal(i, key, 0):
            raise ValueError("tags: UID %08x is listed twice" % uid)
        for plane in self.keys + [self.ids]:        # shift entries i.. up by one
            for j in range(self.n, i, -1):
                plane[j] = plane[j - 1]
        for j in range(4):
            self.keys[j][i] = key[j]
        self.ids[i] = tid
        self.n += 1

    def lookup_at(self, buf, at):
        """Tile id of the UID at buf[at:at + 4] (big-endian), or UNKNOWN."""
        i = self.find(buf, at)
        return self.ids[i] if self._equal(i, buf, at) else UNKNOWN


def load(name, hal=None):
    """Read the tag table `name`: a file's path, or with `hal` the name of
    the HAL's secret (hal.secret), which rfid_learn writes back
    (link/service.py). ValueError names the first wrong line ("tags..."),
    or says the table cannot be read."""
    try:
        f = hal.secret(name) if hal else open(name, "rb")
        with f:
            n = 0
            for line in f:
                if line.split(b"#")[0].strip():
                    n += 1
            gc.collect()           # the counting pass left garbage: 1.4 KB must fit whole
            table = TagTable(n)
            table.path = name
            f.seek(0)
            number = 0
            for line in f:
                number += 1
                line = line.split(b"#")[0].strip().decode()
                if not line:
                    continue               # blank, or a comment
                parts = line.split()
                if len(parts) != 2 or len(parts[0]) != 8:
                    raise ValueError("tags line %d: expected 'UID code' with an 8-digit hex "
                                     "UID, not %r" % (number, line))
                # Not char by char: each one-character string would be an
                # interned name for good (docs/firmware.md, Memory).
                if parts[0].lower().strip("0123456789abcdef"):
                    raise ValueError("tags line %d: %r is not a hex UID" % (number, parts[0]))
                try:
                    tid = tiles.tile_id(parts[1])
                except ValueError:
                    raise ValueError("tags line %d: unknown tile code %r" % (number, parts[1]))
                table.add(int(parts[0], 16), tid)
    except OSError as e:
        raise ValueError("tags: cannot read %s (%s)" % (name, e))
    return table
