# Runs on the board's QEMU image, through mpremote (test_esp32_hal.py): the
# real esp32 HAL (firmware/hal/esp32.py) claims every pin of the shipped
# pin map as the drivers claim them (firmware/drivers/), then drives each
# output off, on, off, reads every input, opens the display's UART and the
# RFID reader's, feeds the watchdog, reads the DRBG, writes and reads the
# flash. Prints one JSON line of what it saw.
import json
import machine
import os

from firmware import config
from firmware.hal.esp32 import Esp32Hal

hal = Esp32Hal("/")
pins = config.load("config.json").pins
pwm = [pins["plate_motor"]] + pins["lane_feed"]               # motion.py: Plate, Lane
gpio = pins["lift_up"] + pins["lift_down"] + [pins["buzzer"]]  # Lifter, Buzzer
inputs = ([pins["plate_rotation"]] + pins["lane_count"] + pins["lift_top"]
          + pins["lift_bottom"] + pins["keys"])
for pin in pwm:
    hal.pwm(pin, 60000)
for pin in gpio:
    hal.output(pin, 60000)
for pin in inputs:
    hal.input(pin)
out = {"entropy": hal.entropy_source, "outputs": {}, "inputs": {}, "uarts": {}}
for pin in pwm + gpio:
    seen = []
    for v in (0, 1, 0):
        if pin in pwm:
            hal.duty(pin, 1023 * v)
            seen.append(hal._pins[pin].duty_u16())
        else:
            hal.write(pin, v)
            seen.append(machine.Pin(pin).value())
    out["outputs"][str(pin)] = {"pwm": pin in pwm, "seen": seen}
for pin in inputs:
    out["inputs"][str(pin)] = [hal.read(pin), hal.edges(pin)]
# The rings firmware/devices.py asks for: 48 bytes the display's, 192 the RFID's.
for n, tx, rx, ring in ((1, pins["display_tx"], pins["display_rx"], 48),
                        (2, pins["rfid_tx"], pins["rfid_rx"], 192)):
    try:
        u = hal.uart(n, tx, rx, ring)
        u.write(b"\x7e\x01", 2)
        out["uarts"][str(n)] = "ok %d" % u.readinto(bytearray(8))
    except OSError as e:
        out["uarts"][str(n)] = "OSError %s" % e
hal.all_off()
out["tripped"] = hal.tripped
hal.wdt_start(8000)
hal.wdt_feed()
a, b = bytes(hal.rand(32)), bytes(hal.rand(32))
out["rand"] = [len(a), a != b, a != bytes(32)]
hal.set_flag("hal_check", True)
flag_on = hal.flag("hal_check")
hal.set_flag("hal_check", False)
out["flag"] = [flag_on, hal.flag("hal_check")]
hal.set_secret("hal_check.bin", (b"\x01\x02", b"abc"))
with hal.secret("hal_check.bin") as f:
    out["secret"] = f.read() == b"\x01\x02abc"
os.remove("hal_check.bin")
hal.wdt_feed()
print("HAL_CHECK " + json.dumps(out))
