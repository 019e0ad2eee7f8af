"""Frames on a byte stream: the one framing of the link and the sim bus.

    0xA5 0x5A | kind u8 | seq u8 | len u16 LE | payload (len) | crc u16 LE

The CRC is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over kind, seq, len
and payload. MicroPython's binascii has no CRC-16, so it is written here
once, table-driven; the tests check it against CPython's binascii.crc_hqx.

`FrameReader` resynchronises on the sync bytes after garbage, a bad length
or a bad CRC, counts what it threw away, and never allocates: the frame it
hands out lives in its own buffer until the next `feed`. A candidate frame
that fails (bad length, bad CRC, or given up by `flush`) is rescanned from
its second byte, so a good frame that began inside it (after a truncated
frame, or behind a corrupted length) is still found.
"""

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x

SYNC0 = const(0xA5)
SYNC1 = const(0x5A)
HEADER = const(6)           # sync x2, kind, seq, len x2
OVERHEAD = const(8)         # header + crc
MAX_PAYLOAD = const(512)    # bounded frame: a longer one is garbage


def _table():
    t = []
    for n in range(256):
        c = n << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        t.append(c & 0xFFFF)
    return tuple(t)


_CRC = _table()


def crc16(data, crc=0xFFFF, start=0, end=-1):
    if end < 0:
        end = len(data)
    t = _CRC
    for i in range(start, end):
        crc = ((crc << 8) & 0xFFFF) ^ t[((crc >> 8) ^ data[i]) & 0xFF]
    return crc


def seal(buf, kind, seq, n):
    """Finish a frame in `buf` whose payload (n bytes) the caller has already
    written at buf[HEADER:]: header and CRC. Returns the frame's length.
    Writing the payload in place is what keeps the control loop allocation
    free: no slices, no copies."""
    if n > MAX_PAYLOAD or HEADER + n + 2 > len(buf):
        raise ValueError("payload of %d bytes does not fit" % n)
    buf[0] = SYNC0
    buf[1] = SYNC1
    buf[2] = kind
    buf[3] = seq & 0xFF
    buf[4] = n & 0xFF
    buf[5] = n >> 8
    c = crc16(buf, 0xFFFF, 2, HEADER + n)
    buf[HEADER + n] = c & 0xFF
    buf[HEADER + n + 1] = c >> 8
    return HEADER + n + 2


def encode(kind, seq, payload=b""):
    """One frame as new bytes (host side and tests; the firmware seals
    frames in its own buffers)."""
    buf = bytearray(len(payload) + OVERHEAD)
    buf[HEADER:HEADER + len(payload)] = payload
    seal(buf, kind, seq, len(payload))
    return bytes(buf)


class FrameReader:
    """Feed bytes in; complete, CRC-checked frames come out one at a time.

    Read every frame of a chunk with (feed returns only when a frame is
    ready or all of `data` is consumed; bytes of a failed candidate that
    wait to be rescanned are parsed before new data):

        i = 0
        while True:
            i = reader.feed(data, i)
            if not reader.ready:
                break
            handle(reader.kind, reader.seq, reader.buf, reader.length)

    Every byte fed is accounted for: dropped + bytes of good frames +
    n (the frame being assembled) + backlog() == bytes fed."""

    def __init__(self, max_payload=MAX_PAYLOAD):
        self.max_payload = max_payload
        self.buf = bytearray(max_payload + OVERHEAD)
        self.n = 0                 # bytes of the frame being assembled
        self.kind = 0
        self.seq = 0
        self.length = 0            # payload of the last frame: buf[HEADER:HEADER + length]
        self.ready = False
        self.frames = 0            # good frames
        self.dropped = 0           # bytes thrown away (garbage, bad CRC, too long)
        self.bad_crc = 0
        self.lo = 0                # backlog: buf[lo:hi], received, to be rescanned
        self.hi = 0

    def feed(self, data, start=0, end=-1):
        """Consume bytes from data[start:end] until one frame completes.
        Returns the index after the last byte consumed; when a frame is
        complete, `self.ready` is true and kind/seq/payload describe it.
        The backlog is parsed first: `feed(b"")` may complete a frame."""
        if end < 0:
            end = len(data)
        buf = self.buf
        self.ready = False
        i = start
        while True:
            lo = self.lo
            if lo < self.hi:           # bytes of a failed candidate first
                b = buf[lo]
                lo += 1
                if lo == self.hi:
                    lo = self.hi = 0
                self.lo = lo
            elif i < end:
                b = data[i]
                i += 1
            else:
                return i
            n = self.n
            if n == 0:
                if b == SYNC0:
                    buf[0] = b
                    self.n = 1
                else:
                    self.dropped += 1
                continue
            if n == 1:
                if b == SYNC1:
                    buf[1] = b
                    self.n = 2
                elif b == SYNC0:
                    self.dropped += 1          # A5 A5 5A: keep the second A5
                else:
                    self.dropped += 2
                    self.n = 0
                continue
            buf[n] = b                 # n <= lo: never overwrites the backlog
            n += 1
            self.n = n
            if n == HEADER:
                length = buf[4] | (buf[5] << 8)
                if length > self.max_payload:
                    self._resync()
                    continue
                self.length = length
            elif n > HEADER and n == HEADER + self.length + 2:
                c = crc16(buf, 0xFFFF, 2, HEADER + self.length)
                if c != (buf[n - 2] | (buf[n - 1] << 8)):
                    self.bad_crc += 1
                    self._resync()
                    continue
                self.kind = buf[2]
                self.seq = buf[3]
                self.n = 0
                self.frames += 1
                self.ready = True
                return i

    def needed(self):
        """Bytes that would complete the header or the frame being assembled
        (at least 1): a blocking reader can ask for exactly that many."""
        n = self.n
        if n < HEADER:
            return HEADER - n
        return HEADER + self.length + 2 - n

    def payload(self):
        """The last frame's payload as new bytes (host side; allocates)."""
        return bytes(self.buf[HEADER:HEADER + self.length])

    def backlog(self):
        """Bytes received but not parsed yet (rescanned by the next feed)."""
        return self.hi - self.lo

    def flush(self):
        """Give up the frame being assembled (the line went quiet in the
        middle of it: a truncated frame). Its bytes after the first are
        rescanned by the next `feed` (call `feed(b"")` to drain them)."""
        if self.n:
            self._resync()

    def _resync(self):
        """Drop the failed candidate's first byte and what follows up to the
        next SYNC0 in it; move the rest of it, then the unread backlog, to
        the front of buf as the new backlog. In place, no allocation (the
        candidate is buf[:n]; the backlog lies at or after n)."""
        buf = self.buf
        n = self.n
        k = 1
        while k < n and buf[k] != SYNC0:
            k += 1
        self.dropped += k
        j = 0
        for p in range(k, n):
            buf[j] = buf[p]
            j += 1
        for p in range(self.lo, self.hi):
            buf[j] = buf[p]
            j += 1
        self.n = 0
        self.lo = 0
        self.hi = j
