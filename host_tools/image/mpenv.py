"""Where the MicroPython side lives on this machine, all of it built by
`make image` and `make tools` from the pinned source (docs/deploy.md):

* the twin, `build/image/micropython`: the unix port built 32-bit with
  the firmware frozen in, as the board's image has it; the virtual table
  runs it by default;
* the unfrozen 32-bit build, `.venv/bin/micropython`: the same port with
  none of the firmware in it, for the rules and firmware tests and the
  development forms, the .py sources and the .mpy files of `make mpy`.
"""

import os
import subprocess
import sys
import tty
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MPY_TREE = ROOT / "build" / "mpy"
TWIN = ROOT / "build" / "image" / "micropython"
IMAGE_MANIFEST = ROOT / "firmware" / "image" / "manifest.py"


def micropy_dir():
    """The pinned MicroPython source: $MICROPY_DIR (a git checkout of
    v1.28.0), else what make unpacks under build/."""
    return Path(os.environ.get("MICROPY_DIR") or ROOT / "build" / "micropython-1.28.0").absolute()
DEVICE_PACKAGES = ("engine_core", "firmware")
# The twin's entry: only frozen modules are importable, so no file in the
# folder it runs in (the board's flash) can stand in for one, as on the
# board (firmware/image/FUZHOU_TABLE_S3/main.py). sys.argv[0] is "-c"
# then, where `-m` puts the module's name: sim_main reads what follows.
TWIN_BOOT = "import sys\nsys.path[:] = ['.frozen']\nimport firmware.sim_main\n"
# The twin booted as a production image: what the board's frozen main.py
# does (firmware/image/FUZHOU_TABLE_S3/), with the sim HAL made as
# firmware.sim_main makes it (its own RNG: a production boot is not
# replayed from a seed). Ctrl-C off first; firmware.entry.start never
# returns; a reset ends the process with RESET_EXIT, and the launcher
# starts it again as a board restarts; so does anything that escapes
# before start.
RESET_EXIT = 99
TWIN_BOOT_PRODUCTION = """\
try:
    import micropython
    micropython.kbd_intr(-1)
    import sys
    sys.path[:] = ['.frozen']
    from firmware.hal.sim import SimHal
    from firmware.entry import start

    def reset():
        raise SystemExit(%d)
    a = sys.argv
    start(SimHal(int(a[1]), int(a[2]), a[5].rstrip('/') + '/'), reset, a[3], a[4], 'sim')
except BaseException:
    raise SystemExit(%d)
""" % (RESET_EXIT, RESET_EXIT)


class MissingBuild(RuntimeError):
    """A MicroPython build that `make` has not made yet; says which target."""


def micropython_binary():
    """The unfrozen 32-bit MicroPython (a link in the venv's bin)."""
    path = Path(sys.executable).parent / "micropython"
    if not path.exists():
        raise MissingBuild("no %s: run `make tools`" % path.relative_to(ROOT)
                           if path.is_relative_to(ROOT) else "no %s: run `make tools`" % path)
    return path


def twin_binary():
    """The twin, as built from the sources now: MissingBuild when it is not
    there or a source changed since (running an old firmware would test
    the wrong thing, quietly)."""
    if not TWIN.exists():
        raise MissingBuild("no build/image/micropython (the twin): run `make image`")
    if twin_stale():
        raise MissingBuild("build/image/micropython is older than the firmware's sources:"
                           " run `make image`")
    return TWIN


_fresh = []


def twin_stale():
    """True when `make image` has something to do: the Makefile's own
    answer (`make -q`), asked once per process and remembered while the
    twin is unchanged."""
    stamp = TWIN.stat().st_mtime
    if _fresh and _fresh[0] == stamp:
        return False
    r = subprocess.run(["make", "-q", "-C", str(ROOT), "image"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    if r.returncode == 0:
        _fresh[:] = [stamp]
    return r.returncode != 0


def mpy_tree_fresh():
    """True when build/mpy holds an .mpy no older than each device .py."""
    for pkg in DEVICE_PACKAGES:
        for src in (ROOT / pkg).rglob("*.py"):
            if "image" in src.relative_to(ROOT).parts:
                continue
            mpy = MPY_TREE / src.relative_to(ROOT).with_suffix(".mpy")
            if not mpy.exists() or mpy.stat().st_mtime < src.stat().st_mtime:
                return False
    return True


def code_root(source=False):
    """(directory to run micropython in, what it runs) for `-m` imports of
    a development form: the .mpy files of `make mpy`, else the sources;
    what it runs in words (the text tables' `code.*`)."""
    from host_tools.texts import t
    if source:
        return ROOT, t("code.source_asked")
    if not MPY_TREE.is_dir():
        return ROOT, t("code.source_no_mpy")
    if not mpy_tree_fresh():
        return ROOT, t("code.source_stale")
    return MPY_TREE, t("code.mpy")


def raw_pty():
    """A pty pair in raw mode (no echo, no line editing): (master, slave) fds."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    return master, slave
