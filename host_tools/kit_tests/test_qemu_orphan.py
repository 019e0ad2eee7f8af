"""A host killed without its cleanup (kill -9, a runner's timeout) takes
its QEMU with it: QEMU runs in a session of its own, and without the
parent-death signal (qemu_machine.qemu_command) it would spin a core for
good, slowing every run after it."""

import os
import signal
import subprocess
import sys
import time

from host_tools.image.mpenv import ROOT
from host_tools.kit_tests import procfs

HOST = """
import sys
from host_tools.sim.qemu import QemuTable
t = QemuTable(seed=1).start()
print(t.proc.pid, flush=True)
sys.stdin.read()
"""


def test_qemu_ends_with_a_host_killed_hard():
    host = subprocess.Popen([sys.executable, "-c", HOST], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        qemu = int(host.stdout.readline())
        assert procfs.running(qemu)
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait(timeout=10)
    end = time.monotonic() + 10
    while procfs.running(qemu) and time.monotonic() < end:
        time.sleep(0.05)       # the kernel's signal to another process, in wall time
    left = procfs.running(qemu)
    if left:
        os.kill(qemu, signal.SIGKILL)
    assert not left, "QEMU outlived its host"
