"""QEMU's esp32s3 machine as the host runs it (docs/hardware.md, The
firmware in QEMU): the board's flash and eFuses as files, QEMU's command
line with its two UARTs on Unix sockets, the console's bridge to a pty,
and `QemuBoard`, the image alone at its REPL. `QemuTable`
(host_tools/sim/qemu.py) puts a virtual table on it.

The board's flash is a file of 8 MB: the image at 0x0 and, at the `vfs`
partition, a littlefs of the files given. eFuses: a 1 KB file, all zero
but the block version (byte 64 = 1), without which ESP-IDF's ADC
calibration waits forever for an ADC QEMU does not have.
"""

import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time

from firmware import frame
from host_tools.image import board_image, espkit, vfs_image
from host_tools.image.mpenv import ROOT, MissingBuild, raw_pty

IMAGE = board_image.QEMU_OUT / "firmware.bin"
FLASH_BYTES = 8 * 1024 * 1024            # the board's: partitions.csv
EFUSE_BYTES, EFUSE_BLOCK_VERSION = 1024, 64


def qemu_image():
    """The QEMU variant's image, or MissingBuild naming the command."""
    if not IMAGE.is_file():
        raise MissingBuild("no %s: run `make qemu` (or `make firmware-qemu`)"
                           % IMAGE.relative_to(ROOT))
    return IMAGE


def flash_file(path, image, files):
    """The board's flash as QEMU reads it: `image` at 0x0, a littlefs of
    `files` ({name: bytes}) at the vfs partition, the rest erased."""
    offset, size = vfs_image.partition(board_image.PARTITIONS)
    code = image.read_bytes()
    if len(code) > offset:
        raise ValueError("%s is %d KB, past the filesystem at 0x%x" % (image, len(code) // 1024,
                                                                       offset))
    fs = vfs_image.build(size, files)
    flash = bytearray(b"\xff" * FLASH_BYTES)
    flash[:len(code)] = code
    flash[offset:offset + len(fs)] = fs
    with open(path, "wb") as f:
        f.write(flash)


def flash_update(path, files):
    """Write `files` ({name: bytes, or None to remove}) into the filesystem of the flash file
    at `path`, the firmware's own files kept (QEMU not running)."""
    offset, size = vfs_image.partition(board_image.PARTITIONS)
    with open(path, "r+b") as f:
        f.seek(offset)
        fs = vfs_image.update(f.read(size), files)
        f.seek(offset)
        f.write(fs)


def flash_files(path):
    """{name: bytes} of the files in the filesystem of the flash file at
    `path` (QEMU writes the flash file as the firmware writes its flash)."""
    offset, size = vfs_image.partition(board_image.PARTITIONS)
    with open(path, "rb") as f:
        f.seek(offset)
        return vfs_image.files(f.read(size))


def efuse_file(path):
    data = bytearray(EFUSE_BYTES)
    data[EFUSE_BLOCK_VERSION] = 1
    with open(path, "wb") as f:
        f.write(data)


def qemu_command(qemu, flash, efuse, uart0, uart1, icount=False):
    """QEMU's command line: the esp32s3 machine with that flash and eFuse
    file, UART0 and UART1 on Unix sockets at `uart0`, `uart1`, each
    waited on (wait=on) before the chip starts: a pty nobody holds yet
    loses what QEMU writes to it, a socket makes QEMU wait. `icount`: one
    instruction a virtual nanosecond, idle time skipped (sleep=off), so
    that the guest's clock counts the instructions it runs; a boot then
    takes about 32 s (docs/performance.md, The esp32 port's CPU).

    QEMU runs in a session of its own (Ctrl-C on the host's terminal is
    the host's to handle) and so outlives a host killed without its
    cleanup (kill -9, a runner's timeout), spinning a core for good. Where
    util-linux's setpriv is, it starts QEMU with the parent-death signal
    set: the kernel kills QEMU when the host thread that started it ends.
    QemuTable starts QEMU from the thread of start() and restarts it from
    its bus thread, which lives as long as the table."""
    share = os.path.join(os.path.dirname(os.path.dirname(str(qemu))), "share", "qemu")
    cmd = [str(qemu), "-L", share, "-nographic", "-machine", "esp32s3",
           "-drive", "file=%s,if=mtd,format=raw" % flash,
           "-drive", "file=%s,if=none,format=raw,id=efuse" % efuse,
           "-global", "driver=nvram.esp32s3.efuse,property=drive,value=efuse",
           "-chardev", "socket,id=uart0,path=%s,server=on,wait=on" % uart0,
           "-serial", "chardev:uart0",
           "-chardev", "socket,id=uart1,path=%s,server=on,wait=on" % uart1,
           "-serial", "chardev:uart1", "-monitor", "none"]
    if icount:
        cmd += ["-icount", "shift=0,sleep=off"]
    setpriv = shutil.which("setpriv")
    return cmd if setpriv is None else [setpriv, "--pdeathsig", "KILL", "--"] + cmd


class SocketPort:
    """A connected Unix socket as the bus server takes a port: `fd` read
    and written directly (host_tools/sim/bus.py), `timeout`, `close()`."""

    posix_fd = True

    def __init__(self, sock):
        self.sock = sock
        self.fd = sock.fileno()
        self.timeout = None

    def close(self):
        self.sock.close()


def connect(path, proc, seconds):
    """A client of QEMU's socket at `path`, once QEMU has made it."""
    end = time.monotonic() + seconds
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            sock.setblocking(False)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
        if proc.poll() is not None:
            raise RuntimeError("QEMU stopped at once (exit %d)" % proc.returncode)
        if time.monotonic() > end:
            raise RuntimeError("QEMU made no socket %s within %.0f s" % (path, seconds))
        time.sleep(0.01)       # QEMU's start, in wall time: it is another process


class QemuBoard:
    """The board's QEMU image with no virtual table: the flash without
    qemu.json, so the image stops at MicroPython's REPL on UART0, which a
    bridge joins to a pty (`port`) for mpremote, as a board's USB port.
    UART1 is held open and left silent. A context manager."""

    def __init__(self, files, vendor=None, icount=False):
        """`files`: the flash's files ({name: bytes}; "a/b" in a folder);
        `icount`: as qemu_command's."""
        self.store = tempfile.mkdtemp(prefix="qemu-board-")
        self.flash = os.path.join(self.store, "flash.bin")
        self.efuse = os.path.join(self.store, "efuse.bin")
        self.log_path = os.path.join(self.store, "qemu.log")
        flash_file(self.flash, qemu_image(), files)
        efuse_file(self.efuse)
        self.qemu = espkit.qemu_binary(vendor)
        self._master, slave = raw_pty()
        self.port = os.ttyname(slave)
        self._slave = slave
        self.icount = icount
        self.boot_s = 180.0 if icount else 60.0
        self.proc = self._bridge = self._uart1 = None

    def __enter__(self):
        uart0, uart1 = os.path.join(self.store, "uart0"), os.path.join(self.store, "uart1")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(qemu_command(self.qemu, self.flash, self.efuse, uart0,
                                                      uart1, self.icount),
                                         stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        self._bridge = ConsoleBridge(connect(uart0, self.proc, 10.0), self._master,
                                     self.log_path)
        self._uart1 = connect(uart1, self.proc, 10.0)
        try:
            self._wait_for_prompt()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait_for_prompt(self):
        """Back once MicroPython's REPL has printed its prompt: what comes
        before, during the ROM and the bootloader, is lost (the port resets
        the UART's FIFO at its start), so mpremote's Ctrl-C and Ctrl-A must
        come after it. A second under QEMU's multi-threaded TCG, about 32 s
        under -icount."""
        end = time.monotonic() + self.boot_s
        while ">>> " not in self.log():
            if self.proc.poll() is not None:
                raise RuntimeError("QEMU ended at boot (exit %d): %s"
                                   % (self.proc.returncode, self.log()[-1500:]))
            if time.monotonic() > end:
                raise RuntimeError("no REPL prompt from QEMU within %.0f s: %s"
                                   % (self.boot_s, self.log()[-1500:]))
            time.sleep(0.05)       # QEMU's boot, in wall time: it is another process

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)
        if self._bridge is not None:
            self._bridge.stop()
        if self._uart1 is not None:
            self._uart1.close()
        for fd in (self._master, self._slave):
            os.close(fd)
        shutil.rmtree(self.store, ignore_errors=True)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")


class ConsoleBridge:
    """UART0's socket joined to the table's link pty, both ways, in a thread.
    Every byte goes on to the link as it came. What UART0 says outside the
    link's frames is text for the log: the boot's (the ROM, the bootloader;
    `boot_text` keeps what came before the first frame) and whatever the
    firmware prints later, the GC's figures of a HEAP report among them
    (host_tools/sim/heaplog.py reads them from the log, as the twin's)."""

    SYNC = b"\xa5\x5a"

    def __init__(self, sock, link, log_path, started=None):
        """`started`: None, or a callable saying whether the firmware has
        started; until it has, what the host writes is dropped. A byte on
        UART0 while ESP-IDF starts makes QEMU raise its interrupt into the
        task watchdog's handler before that exists: a crash, the reset, the
        crash again (measured: a hello sent through the boot after a power
        cut gave 64 panics and no boot). A board's USB port is not there
        until MicroPython runs: a host's bytes do not reach it either."""
        self.sock = sock
        self.console = sock.fileno()
        self.link = link
        self.log_path = log_path
        self.started = started
        self.dropped = 0               # the host's bytes before the firmware started
        self.boot_text = bytearray()
        self._framed = False           # a frame has been seen: the boot's text is over
        self._pending = b""            # bytes not yet known to be text or frame
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="qemu-console", daemon=True)
        self._thread.start()

    def _run(self):
        fds = (self.console, self.link)
        while not self._stop.is_set():
            try:
                ready = select.select(fds, (), (), 0.05)[0]
                for fd in ready:
                    data = os.read(fd, 4096)
                    if not data:
                        return
                    if fd == self.console:
                        _write_all(self.link, data)
                        self._text(self.split(data))
                    elif self.started is None or self.started():
                        _write_all(self.console, data)
                    else:
                        self.dropped += len(data)
            except OSError:
                return

    def split(self, data):
        """The text in `data` outside the link's frames (sync, kind, seq,
        length u16 LE, payload, CRC: firmware/frame.py); a frame's bytes are
        skipped, a byte that starts no frame is text."""
        buf, text = self._pending + data, bytearray()
        while buf:
            at = buf.find(self.SYNC)
            if at < 0:                 # a last A5 may begin a frame: keep it
                keep = 1 if buf.endswith(self.SYNC[:1]) else 0
                text += buf[:len(buf) - keep]
                buf = buf[len(buf) - keep:]
                break
            text += buf[:at]
            buf = buf[at:]
            if len(buf) < frame.HEADER:
                break
            length = buf[4] | (buf[5] << 8)
            if length > frame.MAX_PAYLOAD:      # no frame: its first byte is text
                text += buf[:1]
                buf = buf[1:]
                continue
            if len(buf) < frame.OVERHEAD + length:
                break
            self._framed = True
            buf = buf[frame.OVERHEAD + length:]
        self._pending = bytes(buf)
        return bytes(text)

    def _text(self, text):
        if not text:
            return
        if not self._framed:
            self.boot_text += text
        with open(self.log_path, "ab") as f:
            f.write(text)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


def _write_all(fd, data):
    while data:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            select.select((), (fd,), (), 0.05)
