"""The ESP32 backend's stir allocates nothing, nor does the pin IRQ that
calls it (MicroPython only: heap_lock makes any allocation raise), so that
an edge arriving in the middle of the control loop costs it no heap."""

import micropython

from firmware.tests.test_esp32_rng import esp32_hal


def test_an_edges_irq_and_its_stir_allocate_nothing():
    hal, machine, clock, _log = esp32_hal()
    hal.input(4)
    pin, handler = machine.handlers[4]
    clock.us = (1 << 30) - 1               # the largest a ticks_us gives
    micropython.heap_lock()
    try:
        handler(pin)
        hal.stir(0x2ABCDEF)
    finally:
        micropython.heap_unlock()
    assert hal.edges(4) == 1 and hal.pool != bytearray(32)
