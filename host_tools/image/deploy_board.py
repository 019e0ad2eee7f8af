"""The board's side of a deploy (deploy.py, steps 2 to 4): mpremote run
with `resume` (no soft reset on connect, so it works the same on a board
and on the virtual board of host_tools/sim/vboard.py), the SHA-256 of every
file a deploy may touch listed on the board, and its folders made.
"""

import os
import subprocess
import sys
import threading

from host_tools.image.deploy_build import MANIFEST, DeployError
from host_tools.image.mpenv import DEVICE_PACKAGES

KEY = "service.key"                       # the table's key for service sessions
# Run on the board: the SHA-256 of every file a deploy may touch, one
# "HASH PATH" line each (MicroPython: hashlib, binascii, os only).
_LIST_SCRIPT = """
import os, hashlib, binascii
def _h(p):
    h = hashlib.sha256(); b = bytearray(512); mv = memoryview(b)
    with open(p, "rb") as f:
        while True:
            n = f.readinto(b)
            if not n: break
            h.update(mv[:n])
    return binascii.hexlify(h.digest()).decode()
def _walk(d):
    for e in os.ilistdir(d):
        p = d + "/" + e[0]
        if e[1] == 0x4000: _walk(p)
        else: print("F", _h(p), p)
for d in %r:
    try: _walk(d)
    except OSError: pass
for p in %r:
    try: print("F", _h(p), p)
    except OSError: pass
try:
    import machine
    print("U", binascii.hexlify(machine.unique_id()).decode())
except Exception: pass
print("END")
"""


def mpremote(port, *args, timeout=120, on_line=None):
    """mpremote's output; `on_line(line)` for each line as it comes (its
    `cp SRC :DEST` before each file it copies)."""
    exe = os.path.join(os.path.dirname(sys.executable), "mpremote")
    cmd = [exe, "connect", port, "resume"] + list(args)
    if on_line is None:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, out, err = r.returncode, r.stdout, r.stderr
    else:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                on_line(line.rstrip("\n"))
            err = proc.stderr.read()
            rc = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:        # interrupted: mpremote goes too
                proc.kill()
                proc.wait()
        out = "".join(lines)
    if rc != 0:
        raise DeployError("mpremote %s: %s" % (" ".join(args[:2]), (err or out).strip()))
    return out


def board_files(port):
    """{path: sha256} of the code, manifest, config, tags and key on the board."""
    return board_state(port)[0]


def board_state(port):
    """({path: sha256} of the code, manifest, config, tags and key on the
    board, its unique id in hex or None)."""
    script = _LIST_SCRIPT % (list(DEVICE_PACKAGES) + ["lib"],
                             ["main.py", MANIFEST, "config.json", "tags.txt", KEY])
    out = mpremote(port, "exec", script)
    if "END" not in out:
        raise DeployError("the board did not list its files:\n" + out[-500:])
    files, uid = {}, None
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "F":
            files[parts[2].lstrip("/")] = parts[1]
        elif len(parts) == 2 and parts[0] == "U":
            uid = parts[1]
    return files, uid


def make_dirs(port, dirs):
    """Make `dirs` (board paths) and their parents on the board."""
    dirs = sorted(d for d in dirs if d not in ("", "."))
    if dirs:
        mpremote(port, "exec", "import os\nfor d in %r:\n"
                 "    try:\n        os.mkdir(d)\n    except OSError:\n        pass\n"
                 % _with_parents(dirs))


def _with_parents(dirs):
    out = []
    for d in dirs:
        parts = d.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p not in out:
                out.append(p)
    return out
