"""The ESP32 backend's randomness (firmware/hal/esp32.py), on both
interpreters, with `machine` and `network` stood in for: the DRBG is
seeded while the radio runs (the ESP32-S3's RNG is true random only then)
and personalized with the chip's id; a pin's rising edge and a UART read
that finds bytes stir their microsecond time into the jitter pool."""

import sys

from firmware import drbg
from firmware.fakes.hal import unload

UID = b"\x7c\xdf\xa1\x00\x11\x22"


class Machine:
    """What the backend uses of `machine` here; it keeps the pins' IRQ
    handlers and says what happened in `log`."""

    def __init__(self, log):
        self.log = log
        self.handlers = {}
        machine = self

        class Pin:
            OUT = 1
            IN = 2
            PULL_DOWN = 3
            IRQ_RISING = 4

            def __init__(self, n, mode=None, pull=None, value=0):
                self.n = n

            def irq(self, trigger, handler):
                machine.handlers[self.n] = (self, handler)

        class UART:
            def __init__(self, n, baudrate, tx, rx, rxbuf):
                if rxbuf <= 128:       # ESP-IDF's uart_driver_install: more than the FIFO
                    raise OSError(1, "ESP_FAIL")
                self.waiting = b""

            def any(self):
                return len(self.waiting)

            def readinto(self, buf):
                n = len(self.waiting)
                buf[:n] = self.waiting
                self.waiting = b""
                return n
        self.Pin = Pin
        self.UART = UART

    def unique_id(self):
        return UID


class Network:
    """`radio`: "works", "broken" (the radio does not start) or "absent"
    (an image without Wi-Fi: the module has no WLAN)."""
    STA_IF = 0

    def __init__(self, log, radio="works"):
        log_ = log

        class WLAN:
            def __init__(self, interface):
                assert interface == 0

            def active(self, on):
                if radio == "broken":
                    log_.append("radio failed")
                    raise OSError(-1)
                log_.append("radio on" if on else "radio off")
        if radio != "absent":
            self.WLAN = WLAN


class Clock:
    def __init__(self):
        self.us = 0

    def ticks_us(self):
        return self.us

    def ticks_ms(self):
        return self.us // 1000


class NoLink:
    pass


def esp32_hal(radio="works"):
    """(hal, machine, clock, log): an Esp32Hal on stand-ins, its raw
    generator returning zeros and saying when it was read."""
    log = []
    saved = {name: sys.modules.get(name) for name in ("machine", "network", "micropython")}
    machine = Machine(log)
    sys.modules["machine"] = machine
    sys.modules["network"] = Network(log, radio)
    try:
        import micropython  # noqa: F401  (MicroPython's own)
    except ImportError:        # CPython: what the backend imports of it
        class Micropython:
            @staticmethod
            def const(x):
                return x
        sys.modules["micropython"] = Micropython()
    try:
        from firmware.hal import esp32
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        unload("firmware.hal.esp32")
    clock = Clock()
    esp32.time = clock
    esp32.UsbLink = NoLink

    class Board(esp32.Esp32Hal):
        def entropy(self, n):
            log.append("entropy %d" % n)
            return bytes(n)
    return Board("/"), machine, clock, log


def test_the_drbg_is_seeded_while_the_radio_runs_and_personalized_with_the_chip_id():
    hal, _machine, _clock, log = esp32_hal()
    assert log == ["radio on", "entropy 48", "radio off"]
    s = drbg.instantiate(bytes(48), UID)
    assert bytes(hal.rand(32)) == drbg.generate(s, 32, bytes(32))


def test_the_seed_names_the_radio_as_its_entropy_source():
    hal, _machine, _clock, _log = esp32_hal()
    assert hal.entropy_source == "rf"


def test_without_wifi_or_with_a_radio_that_fails_the_table_boots_and_says_so():
    for radio, expected in (("absent", ["entropy 48"]), ("broken", ["radio failed", "entropy 48"])):
        hal, _machine, _clock, log = esp32_hal(radio)
        assert log == expected, radio
        assert hal.entropy_source == "no_rf"
        s = drbg.instantiate(bytes(48), UID)
        assert bytes(hal.rand(32)) == drbg.generate(s, 32, bytes(32))


def test_a_rising_edge_counts_and_stirs_its_microsecond_time():
    hal, machine, clock, _log = esp32_hal()
    hal.input(4)
    pin, handler = machine.handlers[4]
    clock.us = 0x12345                     # its low 5 bits pick the byte
    handler(pin)
    assert hal.edges(4) == 1
    want = bytearray(32)
    want[0x05] = (0x12345 >> 5) & 0xFF
    assert hal.pool == want
    clock.us = 0x12345 + 3
    handler(pin)
    want[0x08] = (0x12348 >> 5) & 0xFF
    assert hal.edges(4) == 2 and hal.pool == want


def test_a_uart_with_a_small_ring_still_opens():
    hal, _machine, _clock, _log = esp32_hal()
    uart = hal.uart(1, 43, 44, 48)          # the display's: a few 6-byte ACKs between ticks
    assert uart.readinto(bytearray(8)) == 0


def test_a_uart_read_that_finds_bytes_stirs_one_that_finds_none_does_not():
    hal, _machine, clock, _log = esp32_hal()
    uart = hal.uart(2, 17, 18, 192)
    buf = bytearray(8)
    clock.us = 1000
    assert uart.readinto(buf) == 0
    assert hal.pool == bytearray(32)
    uart.uart.waiting = b"\x7e\x01"
    clock.us = 1000 + 37
    assert uart.readinto(buf) == 2 and buf[:2] == b"\x7e\x01"
    want = bytearray(32)
    want[1037 & 31] = (1037 >> 5) & 0xFF
    assert hal.pool == want
