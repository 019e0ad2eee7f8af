"""The sharer of one controller's serial port (mux.py finds or starts it):
one process, one thread, a selector over the port, its listening socket
and its clients. Every event the controller sends goes to every client;
each client's request goes on under a sequence number of the sharer's own
and its answer back to that client under the client's number; a retry
(the same number and payload) goes out under the first try's number, so
the controller still recognises it (docs/protocol.md, Sequence numbers).
A first byte `?` is a probe, answered with `MJMUX {...}` and a newline;
`!` stops the sharer (mux.release). It exits IDLE_S after its last client
leaves, or when the port goes away.

    python -m host_tools.link.mux --device DEV --state FILE    # as mux.shared starts it
"""

import errno
import json
import os
import selectors
import socket
import sys
import time

import serial

from firmware import frame
from host_tools.link import codec as link_codec
from host_tools.texts import t

VERSION = 1
IDLE_S = 30.0          # after the last client leaves: a technician's next command is quicker
RETRY_WINDOW_S = 6.0   # a request's number is kept this long after its answer (the controller's 5 s)
MAX_BACKLOG = 256 * 1024   # bytes waiting for a client that does not read: it is dropped
MAGIC = b"MJMUX "


def read_json(path):
    """The JSON a state file holds, or None (no file, or not JSON)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


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
        if self.state_file and (read_json(self.state_file) or {}).get("pid") == os.getpid():
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
