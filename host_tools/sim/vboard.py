"""A virtual board for deploy tests: a `micropython` process whose REPL is
on a pty and whose filesystem is a folder, as a board's flash would be.

    with VirtualBoard(folder) as vb:       # vb.port: a device path for mpremote
        deploy.deploy(vb.port, reset=False)

A board's REPL is the other end of a serial line; here a relay thread joins
two pty pairs, so that the process owns one end and mpremote opens the
other by its path, as it opens /dev/ttyACM0. The relay also gives the
process what the unix port lacks and mpremote expects of a board:

* a soft reset (Ctrl-D at an empty raw or friendly REPL, as mpremote sends
  when it connects): the unix port exits there, so the relay starts
  MicroPython again from the folder, says `MPY: soft reboot` and, when the
  REPL was raw, enters the raw REPL again, as a board does;
* `machine.unique_id()` (6 bytes, from the folder's absolute path: another
  folder, another board) and `machine.reset()` (a hard reset: MicroPython
  starts again in the friendly REPL), which `mpremote reset` calls.

`boot(...)` then runs the deployed code from the folder on the virtual table
(host_tools/sim/launcher.py), as a board boots its flash.
"""

import hashlib
import os
import select
import subprocess
import sys
import threading
import time

from host_tools.image.mpenv import micropython_binary, raw_pty

HARD_RESET = 99          # the exit status of the process's machine.reset()
# Run before the REPL: the unix port has no machine module, so the board's
# calls that mpremote and the deploy make are given here (sys.modules is
# looked up before the filesystem: nothing is added to the flash).
_STARTUP = """
import sys
class _machine:
    @staticmethod
    def unique_id():
        return %r
    @staticmethod
    def reset():
        sys.exit(%d)
sys.modules["machine"] = _machine
del _machine
"""


def board_uid(folder):
    """The virtual board's unique id (6 bytes, like an ESP32's): a digest
    of its flash folder's absolute path."""
    return hashlib.sha256(os.path.abspath(str(folder)).encode()).digest()[:6]


def _mode(raw, data):
    """The REPL mode after `data`: its last Ctrl-A (raw) or Ctrl-B
    (friendly), else `raw` as it was."""
    a, b = data.rfind(b"\x01"), data.rfind(b"\x02")
    return raw if a == b else a > b


class VirtualBoard:
    def __init__(self, folder):
        # Absolute: the process runs inside the folder, and a relative path
        # given from the project root would name another folder there.
        self.folder = os.path.abspath(str(folder))
        os.makedirs(self.folder, exist_ok=True)
        self.uid = board_uid(self.folder)
        self.proc = None
        self.resets = 0                  # MicroPython started again (soft or hard)
        self._fds = []
        self._stop = threading.Event()
        self._threads = []
        self._lock = threading.Lock()
        self._raw = False                # the host's last Ctrl-A (raw) or Ctrl-B (friendly)
        self._raw_at_exec = False        # ... when it last sent Ctrl-D
        self._after_exec = b""           # what it sent since
        self.port = None

    def start(self):
        board_m, board_s = raw_pty()      # the process's end
        host_m, host_s = raw_pty()        # mpremote opens host_s by path
        self._fds = [board_m, board_s, host_m, host_s]
        self._board_s = board_s
        self.port = os.ttyname(host_s)
        self._spawn()
        for target, a, b in ((self._from_board, board_m, host_m),
                             (self._from_host, host_m, board_m)):
            t = threading.Thread(target=target, args=(a, b), daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def _spawn(self):
        code = _STARTUP % (self.uid, HARD_RESET)
        self.proc = subprocess.Popen([str(micropython_binary()), "-i", "-c", code],
                                     cwd=self.folder, stdin=self._board_s,
                                     stdout=self._board_s, stderr=self._board_s,
                                     start_new_session=True)

    def _from_host(self, src, dst):
        while not self._stop.is_set():
            ready, _, _ = select.select([src], [], [], 0.1)
            if not ready:
                continue
            try:
                data = os.read(src, 4096)
                if not data:
                    return
                with self._lock:          # not while MicroPython starts again
                    self._note(data)
                    os.write(dst, data)
            except OSError:
                return

    def _note(self, data):
        """Follow what the host sends: the REPL mode (mpremote's code is
        text: a raw 0x01 or 0x02 byte is always the key) and the bytes after
        its last Ctrl-D (the code run or the soft reset). Those the process
        had not read when it exited are lost with it (a new process
        flushes its terminal's input), so a restart gives them again."""
        i = data.rfind(b"\x04")
        if i >= 0:
            self._raw_at_exec = _mode(self._raw, data[:i])
            self._after_exec = data[i + 1:]
        else:
            self._after_exec = (self._after_exec + data)[-4096:]
        self._raw = _mode(self._raw, data)

    def _from_board(self, src, dst):
        while not self._stop.is_set():
            ready, _, _ = select.select([src], [], [], 0.1)
            if not ready:
                if self.proc.poll() is not None and not self._stop.is_set():
                    try:
                        self._restart(src, dst)
                    except OSError:
                        return
                continue
            try:
                data = os.read(src, 4096)
                if not data:
                    return
                os.write(dst, data)
            except OSError:
                return

    def _restart(self, src, dst):
        """MicroPython exited (everything it wrote has been relayed): start
        it again from the folder, as a board restarts from its flash."""
        with self._lock:
            hard = self.proc.returncode == HARD_RESET
            # A soft reset keeps the REPL's mode; a board boots into the
            # friendly REPL.
            raw = False if hard else self._raw_at_exec
            self.resets += 1
            self._spawn()
            if not hard:
                os.write(dst, b"MPY: soft reboot\r\n")
            # Its banner up to the first prompt: a board in the raw REPL
            # shows none of it, only the raw REPL's own line.
            seen, deadline = b"", time.monotonic() + 10
            while not seen.endswith(b">>> ") and time.monotonic() < deadline \
                    and not self._stop.is_set():
                ready, _, _ = select.select([src], [], [], 0.1)
                if ready:
                    seen += os.read(src, 4096)
            if not raw:
                os.write(dst, seen)
            again = (b"\x01" if raw else b"") + self._after_exec
            self._raw = _mode(raw, again)
            self._raw_at_exec, self._after_exec = self._raw, b""
            if again:
                os.write(src, again)

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def path(self, rel):
        return os.path.join(self.folder, rel)


# -- a newcomer's bench: python -m host_tools.sim.vboard ---------------------------

def serve(folder, seed=1, deploy_key=None, faults=(), wait=input, out=print):
    """The virtual board's REPL for `make deploy`, then (after `wait()`)
    the deployed flash powered on the virtual table in real time, its link
    printed, served until interrupted (docs/deploy.md, Try it without a
    board). deploy_key: deploy here first with that key file (no prompt);
    faults: the virtual table's injected faults (`mjctl --fault`'s names)."""
    import json
    import signal
    from host_tools.image import tablekey
    from host_tools.texts import t
    from host_tools.sim.launcher import SimTable
    with VirtualBoard(folder) as vb:
        folder = vb.folder
        uid = vb.uid.hex()
        if deploy_key is None:
            out(t("vboard.repl", port=vb.port, folder=_shown(folder), uid=uid))
            out(t("vboard.deploy", port=vb.port))
            wait(t("vboard.wait"))
        else:
            import tempfile
            from pathlib import Path
            from host_tools.image import deploy
            deploy.deploy(vb.port, key_path=deploy_key, reset=False, log=lambda *a: None,
                          out=Path(tempfile.mkdtemp(prefix="vboard-stage-")))
    key_file = os.path.join(folder, "service.key")
    key = open(key_file, "rb").read() if os.path.exists(key_file) else None
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with SimTable(seed=seed, code_dir=folder, realtime=True, key=key, faults=faults) as sim:
        if deploy_key is None:
            out(t("vboard.on", link=sim.link_path))
            out(t("vboard.try", link=sim.link_path, keyfile=tablekey.default_path(uid))
                if key else t("vboard.no_key"))
            out(t("vboard.stop"))
        else:
            out(json.dumps({"link": sim.link_path}))
        while not done.wait(0.2):
            if not sim.alive:
                out(t("vboard.stopped", why=sim.exit_reason))
                return 1
    return 0


def _shown(path):
    """A path as the user gave it when it lies under the current folder."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(prog="python -m host_tools.sim.vboard",
                                 description="a virtual ESP32 to deploy to, then run on the"
                                 " virtual table (docs/deploy.md)")
    ap.add_argument("--folder", default="build/vboard", help="its flash (default build/vboard)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deploy", metavar="KEY", help="deploy with this key file first, then"
                    " power on and print {\"link\": ...} (no prompt: scripts and tests)")
    ap.add_argument("--fault", action="append", default=[], metavar="NAME[:ARG]",
                    help="inject a fault in the virtual table (docs/faults.md)")
    args = ap.parse_args(argv)
    import signal
    from host_tools.texts import t

    def stop(*_):
        raise KeyboardInterrupt

    # A kill stops it as Ctrl-C does: its MicroPython, in a session of its
    # own, would otherwise go on spinning on a pty nobody reads.
    signal.signal(signal.SIGTERM, stop)
    try:
        return serve(args.folder, args.seed, args.deploy, args.fault,
                     out=lambda s: print(s, flush=True))
    except (KeyboardInterrupt, EOFError):     # Ctrl-C or Ctrl-D at its prompt
        print("vboard: %s" % t("vboard.interrupted"), file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
