"""Many clients, one table: a small background process that owns a
controller's serial port and serves local clients (docs/technician.md,
Several windows on one table).

    url = linkmux.shared("/dev/ttyACM0")    # "socket://127.0.0.1:PORT"
    with LinkClient(url) as link: ...         # as with the port itself

A serial port has one reader: two programs that open it both read from it
and each loses the bytes the other took (`mjctl live` in one terminal and
`mjctl status` in another: one of them times out). `shared(port)` starts
the sharer of that port on first use and finds it again afterwards: it
holds the port (exclusively), forwards every event the controller sends to
every client, and sends each request on with a sequence number of its own,
so that the answer goes back to the client that asked, under that client's
number (docs/protocol.md, Sequence numbers). A client's retry (the same
number and payload) goes out under the same number as the first try, so
the controller still recognises it and does not act twice. The sharer
exits IDLE_S after its last client leaves, or when the port goes away.

pyserial speaks to it as `socket://` (a TCP socket on 127.0.0.1, which
pyserial opens like a port); what pyserial does not do, routing frames
between several clients, is done by the sharer (sharer.py, run as
`python -m host_tools.link.mux`), with the firmware's own framing
(firmware/frame.py). This module is the clients' side: it finds, starts,
probes and stops the sharer.

Where it is found: a small JSON file per port in a folder of the user's
own (XDG_RUNTIME_DIR, else the temporary folder), naming its pid and TCP
port. A sharer that does not answer its probe (a `?` byte, answered with
`MJMUX {...}` and a newline) is stale: a new one is started in its place.
`release(port)` (a `!` byte) stops it: the deploy and the flash call it,
since mpremote and esptool need the port to themselves.
A device path that does not exist, anything that is not a character
device, and pyserial URLs are used directly, unshared; so is every port
when MJCTL_SHARE=0.
"""

import fcntl
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time

import serial

from host_tools.link.sharer import IDLE_S, MAGIC, VERSION, Mux, main, read_json, serve
from host_tools.texts import t

__all__ = ["IDLE_S", "VERSION", "Mux", "main", "probe", "release", "running", "serve", "shared"]

START_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 1.0


# -- the client's side: find or start the sharer ---------------------------------

def _files(port):
    """(device, state file, lock file) of `port`'s sharer: one per device,
    named by its real path."""
    device = os.path.realpath(port)
    base = os.path.join(_state_dir(), "mux-%s" % hashlib.sha256(device.encode()).hexdigest()[:16])
    return device, base + ".json", base + ".lock"


def _answering(state_file, device):
    """The port of the sharer the state file names, if it answers for `device`."""
    state = read_json(state_file)
    if state and state.get("device") == device and probe(state.get("port"), device):
        return state["port"]
    return None


def shared(port, baudrate=115200):
    """The URL to open for `port`: the port's sharer (started when none
    answers), or `port` itself when it is not a serial device to share.
    Raises serial.SerialException with one line when the port cannot be
    opened by the sharer (busy, no permission)."""
    if os.environ.get("MJCTL_SHARE", "1") == "0" or not _is_device(port):
        return port
    device, state_file, lock_file = _files(port)
    with open(lock_file, "w") as lock:
        # One sharer per port, even when two commands start at once.
        fcntl.flock(lock, fcntl.LOCK_EX)
        tcp = _answering(state_file, device) or _start(port, device, state_file, baudrate)
    return "socket://127.0.0.1:%d" % tcp


def running(port):
    """The URL of the sharer that already serves `port`, or None (none
    runs, or `port` is not a device to share). Starts nothing: for a look
    at a port (`mjctl ports`) that must not take it."""
    if os.environ.get("MJCTL_SHARE", "1") == "0" or not _is_device(port):
        return None
    device, state_file, _ = _files(port)
    tcp = _answering(state_file, device)
    return None if tcp is None else "socket://127.0.0.1:%d" % tcp


def release(port):
    """Stop the sharer of `port`, if one runs: mpremote and esptool need
    the port to themselves (a sharer would read their answers). True
    when one was stopped."""
    if not _is_device(port):
        return False
    device, state_file, lock_file = _files(port)
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        tcp = _answering(state_file, device)
        if tcp is None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", tcp), timeout=PROBE_TIMEOUT_S) as s:
                s.sendall(b"!")
                s.settimeout(START_TIMEOUT_S)
                while s.recv(4096):       # it closes the connection as it leaves
                    pass
        except OSError:
            pass
        return True


def _is_device(port):
    try:
        return stat.S_ISCHR(os.stat(port).st_mode)
    except (OSError, ValueError):          # no such path, or a URL
        return False


def _state_dir():
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    folder = os.path.join(base, "mjctl-%d" % os.getuid())
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder



def probe(tcp, device=None, timeout=PROBE_TIMEOUT_S):
    """The sharer's own description ({"mux", "pid", "device", "clients"})
    when one answers on `tcp` (for `device`, if given), else None."""
    if not isinstance(tcp, int):
        return None
    try:
        with socket.create_connection(("127.0.0.1", tcp), timeout=timeout) as s:
            s.sendall(b"?")
            data, deadline = b"", time.monotonic() + timeout
            while time.monotonic() < deadline:
                i = data.find(MAGIC)
                if i >= 0 and data.find(b"\n", i) >= 0:
                    info = json.loads(data[i + len(MAGIC):data.index(b"\n", i)])
                    if info.get("mux") != VERSION or (device and info.get("device") != device):
                        return None
                    return info
                s.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = s.recv(4096)
                if not chunk:
                    return None
                data += chunk          # events sent before the answer come first
    except (OSError, ValueError):
        pass
    return None


def _start(port, device, state_file, baudrate):
    """Start the sharer of `device`; its TCP port once it serves."""
    import select
    cmd = [sys.executable, "-m", "host_tools.link.mux", "--device", device, "--state", state_file,
           "--baudrate", str(baudrate)]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    line, deadline = b"", time.monotonic() + START_TIMEOUT_S
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
            p.kill()
            raise serial.SerialException(t("mux.cannot_start", port=port, why="timeout"))
        chunk = os.read(p.stdout.fileno(), 4096)
        if not chunk:
            break
        line += chunk
    p.stdout.close()
    try:
        ready = json.loads(line)
    except ValueError:
        raise serial.SerialException(t("mux.cannot_start", port=port,
                                       why="exit %s" % p.wait(timeout=5))) from None
    if not ready.get("ok"):
        raise serial.SerialException(ready.get("errno"), ready["error"])
    return ready["port"]


if __name__ == "__main__":
    sys.exit(main())
