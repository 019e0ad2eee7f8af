"""Where the MicroPython side lives on this machine: the `micropython` binary
of the venv, and which code tree it runs (the mpy-cross build when it is up
to date with the sources, as on a board; else the .py sources)."""

import os
import sys
import tty
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MPY_TREE = ROOT / "build" / "mpy"
DEVICE_PACKAGES = ("engine_core", "firmware")


def micropython_binary():
    return Path(sys.executable).parent / "micropython"


def mpy_tree_fresh():
    """True when build/mpy holds an .mpy no older than each device .py."""
    for pkg in DEVICE_PACKAGES:
        for src in (ROOT / pkg).rglob("*.py"):
            mpy = MPY_TREE / src.relative_to(ROOT).with_suffix(".mpy")
            if not mpy.exists() or mpy.stat().st_mtime < src.stat().st_mtime:
                return False
    return True


def code_root(source=False):
    """(directory to run micropython in, what it runs) for `-m` imports."""
    if source:
        return ROOT, "source .py (asked for)"
    if not MPY_TREE.is_dir():
        return ROOT, "source .py (no build/mpy: run `make mpy`)"
    if not mpy_tree_fresh():
        return ROOT, "source .py (build/mpy is stale: run `make mpy`)"
    return MPY_TREE, "mpy-cross .mpy (build/mpy)"


def raw_pty():
    """A pty pair in raw mode (no echo, no line editing): (master, slave) fds."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    return master, slave
