"""The hardware abstraction layer: the only door to pins, UARTs, time, the
RNG and the watchdog. Two backends with one interface:

* `esp32.Esp32Hal` - machine.Pin / PWM / UART / WDT, os.urandom, time.
* `sim.SimHal`     - the same calls carried over the sim bus to the
                     virtual table (docs/hardware.md), in virtual time.

Interface (what drivers and the controller may use):

    hal.ticks_ms()              now, in ms (virtual under sim)
    hal.sleep_until(t)          end of a control tick: wait until t
    hal.output(pin)             -> obj with .value(v)        digital out
    hal.pwm(pin)                -> obj with .duty(0..1023)   PWM out
    hal.input(pin)              -> obj with .value() and .rising (count of
                                   rising edges, kept by an IRQ or the bus)
    hal.uart(n, tx, rx)         -> obj with .write(buf, n), .readinto(buf) -> k
    hal.link                    -> the host link: .readinto(buf) -> k (never
                                   blocks), .write(buf, n) -> bool (False: dropped)
    hal.rand(n)                 n random bytes (hardware RNG)
    hal.wdt_start(ms), hal.wdt_feed()
    hal.all_off()               every output off (the safe state)

Outputs remember their pins so that `all_off()` can stop every motor after a
fault without the caller listing them.
"""

from firmware.hal.ticks import ticks_add, ticks_diff  # noqa: F401 (re-export)
