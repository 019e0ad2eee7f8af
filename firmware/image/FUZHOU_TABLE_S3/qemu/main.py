# The QEMU variant's entry point, frozen as main.py (mpconfigvariant_QEMU.cmake).
# With the launcher's qemu.json on the flash (host_tools/sim/qemu.py), the
# table runs on the sim bus, UART1, its link on the console, UART0
# (firmware/hal/qemu.py); Ctrl-C off first, only frozen modules
# importable, as the board's main.py. Without it the board stops at the
# REPL, for the esp32 HAL's check (host_tools/kit_tests/) or a developer.
import sys

sys.path[:] = [".frozen"]
from firmware.hal import qemu

_conf = qemu.settings()
if _conf is not None:
    import micropython
    micropython.kbd_intr(-1)
    from firmware.main import run
    run(qemu.sim_hal(_conf), "config.json", "tags.txt", "", True, "sim")
else:
    sys.path[:] = ["", ".frozen", "/lib"]
