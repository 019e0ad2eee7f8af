# MicroPython only: run by host_tools/bench/dice.py as
#     micropython host_tools/bench/mp_dice.py CODE_ROOT ROLLS [SEED]
# The firmware's dice (firmware/drivers/panel.py, Dice: engine_core.dice.roll,
# rejection sampling) on the HAL's random bytes: its DRBG (firmware/drbg.py),
# seeded from os.urandom as hal/esp32.py seeds it, or with SEED from a seeded
# generator as a virtual table's is (firmware/sim_main.py). Prints one JSON
# line: the face counts of each die.
import json
import os
import random
import sys

sys.path.insert(0, sys.argv[1])

from firmware.drivers.panel import Dice  # noqa: E402
from firmware.hal import HalCommon  # noqa: E402


def seeded(n):
    return bytes(random.getrandbits(8) for _ in range(n))


class Board(HalCommon):
    """What the dice use of a HAL: HalCommon's DRBG on a raw generator."""

    def __init__(self, raw):
        self.entropy = raw
        HalCommon.__init__(self, b"")


n = int(sys.argv[2])
if len(sys.argv) > 3:
    random.seed(int(sys.argv[3]))
dice = Dice(Board(seeded if len(sys.argv) > 3 else os.urandom).rand, 0)
a = [0] * 6
b = [0] * 6
for _ in range(n):
    dice.start(0)
    a[dice.a - 1] += 1
    b[dice.b - 1] += 1
print(json.dumps({"rolls": n, "a": a, "b": b}))
