"""The device code as a ROMFS image, the way a board runs it from flash.

MicroPython (1.25 on) executes .mpy files in place from a read-only ROMFS
partition: bytecode and constants stay in flash and the heap holds only
data. An ESP32 with a 110 KB heap needs that; so does the virtual table's
small-heap runs. `mpremote romfs build` packs the image from the .mpy
files and manifest that host_tools/deploy.py makes; `romboot` maps it for
the unix port.
"""

import os
import shutil
import subprocess
import sys

from host_tools import deploy
from host_tools.mpenv import ROOT

IMAGE = ROOT / "build" / "romfs" / "device.romfs"
STAGE = ROOT / "build" / "romfs" / "stage"


def stale():
    if not IMAGE.exists():
        return True
    built = IMAGE.stat().st_mtime
    return any(src.stat().st_mtime > built for src in deploy.device_sources())


def build(quiet=True):
    """(Re)build the image from engine_core/ and firmware/ (tests left out),
    compiled and listed in a manifest exactly as `make deploy` does for a
    board (host_tools/deploy.py): the firmware checks the manifest at boot
    here too. mpremote puts the .mpy files into the image as they are."""
    shutil.rmtree(STAGE, ignore_errors=True)
    STAGE.mkdir(parents=True)
    deploy.write_manifest(STAGE, deploy.compile_tree(STAGE), "romfs")
    mpremote = os.path.join(os.path.dirname(sys.executable), "mpremote")
    tmp = str(IMAGE) + ".tmp"
    # Built from inside the stage so the bytecode names files relatively.
    out = subprocess.run([mpremote, "romfs", "-o", tmp, "build", "."], cwd=str(STAGE),
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("mpremote romfs build failed:\n" + out.stdout + out.stderr)
    os.replace(tmp, IMAGE)
    if not quiet:
        print(out.stdout.strip().splitlines()[-1])
    return IMAGE


def image():
    """The image, rebuilt first if a device source is newer."""
    return build() if stale() else IMAGE


def command(module, args, heap=None):
    """argv that runs `module` from the image under MicroPython."""
    return [sys.executable, "-m", "host_tools.vtable.romboot", str(image()),
            str(heap or 0), module] + [str(a) for a in args]


if __name__ == "__main__":
    build(quiet=False)
