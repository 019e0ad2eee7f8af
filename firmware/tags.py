"""The tag table: RFID tag UID -> tile id, stored on the device (tags.json).

Held as two parallel sorted arrays (a 4-byte UID per entry and a tile id
byte) and searched by bisection, so a lookup allocates nothing and 288
tags cost about 1.5 KB instead of a dict of strings.
"""

import json
from array import array

from engine_core import tiles

UNKNOWN = 255


class TagError(ValueError):
    pass


class TagTable:
    def __init__(self, pairs):
        """`pairs`: (uid int, tile code) in any order; duplicates refused."""
        pairs = sorted(pairs)
        self.uids = array("I", [0] * len(pairs))   # 'I' is 32-bit on both ports
        self.ids = bytearray(len(pairs))
        last = -1
        for i in range(len(pairs)):
            uid, code = pairs[i]
            if uid == last:
                raise TagError("tags: UID %08x is listed twice" % uid)
            try:
                self.ids[i] = tiles.tile_id(code)
            except ValueError:
                raise TagError("tags: UID %08x has unknown tile code %r" % (uid, code))
            self.uids[i] = uid
            last = uid

    def __len__(self):
        return len(self.ids)

    def lookup(self, uid):
        """Tile id of a UID, or UNKNOWN."""
        lo = 0
        hi = len(self.ids)
        uids = self.uids
        while lo < hi:
            mid = (lo + hi) >> 1
            if uids[mid] < uid:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self.ids) and uids[lo] == uid:
            return self.ids[lo]
        return UNKNOWN


def load(path):
    try:
        with open(path) as f:
            data = json.loads(f.read())
    except (OSError, ValueError) as e:
        raise TagError("tags: cannot read %s (%s)" % (path, e))
    if not isinstance(data, dict) or data.get("format") != 1 or not isinstance(data.get("tags"), dict):
        raise TagError("tags: %s must be {\"format\": 1, \"tags\": {uid: code}}" % path)
    pairs = []
    for key in data["tags"]:
        try:
            uid = int(key, 16)
        except ValueError:
            raise TagError("tags: %r is not a hex UID" % key)
        if len(key) != 8:
            raise TagError("tags: UID %r must be 8 hex digits" % key)
        pairs.append((uid, data["tags"][key]))
    return TagTable(pairs)
