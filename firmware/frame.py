"""Frames on a byte stream: the one framing of the link and the sim bus.

    0xA5 0x5A | kind u8 | seq u8 | len u16 LE | payload (len) | crc u16 LE

The CRC is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over kind, seq, len
and payload. MicroPython's binascii has no CRC-16, so it is written here
once, table-driven (the table a bytes constant, in flash once frozen); the
tests check it against CPython's binascii.crc_hqx.

`FrameReader` resynchronises on the sync bytes after garbage, a bad length
or a bad CRC, counts what it threw away, and never allocates: the frame it
hands out lives in its own buffer until the next `feed`. A candidate frame
that fails (bad length, bad CRC, or given up by `flush`) is rescanned from
its second byte, so a good frame that began inside it (after a truncated
frame, or behind a corrupted length) is still found.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

_SYNC0 = const(0xA5)
_SYNC1 = const(0x5A)
HEADER = const(6)           # sync x2, kind, seq, len x2
OVERHEAD = const(8)         # header + crc
MAX_PAYLOAD = const(512)    # bounded frame: a longer one is garbage


# The table of CRC-16/CCITT-FALSE for each byte value k: its high byte at
# _CRC[k], its low byte at _CRC[256 + k]. A bytes constant: frozen, its
# bytes stay in flash (a tuple of ints would be built in the heap, 2 KB);
# const() spares the global. The tests check it against the polynomial
# and binascii.crc_hqx.
_CRC = const(
    b"\x00\x10\x20\x30\x40\x50\x60\x70\x81\x91\xa1\xb1\xc1\xd1\xe1\xf1"
    b"\x12\x02\x32\x22\x52\x42\x72\x62\x93\x83\xb3\xa3\xd3\xc3\xf3\xe3"
    b"\x24\x34\x04\x14\x64\x74\x44\x54\xa5\xb5\x85\x95\xe5\xf5\xc5\xd5"
    b"\x36\x26\x16\x06\x76\x66\x56\x46\xb7\xa7\x97\x87\xf7\xe7\xd7\xc7"
    b"\x48\x58\x68\x78\x08\x18\x28\x38\xc9\xd9\xe9\xf9\x89\x99\xa9\xb9"
    b"\x5a\x4a\x7a\x6a\x1a\x0a\x3a\x2a\xdb\xcb\xfb\xeb\x9b\x8b\xbb\xab"
    b"\x6c\x7c\x4c\x5c\x2c\x3c\x0c\x1c\xed\xfd\xcd\xdd\xad\xbd\x8d\x9d"
    b"\x7e\x6e\x5e\x4e\x3e\x2e\x1e\x0e\xff\xef\xdf\xcf\xbf\xaf\x9f\x8f"
    b"\x91\x81\xb1\xa1\xd1\xc1\xf1\xe1\x10\x00\x30\x20\x50\x40\x70\x60"
    b"\x83\x93\xa3\xb3\xc3\xd3\xe3\xf3\x02\x12\x22\x32\x42\x52\x62\x72"
    b"\xb5\xa5\x95\x85\xf5\xe5\xd5\xc5\x34\x24\x14\x04\x74\x64\x54\x44"
    b"\xa7\xb7\x87\x97\xe7\xf7\xc7\xd7\x26\x36\x06\x16\x66\x76\x46\x56"
    b"\xd9\xc9\xf9\xe9\x99\x89\xb9\xa9\x58\x48\x78\x68\x18\x08\x38\x28"
    b"\xcb\xdb\xeb\xfb\x8b\x9b\xab\xbb\x4a\x5a\x6a\x7a\x0a\x1a\x2a\x3a"
    b"\xfd\xed\xdd\xcd\xbd\xad\x9d\x8d\x7c\x6c\x5c\x4c\x3c\x2c\x1c\x0c"
    b"\xef\xff\xcf\xdf\xaf\xbf\x8f\x9f\x6e\x7e\x4e\x5e\x2e\x3e\x0e\x1e"
    b"\x00\x21\x42\x63\x84\xa5\xc6\xe7\x08\x29\x4a\x6b\x8c\xad\xce\xef"
    b"\x31\x10\x73\x52\xb5\x94\xf7\xd6\x39\x18\x7b\x5a\xbd\x9c\xff\xde"
    b"\x62\x43\x20\x01\xe6\xc7\xa4\x85\x6a\x4b\x28\x09\xee\xcf\xac\x8d"
    b"\x53\x72\x11\x30\xd7\xf6\x95\xb4\x5b\x7a\x19\x38\xdf\xfe\x9d\xbc"
    b"\xc4\xe5\x86\xa7\x40\x61\x02\x23\xcc\xed\x8e\xaf\x48\x69\x0a\x2b"
    b"\xf5\xd4\xb7\x96\x71\x50\x33\x12\xfd\xdc\xbf\x9e\x79\x58\x3b\x1a"
    b"\xa6\x87\xe4\xc5\x22\x03\x60\x41\xae\x8f\xec\xcd\x2a\x0b\x68\x49"
    b"\x97\xb6\xd5\xf4\x13\x32\x51\x70\x9f\xbe\xdd\xfc\x1b\x3a\x59\x78"
    b"\x88\xa9\xca\xeb\x0c\x2d\x4e\x6f\x80\xa1\xc2\xe3\x04\x25\x46\x67"
    b"\xb9\x98\xfb\xda\x3d\x1c\x7f\x5e\xb1\x90\xf3\xd2\x35\x14\x77\x56"
    b"\xea\xcb\xa8\x89\x6e\x4f\x2c\x0d\xe2\xc3\xa0\x81\x66\x47\x24\x05"
    b"\xdb\xfa\x99\xb8\x5f\x7e\x1d\x3c\xd3\xf2\x91\xb0\x57\x76\x15\x34"
    b"\x4c\x6d\x0e\x2f\xc8\xe9\x8a\xab\x44\x65\x06\x27\xc0\xe1\x82\xa3"
    b"\x7d\x5c\x3f\x1e\xf9\xd8\xbb\x9a\x75\x54\x37\x16\xf1\xd0\xb3\x92"
    b"\x2e\x0f\x6c\x4d\xaa\x8b\xe8\xc9\x26\x07\x64\x45\xa2\x83\xe0\xc1"
    b"\x1f\x3e\x5d\x7c\x9b\xba\xd9\xf8\x17\x36\x55\x74\x93\xb2\xd1\xf0"
)


def crc16(data, crc=0xFFFF, start=0, end=-1):
    # `start` is the loop's index and each step one short expression: a
    # frame of more than 11 words (locals and stack) would be allocated on
    # the heap at every call (link/json_bytes.py), three a request.
    if end < 0:
        end = len(data)
    t = _CRC
    while start < end:
        k = (crc >> 8) ^ data[start]
        crc = ((crc & 0xFF) ^ t[k]) << 8
        crc |= t[256 + k]
        start += 1
    return crc


def seal(buf, kind, seq, n):
    """Finish a frame in `buf` whose payload (n bytes) the caller has already
    written at buf[HEADER:]: header and CRC. Returns the frame's length.
    Writing the payload in place is what keeps the control loop allocation
    free: no slices, no copies."""
    if n > MAX_PAYLOAD or HEADER + n + 2 > len(buf):
        raise ValueError("payload of %d bytes does not fit" % n)
    buf[0] = _SYNC0
    buf[1] = _SYNC1
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
        self.buf = bytearray(max_payload + OVERHEAD)     # its length bounds a payload
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
            if n < 2:
                self._sync(b)
                continue
            buf[n] = b                 # n <= lo: never overwrites the backlog
            n += 1
            self.n = n
            if (n == HEADER or n > HEADER and n == HEADER + self.length + 2) and self._whole(n):
                return i

    def _sync(self, b):
        """A byte while the two sync bytes are awaited."""
        if self.n == 0:
            if b == _SYNC0:
                self.buf[0] = b
                self.n = 1
            else:
                self.dropped += 1
        elif b == _SYNC1:
            self.buf[1] = b
            self.n = 2
        elif b == _SYNC0:
            self.dropped += 1          # A5 A5 5A: keep the second A5
        else:
            self.dropped += 2
            self.n = 0

    def _whole(self, n):
        """The header in (n == HEADER): its length checked; or the whole
        frame: its CRC checked. True when a frame is complete; a bad one
        is flushed (its bytes after the sync parsed again)."""
        buf = self.buf
        if n == HEADER:
            length = buf[4] | (buf[5] << 8)
            if length > len(buf) - OVERHEAD:
                self.flush()
            else:
                self.length = length
            return False
        c = crc16(buf, 0xFFFF, 2, HEADER + self.length)
        if c != (buf[n - 2] | (buf[n - 1] << 8)):
            self.bad_crc += 1
            self.flush()
            return False
        self.kind = buf[2]
        self.seq = buf[3]
        self.n = 0
        self.frames += 1
        self.ready = True
        return True

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
        middle of it: a truncated frame; feed gives up a bad one the same
        way). Its first byte and what follows up to the next _SYNC0 in it are
        dropped; the rest of it, then the unread backlog, move to the front
        of buf as the new backlog, rescanned by the next `feed` (call
        `feed(b"")` to drain them). In place, no allocation (the candidate is
        buf[:n]; the backlog lies at or after n)."""
        buf = self.buf
        n = self.n
        if not n:
            return
        k = 1
        while k < n and buf[k] != _SYNC0:
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
