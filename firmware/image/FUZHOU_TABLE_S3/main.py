# The board's entry point, frozen (boot.py says why a frozen one runs
# before any file). Only frozen modules are importable: no file on the
# flash can stand in for a module of the firmware.
import sys

sys.path[:] = [".frozen"]

from firmware.hal.esp32 import Esp32Hal
from firmware.main import run

run(Esp32Hal("/"), "config.json", "tags.txt", "", True)
