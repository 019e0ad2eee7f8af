"""Where the firmware's resident heap goes, step by step through the boot
of firmware/main.py, on the twin (the firmware frozen into the unix port
built 32-bit), as the virtual table runs it:

    python -m host_tools.bench.heapcost

Each step: the live heap after a collection, and the names interned at
run time (qstrs): the frozen code's own names are in the image, so these
are only names made while it runs. A tool for the engineer cutting the
heap (docs/firmware.md, Memory); `make bench` measures the figures
themselves (heap.py)."""

import argparse
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from host_tools.image.mpenv import ROOT, twin_binary

QSTR_RE = re.compile(r"qstr pool: n_pool=(\d+), n_qstr=(\d+), n_str_data_bytes=(\d+), "
                     r"n_total_bytes=(\d+)")


def run():
    """(rows, parts) of one boot: rows [(step, heap bytes, qstrs, qstr
    pools' bytes)] as measure() gives them; parts {"live": the absolute
    live heap at the end, "names": names interned at run time,
    "name_pools": the pools' heap bytes, "name_text": their text's bytes}."""
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "store").mkdir()
        shutil.copy(Path(__file__).with_name("mp_heapcost.py"), t / "mp_heapcost.py")
        # The frozen modules first, as the twin boots; then this folder for
        # the script itself.
        cmd = [str(twin_binary()), "-c", "import sys\nsys.path[:] = ['.frozen', '']\n"
               "import mp_heapcost\n", str(t / "bus.bin"), str(ROOT / "firmware" / "config.json"),
               str(ROOT / "firmware" / "tags.txt"), str(t / "store") + "/"]
        p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("mp_heapcost failed: " + (p.stderr or p.stdout)[-2000:])
    rows, step, parts = [], None, {}
    for line in p.stdout.splitlines():
        if line.startswith("STEP "):
            _, name, heap = line.rsplit(None, 2)
            step = (name, int(heap))
        elif line.startswith("LIVE "):
            key, value = line.split()
            parts[key.lower()] = int(value)
        m = QSTR_RE.match(line)
        if m:
            parts.update(names=int(m.group(2)), name_text=int(m.group(3)),
                         name_pools=int(m.group(4)) - int(m.group(3)))
            if step:
                rows.append((step[0], step[1], int(m.group(2)), int(m.group(4))))
                step = None
    return rows, parts


def measure():
    """[(step, heap bytes, qstrs, qstr pools' bytes)]"""
    return run()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args()
    prev_heap = prev_q = 0
    print("%-20s %8s %8s %6s %6s %9s" % ("step", "heap B", "+B", "qstrs", "+q", "qstr B"))
    for name, heap, q, qb in measure():
        print("%-20s %8d %8d %6d %6d %9d" % (name, heap, heap - prev_heap, q, q - prev_q, qb))
        prev_heap, prev_q = heap, q


if __name__ == "__main__":
    main()
