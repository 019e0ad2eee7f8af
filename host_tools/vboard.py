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


# -- a newcomer's bench: python -m host_tools.vboard ---------------------------

def serve(folder, seed=1, deploy_key=None, faults=(), wait=input, out=print):
    """The virtual board's REPL for `make deploy`, then (after `wait()`)
    the deployed flash powered on the virtual table in real time, its link
    printed, served until interrupted (docs/deploy.md, Try it without a
    board). deploy_key: deploy here first with that key file (no prompt);
    faults: the virtual table's injected faults (`mjctl --fault`'s names)."""
    import json
    import signal
    from host_tools.vtable.launcher import SimTable
    with VirtualBoard(folder) as vb:
        if deploy_key is None:
            out("virtual board: REPL on %s, flash in %s" % (vb.port, vb.folder))
            out("deploy to it:  make deploy PORT=%s KEY=keys/vboard.key" % vb.port)
            wait("then press Enter here to power it on the virtual table ")
        else:
            import tempfile
            from pathlib import Path
            from host_tools import deploy
            deploy.deploy(vb.port, key_path=deploy_key, reset=False, log=lambda *a: None,
                          out=Path(tempfile.mkdtemp(prefix="vboard-stage-")))
    key_file = os.path.join(str(folder), "service.key")
    key = open(key_file, "rb").read() if os.path.exists(key_file) else None
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with SimTable(seed=seed, code_dir=folder, realtime=True, key=key, faults=faults) as sim:
        if deploy_key is None:
            out("powered on; its link: %s" % sim.link_path)
            out("  .venv/bin/mjctl --port %s --key keys/vboard.key selftest" % sim.link_path)
            out("(Ctrl-C stops)")
        else:
            out(json.dumps({"link": sim.link_path}))
        while not done.wait(0.2):
            if not sim.alive:
                return 1
    return 0


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(prog="python -m host_tools.vboard",
                                 description="a virtual ESP32 to deploy to, then run on the"
                                 " virtual table (docs/deploy.md)")
    ap.add_argument("--folder", default="build/vboard", help="its flash (default build/vboard)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deploy", metavar="KEY", help="deploy with this key file first, then"
                    " power on and print {\"link\": ...} (no prompt: scripts and tests)")
    ap.add_argument("--fault", action="append", default=[], metavar="NAME[:ARG]",
                    help="inject a fault in the virtual table (docs/faults.md)")
    args = ap.parse_args(argv)
    return serve(args.folder, args.seed, args.deploy, args.fault,
                 out=lambda s: print(s, flush=True))


if __name__ == "__main__":
    raise SystemExit(main())
