"""The sim backend: every hardware call goes over the sim bus to the virtual
table (docs/hardware.md, "The sim bus"), and time is virtual: it moves only
inside `sleep_until`, when the table has run its physics that far.

Runs under the MicroPython unix port. The bus and the link are pty file
descriptors handed over by the launcher (host_tools/sim/launcher.py).
Per tick the backend writes one TICK frame and parses the answer into
preallocated buffers: a steady tick is written to allocate nothing.
"""

import os
import select
from array import array

from micropython import const

from firmware.hal import HalCommon
from firmware import frame

_B_HELLO = const(0x01)
_B_OUT = const(0x02)
_B_UART_TX = const(0x03)
_B_TICK = const(0x04)
_B_WDT = const(0x05)
_B_IN = const(0x81)
_B_UART_RX = const(0x82)
_B_NOW = const(0x83)
_B_HEAP = const(0x84)
_BUS_VERSION = const(1)
_H = const(6)                  # frame.HEADER
_MAX_PIN = const(49)           # ESP32-S3 GPIO 0..48
_BUS_PAYLOAD = const(256)      # the table sends UART bytes in chunks below this
_UART_TX_MAX = const(48)       # the longest UART write: a display frame
_FREE = const(0)               # what a pin is used as
_OUT = const(1)
_PWM = const(2)
_IN = const(3)


class SimUart:
    """Bytes from the table land in a ring; the driver drains it."""

    def __init__(self, hal, n, rxbuf):
        self.hal = hal
        self.n = n
        self.ring = bytearray(rxbuf)
        self.head = 0          # next byte to read
        self.count = 0         # bytes waiting
        self.overruns = 0

    def write(self, buf, n):
        self.hal._send_uart(self.n, buf, n)

    def readinto(self, buf):
        k = 0
        ring = self.ring
        while k < len(buf) and self.count:
            buf[k] = ring[self.head]
            self.head = (self.head + 1) % len(ring)
            self.count -= 1
            k += 1
        return k

    def _push(self, src, start, end):
        ring = self.ring
        for i in range(start, end):
            if self.count == len(ring):
                self.overruns += 1
                continue
            ring[(self.head + self.count) % len(ring)] = src[i]
            self.count += 1


class SimLink:
    """The host link on a pty: reads never block, a frame that the pty
    cannot take now is dropped and counted (the host may not be attached)."""

    def __init__(self, n):
        self.f = open(n, "r+b")
        self.poll = select.poll()
        self.poll.register(self.f, select.POLLIN | select.POLLOUT)
        self.dropped = 0
        self._one = bytearray(1)

    def _ready(self, n):
        for entry in self.poll.ipoll(0):
            if entry[1] & n:
                return True
        return False

    def readinto(self, buf):
        """What has arrived, up to len(buf). The unix port's blocking read
        waits for the whole count asked, so read one byte per ready poll."""
        k = 0
        one = self._one
        while k < len(buf) and self._ready(select.POLLIN):
            if not self.f.readinto(one):
                break
            buf[k] = one[0]
            k += 1
        return k

    def write(self, buf, n):
        if not self._ready(select.POLLOUT):
            self.dropped += 1
            return False
        self.f.write(memoryview(buf)[:n])
        return True


class SimHal(HalCommon):
    def __init__(self, bus, link=-1, store="", entropy=None):
        """`bus`, `link`: pty file descriptors (link -1: none), or objects
        that stand for them (firmware/hal/qemu.py: the bus a UART with
        `readinto(buf, n)`, `write(buf)` and `pollable`, the link an object
        with `readinto`, `write` and `f`, what a poll waits on);
        `entropy(n)`: the raw generator, os.urandom if None."""
        self.bus = open(bus, "r+b") if isinstance(bus, int) else bus
        self.store = store         # a folder standing for the board's flash
        if isinstance(link, int):
            link = SimLink(link) if link >= 0 else None
        self.link = link
        # The DRBG's entropy input (HalCommon): the seeded generator, so
        # that a virtual table's dice, dealers and nonces follow from its
        # seed. Nothing is stirred in: a host's request lands at a virtual
        # time that depends on wall time, and so would the dice after it.
        self.entropy = entropy or os.urandom
        self.entropy_source = "host" if entropy is None else "seeded"
        self.now = 0
        self._use = bytearray(_MAX_PIN)          # _FREE, _OUT, _PWM or _IN per pin
        self._out = array("H", bytes(2 * _MAX_PIN))   # output value or duty per pin
        self._level = bytearray(_MAX_PIN)        # input level per pin
        self._edges = array("I", bytes(4 * _MAX_PIN))  # rising edges per input pin
        self._uarts: list = [None, None, None]
        self._reader = frame.FrameReader(_BUS_PAYLOAD)
        self._rx = bytearray(64)
        self._outf = bytearray(frame.OVERHEAD + 3)     # one buffer per fixed frame:
        self._tick = bytearray(frame.OVERHEAD + 4)     # written whole, never sliced
        self._wdt = bytearray(frame.OVERHEAD + 2)
        self._var = bytearray(frame.OVERHEAD + _UART_TX_MAX + 1)
        self._seq = 0
        HalCommon.__init__(self, b"")
        self._sleeping = False     # a TICK is out, its NOW not yet in
        self._wake = None          # the bus and the link, to wait on both
        if self.link is not None:
            self._wake = select.poll()
            self._wake.register(getattr(self.bus, "pollable", self.bus), select.POLLIN)
            self._wake.register(self.link.f, select.POLLIN)
        self._var[_H] = _BUS_VERSION
        self._write(self._var, frame.seal(self._var, _B_HELLO, 0, 1))

    # -- the interface -------------------------------------------------------

    def ticks_ms(self):
        return self.now

    def output(self, pin, max_ms):
        self._use[pin] = _OUT
        self._guard(pin, max_ms)

    def pwm(self, pin, max_ms):
        self._use[pin] = _PWM
        self._guard(pin, max_ms)

    def input(self, pin):
        self._use[pin] = _IN

    def write(self, pin, v):
        if self._out[pin] != v:
            self._out[pin] = v
            b = self._outf
            b[_H] = pin
            b[_H + 1] = v & 0xFF
            b[_H + 2] = (v >> 8) & 0xFF
            self._send(b, _B_OUT, 3)
            self._switched(pin, v, self.now)

    def duty(self, pin, d):
        self.write(pin, d)

    def read(self, pin):
        return self._level[pin]

    def edges(self, pin):
        return self._edges[pin]

    def uart(self, n, tx, rx, rxbuf):
        u = SimUart(self, n, rxbuf)
        self._uarts[n] = u
        return u

    def wdt_start(self, ms):
        b = self._wdt              # the timeout, sent again at every feed
        b[_H] = ms & 0xFF
        b[_H + 1] = (ms >> 8) & 0xFF
        self._send(b, _B_WDT, 2)

    def wdt_feed(self):
        if self._wdt[_H] or self._wdt[_H + 1]:
            self._send(self._wdt, _B_WDT, 2)

    def all_off(self):
        use = self._use
        for pin in range(_MAX_PIN):
            if use[pin] == _OUT or use[pin] == _PWM:
                self.write(pin, 0)

    def _off(self, pin):
        self.write(pin, 0)

    def sleep_until(self, t, wake=False):
        """Tell the table we sleep until t; apply what happened meanwhile.
        With `wake`, return False as soon as the host's bytes wait on the
        link while the table is still running to t (in real time, the
        table answers at t); the next call sleeps the rest."""
        if not self._sleeping:
            self._watch(self.now)
            b = self._tick
            b[_H] = t & 0xFF
            b[_H + 1] = (t >> 8) & 0xFF
            b[_H + 2] = (t >> 16) & 0xFF
            b[_H + 3] = (t >> 24) & 0xFF
            self._send(b, _B_TICK, 4)
            self._sleeping = True
        if wake and self._wake is not None and not self._reader.backlog():
            link = False
            for entry in self._wake.ipoll(-1):
                if entry[0] is not self.link.f:  # pyright: ignore[reportOptionalMemberAccess]  (_wake: a link)
                    link = False   # the bus: the table is at t, the tick first, always
                    break
                link = entry[1] & select.POLLIN
            if link:
                # What the firmware does now reaches the table after the
                # TICK, so the table applies it at t: the firmware's clock
                # says so too (a jog started now runs its whole time).
                self.now = t
                return False
        self._pump()
        self._sleeping = False
        return True

    # -- the bus -------------------------------------------------------------

    def _send(self, b, kind, n):
        """Seal the payload already in `b` and write the frame."""
        self._seq = (self._seq + 1) & 0xFF
        self._write(b, frame.seal(b, kind, self._seq, n))

    def _write(self, buf, n):
        if n == len(buf):
            self.bus.write(buf)
        else:
            self.bus.write(memoryview(buf)[:n])

    def _send_uart(self, n, src, length):
        if length > _UART_TX_MAX:
            raise ValueError("UART write of %d bytes: at most %d" % (length, _UART_TX_MAX))
        b = self._var
        b[_H] = n
        for i in range(length):
            b[_H + 1 + i] = src[i]
        self._send(b, _B_UART_TX, length + 1)

    def _pump(self):
        """Read bus frames until NOW. A blocking read on the unix port waits
        for the whole count asked, so ask exactly what completes the frame."""
        r = self._reader
        rx = self._rx
        while True:
            n = 0
            if not r.backlog():        # bytes of a failed frame are parsed first
                want = r.needed()
                if want > len(rx):
                    want = len(rx)
                n = self.bus.readinto(rx, want)
                if not n:
                    raise OSError("sim bus closed")
            i = 0
            while True:
                i = r.feed(rx, i, n)
                if not r.ready:
                    break
                if self._apply(r):
                    return

    def _apply(self, r):
        """One frame from the table; True at NOW (the tick is over)."""
        buf = r.buf
        kind = r.kind
        if kind == _B_IN:
            pin = buf[_H]
            if pin < _MAX_PIN and self._use[pin] == _IN:
                v = buf[_H + 1]
                if v and not self._level[pin]:
                    self._edges[pin] += 1
                self._level[pin] = v
        elif kind == _B_UART_RX:
            u = self._uarts[buf[_H]] if buf[_H] < 3 else None
            if u is not None:
                u._push(buf, _H + 1, _H + r.length)
        elif kind == _B_NOW:
            self.now = buf[_H] | (buf[_H + 1] << 8) | (buf[_H + 2] << 16) | (buf[_H + 3] << 24)
            return True
        elif kind == _B_HEAP:
            # The GC's own figures into the firmware's stdout (the table's
            # log): a collection first, so that the free blocks counted are
            # those an allocation finds. Neither call allocates, nor do
            # these imports of built-in modules.
            import gc
            import micropython
            gc.collect()
            micropython.mem_info()
        return False
