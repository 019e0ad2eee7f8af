"""The display board on UART1: gold, dice, dealer lamps, counts, a text line.

Frames (docs/hardware.md): 7E cmd len data sum 7F; the board ACKs each
frame with 7E 80 01 cmd sum 7F. A frame not ACKed within `ack_ms` is the
fault display_unplugged. Frames are built in one preallocated buffer.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.hal import ticks_add, ticks_diff

DISPLAY_UNPLUGGED = 30
_SHOW_GOLD = const(0x01)
_SHOW_DICE = const(0x02)
_SHOW_DEALER = const(0x03)
_SHOW_COUNT = const(0x04)
_SHOW_TEXT = const(0x05)
_CLEAR = const(0x06)
_SHOW_ALERT = const(0x07)
ALERT_NONE = 0
ALERT_FINAL = 1                # the final group is being taken
ALERT_DRAW = 2                 # the hand is a draw (和局)
_ACK = const(0x80)
_MAX_DATA = const(16)


class Display:
    def __init__(self, uart, ack_ms):
        self.uart = uart
        self.ack_ms = ack_ms
        self.fault = 0
        self.pending = 0           # frames sent and not yet ACKed
        self.sent = 0
        self._deadline = 0
        self._tx = bytearray(_MAX_DATA + 5)
        self._data = bytearray(_MAX_DATA)
        self._rx = bytearray(32)
        self._ack = bytearray(6)   # the ACK being assembled
        self._n = 0

    def show_gold(self, now, tile_id):
        self._data[0] = tile_id
        self._send(now, _SHOW_GOLD, 1)

    def show_dice(self, now, a, b, rolling):
        d = self._data
        d[0] = a
        d[1] = b
        d[2] = 1 if rolling else 0
        self._send(now, _SHOW_DICE, 3)

    def show_dealer(self, now, seat, streak):
        self._data[0] = seat
        self._data[1] = streak if streak < 255 else 255
        self._send(now, _SHOW_DEALER, 2)

    def show_count(self, now, drawable, seat, stack):
        """Drawable count and the marker stack (seat 255: no marker)."""
        d = self._data
        d[0] = drawable & 0xFF
        d[1] = (drawable >> 8) & 0xFF          # i16 little-endian
        d[2] = seat
        d[3] = stack
        self._send(now, _SHOW_COUNT, 4)

    def show_alert(self, now, alert):
        self._data[0] = alert
        self._send(now, _SHOW_ALERT, 1)

    def show_text(self, now, text):
        n = min(len(text), _MAX_DATA)
        for i in range(n):
            self._data[i] = ord(text[i]) & 0x7F
        self._send(now, _SHOW_TEXT, n)

    def clear(self, now):
        self._send(now, _CLEAR, 0)

    def _send(self, now, cmd, n):
        tx = self._tx
        tx[0] = 0x7E
        tx[1] = cmd
        tx[2] = n
        s = cmd + n
        for i in range(n):
            tx[3 + i] = self._data[i]
            s += self._data[i]
        tx[3 + n] = s & 0xFF
        tx[4 + n] = 0x7F
        self.uart.write(tx, n + 5)
        if not self.pending:
            self._deadline = ticks_add(now, self.ack_ms)
        self.pending += 1
        self.sent += 1

    def replugged(self):
        """The board is back (its fault cleared): frames that were waiting
        for an ACK are lost, and the board starts blank."""
        self.pending = 0
        self._n = 0

    def poll(self, now):
        k = self.uart.readinto(self._rx)
        for i in range(k):
            self._byte(self._rx[i], now)
        if self.pending and ticks_diff(now, self._deadline) > 0:
            self.fault = DISPLAY_UNPLUGGED

    def fault_detail(self):
        return {"count": self.pending, "ms": self.ack_ms}

    def _byte(self, b, now):
        a = self._ack
        if b == 0x7E:
            self._n = 0            # a frame start: an ACK never holds 7E elsewhere
        elif self._n == 0:
            return                 # noise between frames
        a[self._n] = b
        self._n += 1
        if self._n < 6:
            return
        self._n = 0
        if a[1] == _ACK and a[2] == 1 and a[5] == 0x7F \
                and ((a[1] + a[2] + a[3]) & 0xFF) == a[4] and self.pending:
            self.pending -= 1
            self._deadline = ticks_add(now, self.ack_ms)   # the next one's turn
