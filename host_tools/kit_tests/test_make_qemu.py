"""`make qemu` as a person types it, from the project root: the board's
QEMU image boots on a virtual table, the command prints the firmware's
runtime and the link's pty, `mjctl --port <pty> status --json` answers
from the esp32 port, and Ctrl-C ends it with every process gone."""

import json
import os
import re
import select
import signal
import subprocess
import time

from host_tools.image.mpenv import ROOT
from host_tools.kit_tests import procfs

BOOT_S = 120.0               # the boot and the first answers, at most (a few s here)


def _read_until_link(proc):
    """make qemu's stdout up to its `link: <pty>` line."""
    out = b""
    end = time.monotonic() + BOOT_S
    while b"\nlink: " not in out or not out.endswith(b"\n"):
        assert proc.poll() is None, ("make qemu ended", proc.returncode, out.decode(),
                                     proc.stderr.read().decode())
        assert time.monotonic() < end, out.decode()
        if select.select((proc.stdout,), (), (), 0.5)[0]:
            out += os.read(proc.stdout.fileno(), 4096)
    return out.decode()


def _qemus_under(root):
    """The pids of the QEMU processes among `root`'s descendants (Linux /proc)."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            up = procfs.parent(int(name))
            if up is not None:
                parent[int(name)] = up
    found = []
    for pid in parent:
        up = pid
        while up in parent and up not in (root, 0, 1):
            up = parent[up]
        if up == root and pid != root:
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    if b"qemu-system-xtensa" in f.read().split(b"\0")[0]:
                        found.append(pid)
            except FileNotFoundError:
                pass
    return found


def test_make_qemu_boots_the_table_and_mjctl_reads_the_esp32_runtime():
    proc = subprocess.Popen(["make", "qemu"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out = _read_until_link(proc)
        assert "ESP-ROM:esp32s3" in out                  # the ROM's banner, then the bootloader's
        assert re.search(r"MicroPython 1\.28\.0 on the esp32 port \(ESP32S3\), frozen", out), out
        assert "table: idle, lifters bottom/bottom/bottom/bottom" in out, out
        port = re.search(r"^link: (\S+)", out, re.M).group(1)
        qemus = _qemus_under(proc.pid)
        assert len(qemus) == 1, qemus                    # one board, one QEMU
        r = subprocess.run([str(ROOT / ".venv" / "bin" / "mjctl"), "--port", port, "status",
                            "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, (r.stdout, r.stderr)
        st = json.loads(r.stdout)
        assert st["state"] == "idle"
        rt = st["runtime"]
        assert (rt["port"], rt["chip"], rt["frozen"], rt["micropython"]) == (
            "esp32", "ESP32S3", True, "1.28.0"), rt
        # On a virtual table the DRBG takes the table's seed (qemu.json), as
        # the twin's does: the runs repeat (docs/security.md, Randomness).
        assert rt["entropy"] == "seeded"
    finally:
        os.killpg(proc.pid, signal.SIGINT)               # Ctrl-C on make's terminal
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    # make ends by the Ctrl-C it got too, as for any target; the table's
    # own exit is quiet: no traceback.
    err = proc.stderr.read().decode()
    assert rc in (0, -signal.SIGINT), (rc, err)
    assert "Traceback" not in err, err
    for pid in qemus:                                    # Ctrl-C leaves no QEMU behind
        assert not procfs.running(pid), pid
