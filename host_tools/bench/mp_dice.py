# MicroPython only: run by host_tools/bench/dice.py as
#     micropython host_tools/bench/mp_dice.py CODE_ROOT ROLLS
# The firmware's dice (firmware/drivers/panel.py, Dice: engine_core.dice.roll,
# rejection sampling) on os.urandom, as hal/esp32.py gives it. Prints one
# JSON line: the face counts of each die.
import json
import os
import sys

sys.path.insert(0, sys.argv[1])

from firmware.drivers.panel import Dice  # noqa: E402

n = int(sys.argv[2])
dice = Dice(os.urandom, 0)
a = [0] * 6
b = [0] * 6
for _ in range(n):
    dice.start(0)
    a[dice.a - 1] += 1
    b[dice.b - 1] += 1
print(json.dumps({"rolls": n, "a": a, "b": b}))
