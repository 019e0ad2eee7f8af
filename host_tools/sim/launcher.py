"""Starts the real firmware under MicroPython on the virtual table, and
keeps it running across power cuts and watchdog resets.

The firmware runs as it ships by default: frozen into the twin (the unix
port built 32-bit, `make image`), from the folder that stands for the
board's flash. The development forms run it on the unfrozen 32-bit build:
`form="mpy"` the .mpy files of `make mpy`, `form="source"` the .py files,
`code_dir` a virtual board's deployed .mpy files (host_tools/sim/vboard.py).
`production=True` boots the twin as a production image boots
(firmware/entry.py): a reset (SimHal.reset) starts the firmware again.

The store, a folder that stands for the board's flash, holds the table's
secrets as files: the service key (`service.key`) and the tag table
(`tags.txt`), which the firmware reads through the HAL (hal.secret).

Two ptys per table: the sim bus (firmware <-> BusServer) and the link
(firmware <-> any host client). The firmware holds each pty's master end (an
inherited fd); the host opens the slave paths with pyserial, as it would
open a board's USB serial port. The link pty outlives firmware restarts, so
a client stays attached the way it would to a board's USB-serial adapter.
"""

import os
import shutil
import subprocess
import tempfile
import threading

import serial

from firmware import persist
from host_tools.image.mpenv import (RESET_EXIT, ROOT, TWIN_BOOT, TWIN_BOOT_PRODUCTION, code_root,
                                   micropython_binary, raw_pty, twin_binary)
from host_tools.sim.bus import BusServer
from host_tools.sim.table import VirtualTable
from host_tools.texts import t

CONFIG = ROOT / "firmware" / "config.json"
TAGS = ROOT / "firmware" / "tags.txt"


class SimTable:
    """One virtual table with its firmware. Use as a context manager."""

    power_off_ms = 500         # how long the power stays off after a cut
    bus_timeout_s = 0.02

    def __init__(self, seed=0, faults=(), heap=None, realtime=False,
                 config_path=None, ruleset=None, form="image", speed=1.0, code_dir=None,
                 key=True, production=False):
        """realtime: virtual time follows the wall clock, `speed` times as
        fast (BusServer); otherwise it runs as fast as the two processes talk.
        code_dir: a deployed board's folder (host_tools/sim/vboard.py): the
        firmware runs from its .mpy files with its own config.json and
        tags.txt, as a board boots from its flash (the tags a copy in the
        store, where the secrets are: what rfid_learn writes goes with the
        store, as the counters do).
        key: the table's service key in its flash (`service.key`, as make
        deploy provisions it): True for random bytes, or bytes, or None
        for a table without one; kept in `self.key`."""
        if form not in ("image", "mpy", "source"):
            raise ValueError("form must be image, mpy or source, not %r" % (form,))
        if production and (form != "image" or code_dir is not None):
            raise ValueError("production is a frozen image's boot: form='image', no code_dir")
        if not speed > 0:
            raise ValueError("speed must be > 0, not %r" % (speed,))
        self.config_path = str(config_path or CONFIG)
        self.table = VirtualTable(seed, config_path=self.config_path, ruleset=ruleset,
                                  faults=tuple(faults))
        self.seed = seed
        self.heap = heap
        self.realtime = realtime
        self.speed = speed
        self.form = form
        self.production = production
        self.code_dir = code_dir
        self.tags_path = str(TAGS)
        self.store = tempfile.mkdtemp(prefix="vtable-")
        self._firmware(form, code_dir)
        self.key = os.urandom(32) if key is True else key
        if self.key is not None:
            with open(os.path.join(self.store, "service.key"), "wb") as f:
                f.write(self.key)
        self.restarts = 0
        self.resets = 0              # of those, the firmware's own (SimHal.reset)
        self._cut_now = False       # power_cut_now(): the bus closing is the cut
        self._while_off = {}        # change_while_off(): for the next boot's flash
        self.exit_reason = None
        self.proc = None
        self.server = None
        self._stop = threading.Event()
        self._thread = None
        self._link_master, self._link_slave = raw_pty()
        self.link_path = os.ttyname(self._link_slave)

    def _firmware(self, form, code_dir):
        """What runs the firmware: `binary`, the folder it runs in (`cwd`)
        and what `code` it runs, in words."""
        if code_dir is not None:       # a deployed board's flash
            self.binary = micropython_binary()
            self.cwd = code_dir
            self.code = t("code.deployed", name=os.path.basename(str(code_dir)))
            self.config_path = os.path.join(str(code_dir), "config.json")
            self.tags_path = os.path.join(str(code_dir), "tags.txt")
        elif form == "image":          # as on a board: frozen, run from its flash
            self.binary = twin_binary()
            self.cwd, self.code = self.store, t("code.frozen")
        else:                          # a development form
            self.binary = micropython_binary()
            self.cwd, self.code = code_root(form == "source")

    # -- lifecycle -----------------------------------------------------------

    def start(self):
        if self.server is not None:
            # Started already (`with SimTable(...).start() as t:`): one board
            # runs one firmware; a second process would outlive stop().
            return self
        # The board's flash holds its own config.json and tags.txt, which
        # config_set and rfid_learn rewrite: copies in the store, made once
        # (they outlive the firmware's restarts), never the project's files.
        # A deployed board keeps its config in its own folder; its tag
        # table is a secret, in the store with the key.
        copies = [("tags.txt", self.tags_path)]
        if self.code_dir is None:
            copies.append(("config.json", self.config_path))
        for name, src in copies:
            if os.path.exists(src):
                shutil.copyfile(src, os.path.join(self.store, name))
        bus = self._spawn()
        self.server = BusServer(bus, self.table, realtime=self.realtime,
                                speed=self.speed)
        self._thread = threading.Thread(target=self._serve, name="vtable-bus", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._kill()
        for fd in (self._link_master, self._link_slave):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.store, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def alive(self):
        return self._thread is not None and self._thread.is_alive()

    def firmware_log(self):
        """What the firmware printed (tracebacks, if it crashed)."""
        try:
            # The console's text: a byte cut by a reset is shown, not fatal.
            with open(os.path.join(self.store, "firmware.log"), encoding="utf-8",
                      errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stored_files(self):
        """The firmware's files as its flash holds them now, {name: bytes},
        with what change_while_off() has changed for the next boot."""
        out = self._flash_files()
        for name, data in self._while_off.items():
            if data is None:
                out.pop(name, None)
            else:
                out[name] = data
        return out

    def _flash_files(self):
        """The twin's flash is the store's folder (its log is the launcher's)."""
        out = {}
        for name in os.listdir(self.store):
            path = os.path.join(self.store, name)
            if name != "firmware.log" and os.path.isfile(path):
                with open(path, "rb") as f:
                    out[name] = f.read()
        return out

    def change_while_off(self, files):
        """Files of the board's flash changed while its power is off, as a
        flash reader would ({name: bytes, or None to remove}): call it from
        a power cut's while-off hook; the firmware finds them at its next
        boot. They are written as it boots, not now: QEMU holds its flash
        in memory while it runs, and the twin's process is still there
        until the cut ends it."""
        self._while_off.update(files)

    def _take_while_off(self):
        files, self._while_off = self._while_off, {}
        return files

    def stored(self, name):
        """The firmware's file `name` as its flash holds it now, or None."""
        return self.stored_files().get(name)

    def stored_copy(self, name, folder):
        """A copy of that file in `folder`, for a reader that takes a path
        (firmware/persist.py, firmware/sealed.py): its path, or None."""
        data = self.stored(name)
        if data is None:
            return None
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def saved(self, name):
        """What the firmware last saved to `name` with firmware/persist.py
        (its counters), read by persist's own load: None if nothing,
        ValueError if damaged."""
        with tempfile.TemporaryDirectory() as folder:
            path = self.stored_copy(name, folder)
            return None if path is None else persist.load(path)

    # -- the firmware process ------------------------------------------------

    def _spawn(self):
        for name, data in self._take_while_off().items():
            path = os.path.join(self.store, name)
            if data is None:
                if os.path.exists(path):
                    os.remove(path)
            else:
                with open(path, "wb") as f:
                    f.write(data)
        bus_master, bus_slave = raw_pty()
        flash = self.code_dir if self.code_dir is not None else self.store
        args = [str(bus_master), str(self._link_master), os.path.join(str(flash), "config.json"),
                "tags.txt", self.store, str(self.seed + 1000 * self.restarts)]
        cmd = [str(self.binary)]
        if self.heap:
            cmd += ["-X", "heapsize=%d" % self.heap]
        if self.form == "image" and self.code_dir is None:
            cmd += ["-c", TWIN_BOOT_PRODUCTION if self.production else TWIN_BOOT] + args
        else:
            cmd += ["-m", "firmware.sim_main"] + args
        # The host's end is open before the firmware starts: pyserial
        # flushes what is waiting when it opens a port, and the frozen
        # firmware sends its first bus frame within milliseconds.
        port = serial.Serial(os.ttyname(bus_slave), timeout=self.bus_timeout_s)
        os.close(bus_slave)                # pyserial opened the path itself
        log = open(os.path.join(self.store, "firmware.log"), "ab")
        # Its own session: a Ctrl-C on the terminal goes to the host, which
        # stops the firmware itself (stop()); an orphan ends when the bus closes.
        self.proc = subprocess.Popen(cmd, cwd=str(self.cwd), stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     pass_fds=(bus_master, self._link_master),
                                     start_new_session=True)
        log.close()
        os.close(bus_master)               # the firmware has its own copy
        return port

    def _reset_exit(self):
        """The firmware process ended by resetting the board (SimHal.reset)."""
        proc = self.proc
        try:
            return proc is not None and proc.wait(timeout=5) == RESET_EXIT
        except subprocess.TimeoutExpired:
            return False

    def _kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)
        if self.server is not None:
            try:
                self.server.serial.close()
            except (OSError, serial.SerialException):
                pass

    def power_cut_now(self):
        """Cut the power at this wall-clock instant, wherever the firmware
        is (in the middle of a save, say): its process is killed now, from
        the caller's thread; the bus thread then finds the bus closed, cuts
        the virtual table's power at its current time and boots the
        firmware again, as after a power_cut."""
        self._cut_now = True
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def _serve(self):
        while not self._stop.is_set():
            try:
                reason = self.server.serve(stop=self._stop.is_set)
            except (serial.SerialException, OSError):
                if not self._cut_now and not self._reset_exit():
                    raise
                reason = "eof"             # gone while the table wrote to it
            if reason == "eof" and not self._cut_now and self._reset_exit():
                reason = "reset"
            if reason == "eof" and self._cut_now and not self._stop.is_set():
                self._cut_now = False
                self.server.booted = False     # what the dead firmware sent is ignored
                self.table.power_cut()
                reason = "power_cut"
            if reason == "reset" and not self._stop.is_set():
                # The firmware reset the board (SimHal.reset): it boots again
                # at once, as a board does; the table's power stayed on.
                self.resets += 1
                self.restarts += 1
                self.server.booted = False
                self.server.attach(self._spawn())
                continue
            if reason in ("power_cut", "watchdog") and not self._stop.is_set():
                # The board lost power (or its watchdog bit): the process dies,
                # time goes on without it, then it boots again.
                self._kill()
                self.table.advance_to(self.table.now + self.power_off_ms)
                self.restarts += 1
                self.server.attach(self._spawn())
                continue
            self.exit_reason = reason
            return
