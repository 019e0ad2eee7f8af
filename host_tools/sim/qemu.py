"""The firmware on the esp32 port: the board's QEMU image (`make qemu`,
build/firmware-qemu/firmware.bin) booted in QEMU's esp32s3 machine, driving
the virtual table as the twin does (docs/hardware.md, The firmware in QEMU).

`QemuTable` is `SimTable` with QEMU (host_tools/sim/qemu_machine.py) in
place of the twin's process:

    QEMU's UART1  the sim bus, which the BusServer serves, as the twin's pty
    QEMU's UART0  the console, which carries the link: a bridge thread
                  joins it to the table's own link pty, the one clients
                  open; it outlives QEMU's restarts, as the twin's does.
                  What QEMU prints outside the link's frames (the ROM, the
                  bootloader, the GC's reports) goes to firmware.log.

The flash holds config.json, tags.txt, service.key and qemu.json (the
seed; its presence makes the image's main.py start the table on the sim
bus: firmware/hal/qemu.py), and outlives QEMU's restarts, as a board's
flash outlives a power cut.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

from firmware.link.codec import LinkError
from host_tools.image import espkit
from host_tools.image.mpenv import MissingBuild
from host_tools.link.client import LinkClient
from host_tools.sim.launcher import SimTable
from host_tools.sim.qemu_machine import (ConsoleBridge, SocketPort, connect, efuse_file,
                                         flash_file, flash_files, flash_update, qemu_command,
                                         qemu_image)

SETTINGS = "qemu.json"
# A request's attempt in `make qemu`: QEMU answers at the host's pace,
# slower than a board when the host is busy (the hw_tests' target: 5 s).
LINK_TIMEOUT_S = 5.0


class QemuTable(SimTable):
    """One virtual table with its firmware on the esp32 port in QEMU. Use
    as a context manager, as SimTable; `form` is always the image."""

    bus_timeout_s = 0.02
    boot_s = 60.0              # QEMU's boot to the firmware's HELLO, at most
    # Wall seconds of bus silence before the table's watchdog bites (the
    # twin's: 3 s). A write to QEMU's flash takes seconds at times: with
    # 3 s, two of a learned-times run's cycles and one of ten power cuts
    # ended in a watchdog reset the firmware never earned.
    stall_s = 20.0
    code = "frozen in the esp32 image (QEMU)"

    def __init__(self, seed=0, faults=(), heap=None, realtime=False, config_path=None,
                 ruleset=None, speed=1.0, key=True, vendor=None, icount=False):
        if heap:
            raise ValueError("the esp32 port's heap is the port's own: no heap size in QEMU")
        self.qemu = espkit.qemu_binary(vendor)
        self.image = qemu_image()
        self.icount = icount
        SimTable.__init__(self, seed=seed, faults=faults, realtime=realtime,
                          config_path=config_path, ruleset=ruleset, speed=speed, key=key)
        self.flash = os.path.join(self.store, "flash.bin")
        self.efuse = os.path.join(self.store, "efuse.bin")
        self._bridge = None

    def _firmware(self, form, code_dir):
        self.binary, self.cwd, self.code = None, self.store, QemuTable.code

    # -- the board's flash, made once ---------------------------------------

    def _provision(self):
        files = {}
        for name, src in (("config.json", self.config_path), ("tags.txt", self.tags_path)):
            with open(src, "rb") as f:
                files[name] = f.read()
        if self.key is not None:
            files["service.key"] = self.key
        files[SETTINGS] = self._settings()
        flash_file(self.flash, self.image, files)
        efuse_file(self.efuse)

    def _settings(self):
        """qemu.json: the seed, another at each restart as the twin's
        (SimTable: seed + 1000 x restarts), so that a board booted again
        does not draw what it drew before the cut."""
        return json.dumps({"seed": self.seed + 1000 * self.restarts}).encode()

    def _flash_files(self):
        """The firmware's files as the flash image holds them now."""
        return flash_files(self.flash)

    # -- QEMU in place of the twin's process --------------------------------

    def _spawn(self):
        if not os.path.exists(self.flash):
            self._provision()
        files = self._take_while_off()
        files[SETTINGS] = self._settings()
        flash_update(self.flash, files)
        uart0 = os.path.join(self.store, "uart0")
        uart1 = os.path.join(self.store, "uart1")
        for path in (uart0, uart1):
            if os.path.lexists(path):
                os.remove(path)
        self._stop_bridge()                  # a restart: the old QEMU's console is gone
        log = open(os.path.join(self.store, "firmware.log"), "ab")
        self.proc = subprocess.Popen(
            qemu_command(self.qemu, self.flash, self.efuse, uart0, uart1, self.icount),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        log.close()
        # QEMU waits for UART0's client, then for UART1's; the chip starts then.
        console = connect(uart0, self.proc, 10.0)
        hellos = self.server.hellos if self.server is not None else 0
        self._bridge = ConsoleBridge(console, self._link_master,
                                     os.path.join(self.store, "firmware.log"),
                                     started=lambda: self.server is not None
                                     and self.server.hellos > hellos)
        return SocketPort(connect(uart1, self.proc, 10.0))

    def start(self):
        """QEMU started, and back once the firmware ticks (its link then
        answers): the ROM, the bootloader and MicroPython's start take
        QEMU a few wall seconds, where the twin starts at once."""
        if self.server is not None:            # started already: SimTable.start
            return self
        SimTable.start(self)
        self.server.hung_s = self.boot_s       # the boot is slower than the twin's
        self.server.stall_s = self.stall_s
        try:
            _wait_for(lambda: self.server.ticks > 0 or not self.alive, self.proc, self.boot_s)
            if not self.alive:
                raise RuntimeError("the firmware in QEMU stopped at boot (%s)" % self.exit_reason)
        except RuntimeError as e:
            log = self.firmware_log()
            rc = self.proc.poll() if self.proc is not None else None
            self.stop()
            ended = "" if rc is None else " QEMU ended with %s;" % _ended(rc)
            raise RuntimeError("%s;%s QEMU's console said:\n%s" % (e, ended, log[-2000:])) from None
        return self

    def stop(self):
        SimTable.stop(self)
        self._stop_bridge()

    def _stop_bridge(self):
        if self._bridge is not None:
            self._bridge.stop()
            self._bridge = None

def _ended(returncode):
    """How QEMU's process ended, for a person: 'exit 1', 'SIGSEGV'."""
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return "signal %d" % -returncode
    return "exit %d" % returncode


def _wait_for(cond, proc, seconds):
    end = time.monotonic() + seconds
    while not cond():
        if proc.poll() is not None:
            raise RuntimeError("QEMU stopped at once (exit %d): see its log" % proc.returncode)
        if time.monotonic() > end:
            raise RuntimeError("QEMU did not get there within %.0f s" % seconds)
        time.sleep(0.01)       # QEMU's start, in wall time: it is another process


def main(argv=None):
    """`make qemu`: the board's QEMU image booted on a virtual table in real
    time; its boot on the console, the table's state and runtime from the
    link, then the link's pty for `mjctl --port`, until Ctrl-C."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m host_tools.sim.qemu",
                                 description="the board's image in QEMU on a virtual table")
    ap.add_argument("--seed", type=int, default=1, help="the virtual table's seed")
    args = ap.parse_args(argv)
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        table = QemuTable(seed=args.seed, realtime=True)
        table.start()                  # stops the table itself when the boot fails
    except (MissingBuild, espkit.Missing, RuntimeError) as e:
        print("make qemu: %s" % e, file=sys.stderr)
        return 2
    try:
        return _serve(table, done)
    except LinkError as e:
        print("make qemu: the firmware booted but its link did not answer: %s; QEMU's"
              " console said:\n%s" % (e, table.firmware_log()[-1500:]), file=sys.stderr)
        return 1
    finally:
        table.stop()


def _serve(table, done):
    """The boot's text, the runtime and the table's state, then the link's
    pty for a person's tools until `done` (Ctrl-C)."""
    sys.stdout.write(table._bridge.boot_text.decode("utf-8", "replace"))
    with LinkClient(table.link_path) as link:
        info = link.hello(timeout=LINK_TIMEOUT_S)
        st = link.request("status", timeout=LINK_TIMEOUT_S)
    rt = info["runtime"]
    print("\nfirmware %s, build %s: MicroPython %s on the %s port (%s), %s" % (
        info["fw"], info["build"], rt["micropython"], rt["port"], rt["chip"],
        "frozen" if rt["frozen"] else "from files"))
    # gc.mem_free() on the esp32 port counts the room its heap may still
    # add (py/modgc.c, MICROPY_GC_SPLIT_HEAP_AUTO): `alloc` is the use.
    print("table: %s, lifters %s, heap %d B in use (free, with the room the heap may"
          " still add: %d B)" % (st["state"], "/".join(st["lifters"]),
                                st["heap"]["alloc"], st["heap"]["free"]))
    print("link: %s   (mjctl --port %s status; Ctrl-C stops)" % (table.link_path,
                                                                 table.link_path), flush=True)
    while not done.wait(0.2):
        if not table.alive:
            print("the table stopped: %s" % table.exit_reason, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
