"""The RFID reader under the wall (UART2): which tag sits in which slot.

Frames (docs/hardware.md): 02 cmd len data xor 03. One side is scanned per
request; the reply lists (slot, UID) of every slot holding a tag. Results go
into preallocated buffers: `seen[slot]` (1 = a tag there) and `ids[slot]`,
its tile id from the tag table as the reply comes (tags.UNKNOWN: a tag the
table does not know; the first such of a scan is kept whole in `unknown_uid`
at `unknown_slot`, for the fault that names it). The UIDs themselves are
kept only when `raw` is a bytearray of 4 bytes per slot (a technician's
rfid_learn, link/service.py sets it for one scan): 144 tiles' UIDs are
576 bytes that play never reads.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.hal import ticks_add, ticks_diff
from firmware.faults import RFID_CRC as _RFID_CRC, RFID_TIMEOUT as _RFID_TIMEOUT
from firmware.tags import UNKNOWN

_SCAN_SIDE = const(0x10)
_PING = const(0x11)
_REPLY = const(0x80)
_STX = const(0x02)
_ETX = const(0x03)
_MAX_DATA = const(2 + 36 * 5)     # side, count, 36 x (slot, uid)

IDLE = 0
WAITING = const(1)            # a request out
DONE = 2


class Rfid:
    def __init__(self, uart, n, reply_ms, tags):
        """`n`: the slots under the walls (the tiles of a set); `tags`: the
        tag table (firmware/tags.py)."""
        self.fault = 0             # a fault code of firmware/faults.py, 0: none
        self.detail = None         # the fault's detail for the link
        self.uart = uart
        self.reply_ms = reply_ms
        self.tags = tags
        self.seen = bytearray(n)
        self.ids = bytearray(n)             # tile id per slot (when seen)
        self.unknown_slot = -1              # the scan's first unknown tag, or -1
        self.unknown_uid = bytearray(4)     # and its UID, big-endian
        self.raw: bytearray | None = None   # or a big-endian UID per slot (4 bytes each)
        self.state = IDLE
        self.side = 0
        self.level = 0             # of the last request: whose answer it is
        self.bad_frames = 0
        self._deadline = 0
        self._tx = bytearray(8)
        self._rx = bytearray(64)
        self._frame = bytearray(_MAX_DATA + 5)
        self._n = 0
        self._damaged = False      # a bad frame came while waiting

    def scan(self, now, side, level):
        """Ask for one side's tags (level 0: the walls being built, 1: the
        walls in play); the answer arrives in later polls."""
        tx = self._tx
        tx[0] = _STX
        tx[1] = _SCAN_SIDE
        tx[2] = 2
        tx[3] = side
        tx[4] = level
        tx[5] = _SCAN_SIDE ^ 2 ^ side ^ level
        tx[6] = _ETX
        self.uart.write(tx, 7)
        self.side = side
        self.level = level
        if side == 0:                       # a scan of the walls starts
            self.unknown_slot = -1
        self.state = WAITING
        self._n = 0
        self._damaged = False
        self._deadline = ticks_add(now, self.reply_ms)

    def done(self, level):
        """The answer to a request of `level` is in `seen` and `ids`."""
        return self.state == DONE and self.level == level

    def release(self):
        """The answer is used: the reader is free for anyone's request. The
        builder (level 0) and the hand follower (level 1) share it so."""
        if self.state == DONE:
            self.state = IDLE

    def poll(self, now):
        k = self.uart.readinto(self._rx)
        for i in range(k):
            self._byte(self._rx[i])
        if self.state == WAITING and ticks_diff(now, self._deadline) > 0:
            # Nothing good came: a damaged reply is a line fault, none at all
            # a reader that does not answer.
            self.fault = _RFID_CRC if self._damaged else _RFID_TIMEOUT
            self.detail = {"side": self.side, "ms": self.reply_ms}
            self.state = IDLE

    def uid(self, slot):
        """The UID read at `slot`, as an int, from `raw` (which must be set)."""
        u = self.raw
        assert u is not None, "a scan that keeps the UIDs (raw) first"
        return (u[4 * slot] << 24) | (u[4 * slot + 1] << 16) | (u[4 * slot + 2] << 8) | u[4 * slot + 3]

    def _byte(self, b):
        f = self._frame
        n = self._n
        if n == 0 and b != _STX:
            return                              # noise between frames
        if n >= len(f):
            self._failed(n)                     # longer than any reply
            return
        f[n] = b
        n += 1
        self._n = n
        if n >= 3 and n == f[2] + 5:
            self._n = 0
            x = f[1] ^ f[2]
            for i in range(3, n - 2):
                x ^= f[i]
            if x != f[n - 2] or b != _ETX:
                self._failed(n)
                return
            if f[1] != (_SCAN_SIDE | _REPLY) or self.state != WAITING:
                return
            # A reply to our scan: (slot, UID) of every slot of the side
            # holding a tag.
            side = f[3]
            count = f[4]
            per_side = len(self.seen) // 4
            first = side * per_side
            ok = side == self.side and 2 + count * 5 == f[2]
            for j in range(count if ok else 0):    # every slot must be of the side asked
                slot = f[5 + j * 5]
                if slot < first or slot >= first + per_side:
                    ok = False
            if not ok:                             # well-formed but inconsistent
                self.bad_frames += 1
                self.fault = _RFID_CRC
                self.detail = {"side": self.side, "ms": self.reply_ms}
                self.state = IDLE
                return
            for s in range(first, first + per_side):
                self.seen[s] = 0
            u = self.raw
            for j in range(count):
                at = 5 + j * 5
                slot = f[at]
                tid = self.tags.lookup_at(f, at + 1)
                self.ids[slot] = tid
                self.seen[slot] = 1
                if tid == UNKNOWN and (self.unknown_slot < 0 or slot < self.unknown_slot):
                    self.unknown_slot = slot
                    for k in range(4):
                        self.unknown_uid[k] = f[at + 1 + k]
                if u is not None:
                    for k in range(4):
                        u[4 * slot + k] = f[at + 1 + k]
            self.state = DONE

    def _failed(self, n):
        """A frame that does not check out. A reply may have begun inside it
        (a stray 02 byte before the real start): feed its bytes after the
        first STX again. In place, no allocation; a fault only if no good
        reply comes by the deadline."""
        self.bad_frames += 1
        if self.state == WAITING:
            self._damaged = True
        f = self._frame
        self._n = 0
        for j in range(1, n):
            if f[j] == _STX:
                for k in range(j, n):       # writes land at or below k: safe
                    self._byte(f[k])
                return
