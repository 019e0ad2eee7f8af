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
between several clients, is done here, with the firmware's own framing
(firmware/frame.py).

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

import errno
import fcntl
import hashlib
import json
import os
import selectors
import socket
import stat
import subprocess
import sys
import tempfile
import time

import serial

from firmware import frame
from host_tools.link import codec as link_codec
from host_tools.texts import t

VERSION = 1
IDLE_S = 30.0          # after the last client leaves: a technician's next command is quicker
RETRY_WINDOW_S = 6.0   # a request's number is kept this long after its answer (the controller's 5 s)
START_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 1.0
MAX_BACKLOG = 256 * 1024   # bytes waiting for a client that does not read: it is dropped
MAGIC = b"MJMUX "


# -- the client's side: find or start the sharer ---------------------------------

def _files(port):
    """(device, state file, lock file) of `port`'s sharer: one per device,
    named by its real path."""
    device = os.path.realpath(port)
    base = os.path.join(_state_dir(), "mux-%s" % hashlib.sha256(device.encode()).hexdigest()[:16])
    return device, base + ".json", base + ".lock"


def _answering(state_file, device):
    """The port of the sharer the state file names, if it answers for `device`."""
    state = _read_json(state_file)
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


def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


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


# -- the sharer ------------------------------------------------------------------

class _Client:
    def __init__(self, sock, cid):
        self.sock = sock
        self.id = cid
        self.reader = frame.FrameReader()
        self.out = bytearray()
        self.first = True              # its first byte says probe ("?") or link client


class Mux:
    """The sharer's loop: one thread, a selector over the port, the
    listening socket and the clients."""

    def __init__(self, ser, listener, device, idle_s=IDLE_S, state_file=None):
        self.ser = ser
        self.listener = listener
        self.device = device
        self.idle_s = idle_s
        self.state_file = state_file
        self.sel = selectors.DefaultSelector()
        self.clients = {}
        self.reader = frame.FrameReader()
        self.pending = {}              # upstream seq -> (client id, client seq, retry key)
        self.recent = {}               # (client id, client seq, payload) -> [upstream seq, answered at]
        self._seq = os.urandom(1)[0]   # a new sharer starts elsewhere, as a client does
        self._next_id = 0
        self.last_client = time.monotonic()
        listener.setblocking(False)
        self.sel.register(listener, selectors.EVENT_READ, "listen")
        self.sel.register(ser.fileno(), selectors.EVENT_READ, "port")

    def run(self):
        while True:
            for key, mask in self.sel.select(timeout=0.5):
                if key.data == "listen":
                    self._accept()
                elif key.data == "port":
                    try:
                        data = self.ser.read(self.ser.in_waiting or 1)
                    except (serial.SerialException, OSError):
                        return "the port went away"
                    self._from_port(data)
                else:
                    c = key.data
                    if c.id not in self.clients:
                        continue
                    if mask & selectors.EVENT_READ:
                        self._from_client(c)
                    if c.id in self.clients and mask & selectors.EVENT_WRITE:
                        self._flush(c)
            now = time.monotonic()
            for k in [k for k, v in self.recent.items()
                      if v[1] is not None and now - v[1] > RETRY_WINDOW_S]:
                del self.recent[k]
            if not self.clients and now - self.last_client > self.idle_s:
                return "idle"

    def _accept(self):
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return
        sock.setblocking(False)
        self._next_id += 1
        c = _Client(sock, self._next_id)
        self.clients[c.id] = c
        self.sel.register(sock, selectors.EVENT_READ, c)

    def _drop(self, c):
        self.clients.pop(c.id, None)
        self.last_client = time.monotonic()
        try:
            self.sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass
        c.sock.close()
        for up in [up for up, p in self.pending.items() if p[0] == c.id]:
            del self.pending[up]
        for k in [k for k in self.recent if k[0] == c.id]:
            del self.recent[k]

    def _send(self, c, data):
        c.out += data
        self._flush(c)

    def _flush(self, c):
        try:
            n = c.sock.send(c.out) if c.out else 0
        except BlockingIOError:
            n = 0
        except OSError:
            self._drop(c)
            return
        del c.out[:n]
        if len(c.out) > MAX_BACKLOG:
            self._drop(c)
            return
        self.sel.modify(c.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if c.out else 0), c)

    def _from_client(self, c):
        try:
            data = c.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop(c)
            return
        if c.first:
            c.first = False
            if data[:1] == b"!":          # release(): the port is wanted elsewhere
                raise SystemExit(0)
            if data[:1] == b"?":
                info = {"mux": VERSION, "pid": os.getpid(), "device": self.device,
                        "clients": len(self.clients) - 1}
                c.sock.setblocking(True)
                try:
                    c.sock.sendall(MAGIC + json.dumps(info).encode() + b"\n")
                except OSError:
                    pass
                self._drop(c)
                return
        r, i = c.reader, 0
        while True:
            i = r.feed(data, i)
            if not r.ready:
                break
            self._request(c, r.kind, r.seq, r.payload())

    def _request(self, c, kind, seq, payload):
        """A client's frame, on to the controller under a number of ours;
        a retry (same number, same payload) under the first try's."""
        key = (c.id, seq, payload)
        known = self.recent.get(key)
        if known is not None:
            up = known[0]
            known[1] = None            # waiting again
        else:
            up = self._free_seq()
            self.recent[key] = [up, None]
        self.pending[up] = (c.id, seq, key)
        try:
            self.ser.write(frame.encode(kind, up, payload))
        except (serial.SerialException, OSError):
            raise SystemExit(0)

    def _free_seq(self):
        busy = set(self.pending) | {v[0] for v in self.recent.values()}
        for _ in range(256):
            self._seq = (self._seq + 1) & 0xFF
            if self._seq not in busy:
                return self._seq
        # Every number is taken (256 answers within the retry window): the
        # oldest kept for a retry gives its number up.
        oldest = min((k for k, v in self.recent.items() if v[1] is not None),
                     key=lambda k: self.recent[k][1])
        return self.recent.pop(oldest)[0]

    def _from_port(self, data):
        r, i = self.reader, 0
        while True:
            i = r.feed(data, i)
            if not r.ready:
                break
            kind, seq, payload = r.kind, r.seq, r.payload()
            if kind == link_codec.EVENT:
                out = frame.encode(kind, seq, payload)
                for c in list(self.clients.values()):
                    if c.id in self.clients:       # a send may drop one that stalls
                        self._send(c, out)
            elif kind in (link_codec.RESPONSE, link_codec.ERROR):
                p = self.pending.pop(seq, None)
                if p is None:
                    continue           # late or repeated: its client was given the first
                cid, cseq, key = p
                if key in self.recent:
                    self.recent[key][1] = time.monotonic()
                c = self.clients.get(cid)
                if c is not None:
                    self._send(c, frame.encode(kind, cseq, payload))

    def close(self):
        for c in list(self.clients.values()):
            self._drop(c)
        self.listener.close()
        self.ser.close()
        if self.state_file and (_read_json(self.state_file) or {}).get("pid") == os.getpid():
            try:
                os.unlink(self.state_file)
            except OSError:
                pass


def _holders(device):
    """The pids of other processes that have `device` open (Linux's /proc;
    elsewhere none are named)."""
    pids = []
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                if os.readlink("/proc/%s/fd/%s" % (pid, fd)) == device:
                    pids.append(int(pid))
                    break
        except OSError:
            continue
    return pids


def serve(device, state_file, baudrate=115200, idle_s=IDLE_S, ready=print):
    """Open the port, listen, say {"ok": true, "port": N} (or why not) with
    `ready`, then serve until idle or the port goes away."""
    try:
        ser = serial.Serial(device, baudrate=baudrate, timeout=0, exclusive=True)
    except (serial.SerialException, OSError) as e:
        code = getattr(e, "errno", None)
        if code in (errno.EAGAIN, errno.EWOULDBLOCK) or "lock" in str(e).lower():
            pids = _holders(device)
            who = t("mux.busy_pid", pid=", ".join(map(str, pids))) if pids else ""
            msg = t("mux.busy", port=device, who=who)
        else:
            msg = t("mux.open_failed", port=device, why=e.strerror or e) \
                if isinstance(e, OSError) and getattr(e, "strerror", None) else str(e)
        ready(json.dumps({"ok": False, "error": msg, "errno": code}))
        return 1
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    tcp = listener.getsockname()[1]
    mux = Mux(ser, listener, device, idle_s, state_file)
    tmp = state_file + ".%d" % os.getpid()
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "port": tcp, "device": device, "mux": VERSION}, f)
    os.replace(tmp, state_file)
    ready(json.dumps({"ok": True, "port": tcp}))
    try:
        mux.run()
    except SystemExit:
        pass
    finally:
        mux.close()
    return 0


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(prog="python -m host_tools.link.mux",
                                 description="share a controller's serial port among local"
                                 " clients (started by mjctl)")
    ap.add_argument("--device", required=True)
    ap.add_argument("--state", required=True, help="the file that says where it listens")
    ap.add_argument("--baudrate", type=int, default=115200)
    ap.add_argument("--idle", type=float, default=float(os.environ.get("MJCTL_SHARE_IDLE",
                                                                        IDLE_S)))
    args = ap.parse_args(argv)

    def ready(line):
        # One line for the mjctl that started it, then no more output:
        # nobody reads it afterwards.
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    return serve(args.device, args.state, args.baudrate, args.idle, ready)


if __name__ == "__main__":
    sys.exit(main())
