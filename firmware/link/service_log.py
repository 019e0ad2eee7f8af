"""The service log's file: what the technicians' sessions did, the last
_SLOTS entries, in a ring of fixed-size records in one file of the board's
flash (docs/technician.md, `log`; docs/security.md, The service log).
link/session.py says what goes in; link/service.py reads it out a page at
a time.

    the file   _SLOTS records of _REC bytes (19,200 B), each written in
               place: the file never grows past that, the oldest record
               is written over by the newest
    a record   seq    4 bytes, big-endian: the entry's number since the log
                      began (its slot is seq % _SLOTS)
               time   4 bytes: seconds since _EPOCH (the PC's clock, given
                      when the session opened: `utc`), or ms since the
                      controller started (`up`)
               clock  1 byte: "w" (the PC's) or "u" (uptime)
               crc    2 bytes: the link's CRC-16 (frame.py) of every other
                      byte of the record
               entry  the entry without its time, as JSON, padded with spaces

A power cut while a record is written spoils that record only (its CRC
fails: it reads as damaged, and is the next written over); every other
record is whole. Nothing of the log is in the heap between two requests:
the ring's next number and the session's clock are the LinkServer's
`service_ring` (made at boot, link/server.py), and a request reads or
writes one record through a buffer of its own.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import json

from firmware.frame import crc16
from firmware.hal import ticks_diff

_SLOTS = const(200)                # entries kept
_REC = const(96)                   # bytes a record
_BODY = const(11)                  # where the entry's JSON starts
_FILE = const("service.log")       # in the board's flash (the store)
# The PC's time is kept as seconds since 2024-01-01 UTC: small ints on a
# 32-bit port (below 2**30) until 2058, where seconds since 1970 are not.
_EPOCH = const(1704067200)
# The LinkServer's service_ring, by index.
NEXT = const(0)                    # the next entry's seq (-1: the file not read yet)
CLOCK = const(1)                   # 1 while the session's PC time is known
CLOCK_S = const(2)                 # the PC's time then (seconds since _EPOCH)
CLOCK_AT = const(3)                # the controller's ticks then
DICE = const(4)                    # the session's dice test entry: its seq, or -1
DICE_N = const(5)                  # its rolls so far
RING = const(6)                    # the array's length


def set_clock(link, now, unix_s):
    """The PC's time (seconds since 1970 UTC) at `now`: the session's
    entries carry it until the session closes (clear_clock)."""
    r = link.service_ring
    r[CLOCK_S] = unix_s - _EPOCH
    r[CLOCK_AT] = now
    r[CLOCK] = 1


def clear_clock(link):
    link.service_ring[CLOCK] = 0


def _path(link):
    return link.hal.store + _FILE


def _crc(buf):
    return crc16(buf, crc16(buf, 0xFFFF, 0, 9), _BODY, _REC)


def _next(link):
    """The next entry's seq: the largest whole record's + 1, read from the
    file at the first entry of a boot."""
    r = link.service_ring
    if r[NEXT] >= 0:
        return r[NEXT]
    top = -1
    buf = bytearray(_REC)
    try:
        with open(_path(link), "rb") as f:
            while f.readinto(buf) == _REC:
                if _crc(buf) == int.from_bytes(buf[9:11], "big"):
                    top = max(top, int.from_bytes(buf[0:4], "big"))
    except OSError:                    # no log yet
        pass
    r[NEXT] = top + 1
    return top + 1


def count(link):
    """How many entries the log holds (some may read as damaged)."""
    return min(_next(link), _SLOTS)


def note(link, now, entry, seq=-1):
    """`entry` ([what, ...], without its time) written as the newest
    record, or over record `seq` (an entry that grows: a dice test's);
    returns its seq. OSError if the flash fails."""
    r = link.service_ring
    first = seq < 0
    if first:
        seq = _next(link)
    buf = bytearray(_REC)
    buf[0:4] = seq.to_bytes(4, "big")
    if r[CLOCK]:
        t = r[CLOCK_S] + ticks_diff(now, r[CLOCK_AT]) // 1000
        buf[8] = 0x77                  # "w"
    else:
        t = now
        buf[8] = 0x75                  # "u"
    buf[4:8] = (t & 0xFFFFFFFF).to_bytes(4, "big")
    text = _fit(entry)
    buf[_BODY:_BODY + len(text)] = text
    for i in range(_BODY + len(text), _REC):
        buf[i] = 0x20
    buf[9:11] = _crc(buf).to_bytes(2, "big")
    try:
        f = open(_path(link), "r+b")
    except OSError:                    # the first entry: the file made
        f = open(_path(link), "wb")
    with f:
        f.seek((seq % _SLOTS) * _REC)
        f.write(buf)
    if first:
        r[NEXT] = seq + 1
    return seq


def _fit(entry):
    """The entry as JSON bytes that fit a record: a config value too long
    is cut short (as a string ending in ...); what still does not fit is
    named only."""
    text = json.dumps(entry).encode()
    room = _REC - _BODY
    if len(text) > room and len(entry) == 4 and entry[0] == "config_set":
        value = json.dumps(entry[2])
        keep = room - len(text) + len(value) - 6
        if keep > 0:
            text = json.dumps([entry[0], entry[1], value[:keep] + "...", entry[3]]).encode()
    if len(text) > room:
        what = entry[0] if type(entry[0]) is str and len(entry[0]) <= 32 else "?"
        text = json.dumps([what, "(too long to log)"]).encode()
    return text


def entry(link, i):
    """Entry i, 0 the oldest the log holds: [time, what, ...], its time
    ["utc", seconds since 1970] or ["up", ms since the controller started];
    [None, "damaged"] when its record is not whole."""
    n = count(link)
    seq = _next(link) - n + i
    buf = bytearray(_REC)
    try:
        with open(_path(link), "rb") as f:
            f.seek((seq % _SLOTS) * _REC)
            got = f.readinto(buf)
    except OSError:
        got = 0
    if got != _REC or _crc(buf) != int.from_bytes(buf[9:11], "big") or \
            int.from_bytes(buf[0:4], "big") != seq:
        return [None, "damaged"]
    t = int.from_bytes(buf[4:8], "big")
    try:
        out = json.loads(bytes(buf[_BODY:]).decode())
    except ValueError:
        return [None, "damaged"]
    out.insert(0, ["utc", t + _EPOCH] if buf[8] == 0x77 else ["up", t])
    return out
