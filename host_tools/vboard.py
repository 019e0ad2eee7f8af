"""A virtual board for deploy tests: a `micropython` process whose REPL is
on a pty and whose filesystem is a folder, as a board's flash would be.

    with VirtualBoard(folder) as vb:       # vb.port: a device path for mpremote
        deploy.deploy(vb.port, reset=False)

mpremote drives its raw REPL like a board's when told to `resume` (no soft
reset on connect: the unix port has none). A board's REPL is the other end
of a serial line; here a relay thread joins two pty pairs, so that the
process owns one end and mpremote opens the other by its path, as it opens
/dev/ttyACM0. `boot(...)` then runs the deployed code from the folder on the
virtual table (host_tools/vtable/launcher.py), as a board boots its flash.
"""

import os
import select
import subprocess
import threading

from host_tools.mpenv import micropython_binary, raw_pty


class VirtualBoard:
    def __init__(self, folder):
        self.folder = str(folder)
        os.makedirs(self.folder, exist_ok=True)
        self.proc = None
        self._fds = []
        self._stop = threading.Event()
        self._threads = []
        self.port = None

    def start(self):
        board_m, board_s = raw_pty()      # the process's end
        host_m, host_s = raw_pty()        # mpremote opens host_s by path
        self._fds = [board_m, board_s, host_m, host_s]
        self.port = os.ttyname(host_s)
        self.proc = subprocess.Popen([str(micropython_binary())], cwd=self.folder,
                                     stdin=board_s, stdout=board_s, stderr=board_s,
                                     start_new_session=True)
        for a, b in ((board_m, host_m), (host_m, board_m)):
            t = threading.Thread(target=self._relay, args=(a, b), daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def _relay(self, src, dst):
        while not self._stop.is_set():
            ready, _, _ = select.select([src], [], [], 0.1)
            if not ready:
                continue
            try:
                data = os.read(src, 4096)
                if not data:
                    return
                os.write(dst, data)
            except OSError:
                return

    def stop(self):
        self._stop.set()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)
        for t in self._threads:
            t.join(timeout=2)
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
