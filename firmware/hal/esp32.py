"""The ESP32 backend: machine.Pin / PWM / UART / WDT, os.urandom, time.

The only module (with main's board entry) that imports `machine`. Rising
edges are counted by pin IRQs so that a 20 ms sensor pulse is never missed
between two control ticks.
"""

import os
import select
import sys
import time

import machine
import micropython


class Esp32Input:
    def __init__(self, pin):
        self.pin = machine.Pin(pin, machine.Pin.IN, machine.Pin.PULL_DOWN)
        self.rising = 0
        self.pin.irq(trigger=machine.Pin.IRQ_RISING, handler=self._edge)

    def _edge(self, _pin):
        self.rising += 1       # small int: no allocation inside the IRQ

    def value(self):
        return self.pin.value()


class Esp32Output:
    def __init__(self, pin):
        self.pin = machine.Pin(pin, machine.Pin.OUT, value=0)

    def value(self, v):
        self.pin.value(v)


class Esp32Pwm:
    FREQ = 20000               # above hearing, below the driver's limit

    def __init__(self, pin):
        self.pwm = machine.PWM(machine.Pin(pin), freq=self.FREQ, duty_u16=0)

    def duty(self, d):
        self.pwm.duty_u16(d * 64)          # 0..1023 -> 0..65472

    def value(self, v):
        self.duty(v)


class Esp32Uart:
    def __init__(self, n, tx, rx, baud=115200):
        self.uart = machine.UART(n, baudrate=baud, tx=tx, rx=rx, rxbuf=1024)

    def write(self, buf, n):
        self.uart.write(memoryview(buf)[:n])

    def readinto(self, buf):
        if not self.uart.any():
            return 0
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


class Esp32Hal:
    def __init__(self):
        self._outputs = []
        self._wdt = None
        self.link = UsbLink()

    def ticks_ms(self):
        return time.ticks_ms()

    def sleep_until(self, t):
        d = time.ticks_diff(t, time.ticks_ms())
        if d > 0:
            time.sleep_ms(d)

    def output(self, pin):
        o = Esp32Output(pin)
        self._outputs.append(o)
        return o

    def pwm(self, pin):
        o = Esp32Pwm(pin)
        self._outputs.append(o)
        return o

    def input(self, pin):
        return Esp32Input(pin)

    def uart(self, n, tx, rx):
        return Esp32Uart(n, tx, rx)

    def rand(self, n):
        return os.urandom(n)

    def wdt_start(self, ms):
        self._wdt = machine.WDT(timeout=ms)

    def wdt_feed(self):
        if self._wdt is not None:
            self._wdt.feed()

    def all_off(self):
        for o in self._outputs:
            o.value(0)
