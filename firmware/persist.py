"""What must survive a power cut at any instant: the table's counters and
its fault log, in one file of the board's flash.

Written whole to NAME.new, then renamed over NAME: the rename is atomic
(littlefs on the board, a POSIX file system on the PC), so a cut leaves
the old file or the new one, never a mix. The text carries its CRC-16
(the link's, firmware/frame.py): a file damaged on the flash is found
and said so, never read as counters.

Both ways the JSON streams through the file: json writes and reads it in
small pieces, the CRC is taken as they pass, and no text of the whole file
is ever in the heap (three copies of it, 1.5 KB each, were the largest
blocks a save asked for, at a fault, when the heap is at its fullest).
"""

import io
import json
import os

from firmware.frame import crc16

_HEAD = b"0000 "                # the CRC in 4 hex digits and a space, then the JSON


class _Crc(io.IOBase):
    """json.dump's stream: writes through to the file, and the CRC of what
    passed. MicroPython's json writes bytes-like pieces, CPython's str."""

    def __init__(self, f):
        self.f = f
        self.crc = 0xFFFF

    def write(self, piece):
        data = piece.encode() if isinstance(piece, str) else piece
        self.crc = crc16(data, self.crc)
        self.f.write(data)
        return len(piece)


def save(path, obj):
    with open(path + ".new", "wb") as f:
        f.write(_HEAD)
        out = _Crc(f)
        json.dump(obj, out)
        f.seek(0)
        f.write(b"%04x" % out.crc)
    os.rename(path + ".new", path)


def load(path):
    """The object last saved; None if there is none yet; ValueError if the
    file is damaged (its CRC or its JSON)."""
    try:
        f = open(path, "rb")
    except OSError:
        return None
    with f:
        head = f.read(len(_HEAD))
        crc = 0xFFFF
        chunk = bytearray(64)
        n = f.readinto(chunk)
        while n:
            crc = crc16(chunk, crc, 0, n)
            n = f.readinto(chunk)
    try:
        good = len(head) == len(_HEAD) and head[4:] == b" " and int(head[:4], 16) == crc
    except ValueError:
        good = False
    if not good:
        raise ValueError("%s is damaged (its CRC does not match)" % path)
    with open(path) as f:
        f.read(len(_HEAD))
        try:
            return json.load(f)
        except ValueError as e:
            raise ValueError("%s is damaged (%s)" % (path, e))
