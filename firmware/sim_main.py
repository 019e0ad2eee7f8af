"""Entry under the MicroPython unix port, on the virtual table:

    micropython -m firmware.sim_main BUS_FD LINK_FD CONFIG TAGS STORE_DIR [SEED]

BUS_FD and LINK_FD are pty file descriptors inherited from the launcher
(host_tools/sim/launcher.py); STORE_DIR stands for the board's flash, and
its files for the table's secrets: TAGS names the tag table's file there
(hal.secret). With SEED the "hardware" RNG, the entropy input of the HAL's
DRBG, is a seeded generator, so a virtual table run is reproducible from
its seed. The twin boots as a production image through
host_tools/image/mpenv.py's TWIN_BOOT_PRODUCTION instead
(firmware/entry.py).
"""

import random
import sys

from firmware.hal.sim import SimHal
from firmware.main import run


def _rand(n):
    """The seeded "hardware" RNG. (Named as the sim HAL's attribute: a
    function's name is an interned name for good, docs/firmware.md, Memory.)"""
    return bytes(random.getrandbits(8) for _ in range(n))


def main(argv):
    if len(argv) not in (6, 7):
        print("usage: micropython -m firmware.sim_main BUS_FD LINK_FD CONFIG TAGS STORE_DIR [SEED]")
        sys.exit(2)
    # With a seed the "hardware" RNG is a seeded generator; without, the sim
    # HAL's own.
    seeded = len(argv) == 7
    if seeded:
        # The unix port's generator is poorly mixed right after seed() (the
        # low bit of its first output is always 0): harmless here, where
        # its bytes seed the DRBG, whose output is a hash of all of them.
        random.seed(int(argv[6]))
    store = argv[5]
    if not store.endswith("/"):
        store += "/"
    hal = SimHal(int(argv[1]), int(argv[2]), store, _rand if seeded else None)
    # The code's root: a deployed virtual board carries a manifest,
    # checked like a board's; the .py sources and make mpy's tree none.
    here = __file__                # firmware/ is a namespace package on the device
    root = here[:here.rfind("firmware")]
    run(hal, argv[3], argv[4], root, False, "sim")


main(sys.argv)
