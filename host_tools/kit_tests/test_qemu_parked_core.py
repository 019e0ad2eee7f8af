"""An idle board in QEMU keeps no host core busy: the QEMU variant parks
the core FreeRTOS leaves unused (firmware/image/FUZHOU_TABLE_S3/qemu/
park_core1.c). Left in the ROM's wait for a start address, QEMU's second
core spins a whole host core for as long as QEMU runs."""

import time

from host_tools.kit_tests import procfs
from host_tools.sim.qemu_machine import QemuBoard

WINDOW_S = 3.0     # the CPU time is counted over this much real time


def test_an_idle_board_in_qemu_keeps_no_host_core_busy(shipped_files):
    with QemuBoard(shipped_files) as board:  # booted to the REPL, where both cores wait
        before = procfs.cpu_seconds(board.proc.pid)
        time.sleep(WINDOW_S)                # the measure is of real time: nothing to wait for
        used = procfs.cpu_seconds(board.proc.pid) - before
    # Parked: a few hundredths of a second; spinning: the whole window.
    assert used < WINDOW_S / 3, used
