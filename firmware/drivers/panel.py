"""The players' side of the table: seat keys, buzzer, the display board
(gold, dice, dealer lamps, counts), the electronic dice. One module for
them (a module costs the heap ~200 B and its names; docs/firmware.md,
Memory).

Keys: debounced, with gestures. One key per seat does everything
(docs/hardware.md):
    press                 the dealer rolls the dice (taken at once: take_press)
    one short press       exposed kong          } in a hand, known once the
    two short presses     concealed kong        } `double_ms` after the last
    hold >= hold_ms       "I win" (the hand result)   release has passed

Buzzer: one output, on for a beep.

Display: the board on UART1 (gold, dice, dealer lamps, counts). Frames
(docs/hardware.md): 7E cmd len data sum 7F; the board ACKs each
frame with 7E 80 01 cmd sum 7F. A frame not ACKed within `ack_ms` is the
fault display_unplugged. Frames are built in one preallocated buffer.

Dice: two fair faces from the HAL's random bytes (its DRBG), shown
rolling for `roll_ms` and then still. The fairness (rejection sampling) is
engine_core's.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from engine_core.dice import roll
from firmware.faults import DISPLAY_UNPLUGGED as _DISPLAY_UNPLUGGED
from firmware.hal import ticks_add, ticks_diff


# -- keys and buzzer ----------------------------------------------------------------

_BUZZER_MAX_MS = const(3000)   # the HAL's guard: the longest beep is 1 s

_NONE = const(0)               # no gesture (private: tests compare with 0)
SINGLE = const(1)
DOUBLE = const(2)
HOLD = const(3)


_CHANGED = const(0)            # Keys._t: the thirds of the list, by seat
_PRESS = const(1)
_RELEASE = const(2)
_HELD = const(255)             # a seat's _count while its press made a HOLD


class Keys:
    def __init__(self, hal, pins, debounce_ms, double_ms, hold_ms):
        """`double_ms`: a second press this soon after a release makes a
        double; `hold_ms`: held this long makes a hold (while still held)."""
        self.hal = hal
        self.double_ms = double_ms
        self.hold_ms = hold_ms
        self.inputs = bytes(pins)
        for pin in pins:
            hal.input(pin)
        self.debounce_ms = debounce_ms
        n = len(pins)
        self.stable = bytearray(n)     # debounced level per seat
        self.pressed = bytearray(n)    # 1 = a press not yet taken
        self.gesture = bytearray(n)    # a finished gesture not yet taken
        self._raw = bytearray(n)
        # Per seat: when the raw level last changed [_CHANGED * n + seat],
        # the last press [_PRESS * n + seat], the last release
        # [_RELEASE * n + seat]; small ints in one list, updated in place
        # by the tick (no allocation).
        self._t = [0] * (3 * n)
        self._count = bytearray(n)     # short presses in the gesture so far, or _HELD

    def poll(self, now):
        n = len(self.inputs)
        t = self._t
        count = self._count
        for seat in range(n):
            raw = self.hal.read(self.inputs[seat])
            if raw != self._raw[seat]:
                self._raw[seat] = raw
                t[_CHANGED * n + seat] = now
            elif (raw != self.stable[seat]
                  and ticks_diff(now, t[_CHANGED * n + seat]) >= self.debounce_ms):
                self.stable[seat] = raw
                if raw:
                    self.pressed[seat] = 1
                    t[_PRESS * n + seat] = now
                elif count[seat] == _HELD:
                    count[seat] = 0            # the end of a hold: nothing more
                else:
                    count[seat] += 1
                    t[_RELEASE * n + seat] = now
            # A gesture ends once held long enough, or `double_ms` after
            # the last release.
            if self.stable[seat]:
                if count[seat] != _HELD and ticks_diff(now, t[_PRESS * n + seat]) >= self.hold_ms:
                    count[seat] = _HELD
                    self.gesture[seat] = HOLD
            elif count[seat] and ticks_diff(now, t[_RELEASE * n + seat]) >= self.double_ms:
                self.gesture[seat] = SINGLE if count[seat] == 1 else DOUBLE
                count[seat] = 0

    def take_gesture(self, seat):
        """The seat's finished gesture (SINGLE, DOUBLE, HOLD) once, or 0."""
        g = self.gesture[seat]
        self.gesture[seat] = _NONE
        return g

    def take_press(self, seat):
        """True once per press of `seat`'s key."""
        if self.pressed[seat]:
            self.pressed[seat] = 0
            return True
        return False

    def clear(self):
        """Forget presses and gestures not yet taken (and one in progress)."""
        for seat in range(len(self.pressed)):
            self.pressed[seat] = 0
            self.gesture[seat] = _NONE
            if self._count[seat] != _HELD:     # a hold's release must still add nothing
                self._count[seat] = 0


class Buzzer:
    def __init__(self, hal, pin):
        self.hal = hal
        self.pin = pin
        hal.output(pin, _BUZZER_MAX_MS)
        self._until = 0
        self.on = False

    def beep(self, now, ms):
        self.hal.write(self.pin, 1)
        self.on = True
        self._until = ticks_add(now, ms)

    def poll(self, now):
        if self.on and ticks_diff(now, self._until) >= 0:
            self.hal.write(self.pin, 0)
            self.on = False


# -- display -----------------------------------------------------------------

_SHOW_GOLD = const(0x01)
_SHOW_DICE = const(0x02)
_SHOW_DEALER = const(0x03)
_SHOW_COUNT = const(0x04)
_SHOW_TEXT = const(0x05)        # a text line: the board has it, the controller shows none
_CLEAR = const(0x06)
_SHOW_ALERT = const(0x07)
ALERT_NONE = 0
ALERT_FINAL = 1                # the final group is being taken
ALERT_DRAW = 2                 # the hand is a draw (和局)
_ACK = const(0x80)
_MAX_DATA = const(16)


class Display:
    def __init__(self, uart, ack_ms):
        self.fault = 0             # a fault code of firmware/faults.py, 0: none
        self.detail = None         # the fault's detail for the link
        self.uart = uart
        self.ack_ms = ack_ms
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
        a = self._ack
        for i in range(k):             # assemble ACKs: 7E 80 01 cmd sum 7F
            b = self._rx[i]
            if b == 0x7E:
                self._n = 0            # a frame start: an ACK never holds 7E elsewhere
            elif self._n == 0:
                continue               # noise between frames
            a[self._n] = b
            self._n += 1
            if self._n < 6:
                continue
            self._n = 0
            if a[1] == _ACK and a[2] == 1 and a[5] == 0x7F \
                    and ((a[1] + a[2] + a[3]) & 0xFF) == a[4] and self.pending:
                self.pending -= 1
                self._deadline = ticks_add(now, self.ack_ms)   # the next one's turn
        if self.pending and ticks_diff(now, self._deadline) > 0:
            self.fault = _DISPLAY_UNPLUGGED
            self.detail = {"count": self.pending, "ms": self.ack_ms}


# -- dice --------------------------------------------------------------------

class Dice:
    def __init__(self, rand, roll_ms):
        self.rand = rand
        self.roll_ms = roll_ms
        self.a = 0
        self.b = 0
        self.rolling = False
        self._until = 0

    def start(self, now):
        """Roll: the faces are decided now, shown when the roll ends."""
        self.a, self.b = roll(self.rand)
        self.rolling = True
        self._until = ticks_add(now, self.roll_ms)

    def done(self, now):
        """True once, when the rolling display ends."""
        if self.rolling and ticks_diff(now, self._until) >= 0:
            self.rolling = False
            return True
        return False
