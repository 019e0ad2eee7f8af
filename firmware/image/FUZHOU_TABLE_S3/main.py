# The board's entry point, frozen (boot.py says why a frozen one runs
# before any file). Ctrl-C off first: MicroPython's pyexec turns it on just
# before it runs this module, and the try below is the first thing that
# runs. Then only frozen modules are importable: no file on the flash can
# stand in for a module of the firmware (or for firmware/image_build.py,
# which says whether this is a production image).
#
# A production image never reaches the REPL: firmware.entry.start never
# returns, and anything that escapes before it resets the board. A bench
# image runs the table below, outside the try: an exception there ends at
# the REPL for a developer to read (docs/security.md, The production image).
try:
    import micropython
    micropython.kbd_intr(-1)
    import sys
    sys.path[:] = [".frozen"]
    from firmware.image_build import PRODUCTION
    from firmware.hal.esp32 import Esp32Hal
    import machine
    if PRODUCTION:
        from firmware.entry import start
        start(Esp32Hal("/", True), machine.reset, "config.json", "tags.txt", "esp32")
except BaseException:
    import machine
    machine.reset()

from firmware.main import run

run(Esp32Hal("/"), "config.json", "tags.txt", "", True)
