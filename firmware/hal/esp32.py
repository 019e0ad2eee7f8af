"""The ESP32 backend: machine.Pin / PWM / UART / WDT, os.urandom, time.

The only module (with the board's main.py, which builds this HAL) that
imports `machine`. Rising
edges are counted by pin IRQs so that a 20 ms sensor pulse is never missed
between two control ticks.

Randomness (docs/security.md, Randomness): the DRBG is seeded from
os.urandom (esp_random()) while the radio runs, for the ESP32-S3's RNG is
a true random generator only while the RF subsystem feeds it noise; the
radio is stopped again at once. After that, every rising edge (the
plate's rotation, the lanes' counts, the lifters' switches, the seat keys)
and every UART read that finds bytes (RFID replies, display ACKs) stirs
its microsecond time into the DRBG's next block.

Secrets (the service key, the tag table): files in the store, as on the
sim, or, on a production image (`nvs=True`), blobs in ESP-IDF's NVS,
which the production build encrypts (docs/security.md). A production
board is provisioned through its filesystem once: a secret that NVS
does not hold yet is taken from the file of its name, written whole
into NVS, and the file is removed.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import os
import select
import sys
import time
from array import array

import machine
import micropython

try:
    import network
except ImportError:            # an image built without any network module
    network = None

from firmware.hal import HalCommon

_PINS = const(49)                     # ESP32-S3 GPIO 0..48
_PWM_FREQ = const(20000)               # above hearing, below the motor driver's limit
_NVS_SPACE = const("table")            # the NVS namespace of the table's secrets
# The longest secret: the tag table, 288 lines of 12 bytes with both tile
# sets, grows by the tags rfid_learn adds. NVS takes a blob of up to 97.6 %
# of its partition less 4,000 bytes (ESP-IDF's NVS documentation): some
# 19 KB of the production table's 24 KB.
_SECRET_MAX = const(8192)
# ESP-IDF's UART driver takes a receive ring only larger than the UART's
# hardware FIFO (128 bytes on the S3; uart_driver_install fails with
# ESP_FAIL otherwise), and MicroPython passes rxbuf to it as given. The
# ring is ESP-IDF's memory, not the GC heap: 256, the port's own default.
_RXBUF_MIN = const(256)


def _radio_on():
    """Wi-Fi started in station mode, never connected, so that the RNG is
    fed by the RF subsystem's noise: the WLAN object, or None when the
    image has no Wi-Fi (built with the vendored kit: no network.WLAN) or
    the radio does not start. Without it the table still boots: the seed
    is read from the RNG without the radio's noise, the jitter of the
    table's own events is stirred in from then on (stir), and
    `entropy_source` says "no_rf" in the link's runtime
    (docs/security.md, Randomness)."""
    if network is None or not hasattr(network, "WLAN"):
        return None
    wlan = network.WLAN(network.STA_IF)
    try:
        wlan.active(True)
    except OSError:            # the radio does not start
        return None
    return wlan


class Esp32Uart:
    def __init__(self, hal, n, tx, rx, rxbuf, baud=115200):
        self.hal = hal
        self.uart = machine.UART(n, baudrate=baud, tx=tx, rx=rx, rxbuf=max(rxbuf, _RXBUF_MIN))

    def write(self, buf, n):
        self.uart.write(memoryview(buf)[:n])

    def readinto(self, buf):
        if not self.uart.any():
            return 0
        self.hal.stir(time.ticks_us())
        return self.uart.readinto(buf) or 0


class UsbLink:
    """The host link on USB serial (stdin/stdout). Ctrl-C must not interrupt
    the firmware when the byte 0x03 appears inside a frame."""

    def __init__(self):
        micropython.kbd_intr(-1)
        self.rx = sys.stdin.buffer
        self.tx = sys.stdout.buffer
        self.poll = select.poll()
        self.poll.register(sys.stdin, select.POLLIN)

    def readinto(self, buf):
        for _ in self.poll.ipoll(0):
            return self.rx.readinto(buf, 1) or 0
        return 0

    def write(self, buf, n):
        self.tx.write(memoryview(buf)[:n])
        return True


class Esp32Hal(HalCommon):
    def __init__(self, store, nvs=False):
        self.store = store         # the flash filesystem's folder for flags
        self.nvs = nvs             # secrets in NVS (a production image), else files
        self._pins: list = [None] * _PINS      # machine.Pin or PWM per claimed pin
        self._outs = []                        # claimed output pins, for all_off
        self._edges = array("I", bytes(4 * _PINS))
        self._wdt = None
        self.link = UsbLink()
        self.pool = bytearray(32)              # the jitter of physical events (stir)
        # The DRBG's seed with the RF subsystem on (Wi-Fi started, never
        # connected), and the chip's unique id as its personalization.
        wlan = _radio_on()
        self.entropy_source = "rf" if wlan is not None else "no_rf"
        HalCommon.__init__(self, machine.unique_id())
        if wlan is not None:
            wlan.active(False)

    def ticks_ms(self):
        return time.ticks_ms()

    def sleep_until(self, t, wake=False):
        self._watch(time.ticks_ms())
        d = time.ticks_diff(t, time.ticks_ms())
        if d > 0:
            if wake:                   # the USB link readable before t: wake early
                for _ in self.link.poll.ipoll(d):
                    return False
            else:
                time.sleep_ms(d)
        return True

    def output(self, pin, max_ms):
        self._pins[pin] = machine.Pin(pin, machine.Pin.OUT, value=0)
        self._outs.append(pin)
        self._guard(pin, max_ms)

    def pwm(self, pin, max_ms):
        self._pins[pin] = machine.PWM(machine.Pin(pin), freq=_PWM_FREQ, duty_u16=0)
        self._outs.append(pin)
        self._guard(pin, max_ms)

    def input(self, pin):
        p = machine.Pin(pin, machine.Pin.IN, machine.Pin.PULL_DOWN)
        self._pins[pin] = p
        edges = self._edges

        def count(_p):
            edges[pin] += 1        # an array item: no allocation inside the IRQ
            self.stir(time.ticks_us())

        p.irq(trigger=machine.Pin.IRQ_RISING, handler=count)

    def write(self, pin, v):
        self._pins[pin].value(v)
        self._switched(pin, v, time.ticks_ms())

    def duty(self, pin, d):
        self._pins[pin].duty_u16(d * 64)       # 0..1023 -> 0..65472
        self._switched(pin, d, time.ticks_ms())

    def _off(self, pin):
        p = self._pins[pin]
        if isinstance(p, machine.PWM):
            self.duty(pin, 0)
        else:
            self.write(pin, 0)

    def read(self, pin):
        return self._pins[pin].value()

    def edges(self, pin):
        return self._edges[pin]

    def uart(self, n, tx, rx, rxbuf):
        return Esp32Uart(self, n, tx, rx, rxbuf)

    def entropy(self, n):
        return os.urandom(n)

    def stir(self, t):
        """Called from a pin IRQ: small-int arithmetic and a bytearray only.
        A microsecond time's low 5 bits pick the pool's byte, the next 8
        go into it: the low bits are where the jitter is."""
        self.pool[t & 31] ^= (t >> 5) & 0xFF

    def wdt_start(self, ms):
        self._wdt = machine.WDT(timeout=ms)

    def wdt_feed(self):
        if self._wdt is not None:
            self._wdt.feed()

    def all_off(self):
        for pin in self._outs:
            p = self._pins[pin]
            if isinstance(p, machine.PWM):
                p.duty_u16(0)
            else:
                p.value(0)

    def secret(self, name):
        if not self.nvs:
            return HalCommon.secret(self, name)
        import esp32
        import io
        buf = bytearray(_SECRET_MAX)
        try:
            n = esp32.NVS(_NVS_SPACE).get_blob(name, buf)
        except OSError:                        # not there yet: provisioned by a file?
            with HalCommon.secret(self, name) as f:    # OSError when there is none either
                n = f.readinto(buf)
            if n == _SECRET_MAX:
                raise OSError("%s: longer than %d bytes" % (name, _SECRET_MAX - 1))
            self.set_secret(name, (memoryview(buf)[:n],))
            os.remove(self.store + name)
        return io.BytesIO(bytes(memoryview(buf)[:n]))

    def set_secret(self, name, parts):
        if not self.nvs:
            return HalCommon.set_secret(self, name, parts)
        import esp32
        data = bytearray()
        for part in parts:
            data += part.encode() if isinstance(part, str) else part
        if len(data) >= _SECRET_MAX:
            raise OSError("%s: longer than %d bytes" % (name, _SECRET_MAX - 1))
        nvs = esp32.NVS(_NVS_SPACE)
        nvs.set_blob(name, data)
        nvs.commit()
