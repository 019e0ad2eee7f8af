"""The host end of the link (docs/protocol.md): requests, answers, events.

    with LinkClient("/dev/ttyACM0") as link:     # or any pyserial URL, or an open port
        print(link.hello())                       # the handshake: raises on a version mismatch
        print(link.request("status"))
        ev = link.wait_event(lambda e: e["ev"] == "state", timeout=5)

A reader thread parses the byte stream with the firmware's own FrameReader
and codec: RESPONSE/ERROR frames go to the request waiting on their seq,
EVENT frames to a bounded queue (the oldest is dropped when it is full, and
counted). Nothing that arrives is lost silently: garbage and bad CRCs are
counted by the reader, answers nobody waits for and frames that do not fit
the table are kept in `rejected` with the reason, and `stats()` shows it all.

Service sessions (`open_service`, signed requests, `service_log`) are
service_session.py's.
"""

import collections
import os
import threading
import time

import serial

from firmware import frame
from firmware.link import protocol
from firmware.link.codec import LinkError
from host_tools.link import codec as link_codec
from host_tools.link.service_session import (REQUEST_MAX, ServiceRequests, ServiceSession,
                                             service_entry, sign_request)

__all__ = ["LinkClient", "LinkError", "REQUEST_MAX", "ServiceSession", "service_entry",
           "sign_request"]


class LinkClient(ServiceRequests):
    """One controller on one serial port. Thread-safe: requests from several
    threads go out with different seqs."""

    def __init__(self, port, baudrate=115200, timeout=1.0, max_events=256, idle_flush=0.2):
        """port: a device path or pyserial URL (opened here, closed by close()),
        or an open serial object (left open; a read timeout of None is set to
        0.05 s so that the reader can stop). timeout: seconds per attempt of
        a request. idle_flush: a frame left incomplete for that long while the
        line is quiet is given up (a truncated frame) and its bytes rescanned."""
        if isinstance(port, str):
            self.ser = serial.serial_for_url(port, baudrate=baudrate, timeout=0.05)
            self._own = True
        else:
            self.ser, self._own = port, False
            if getattr(port, "timeout", 0) is None:
                port.timeout = 0.05
        self.timeout = timeout
        self.idle_flush = idle_flush
        self.reader = frame.FrameReader()
        self.info = None                          # the controller's hello answer
        self.rejected = collections.deque(maxlen=64)  # (reason, kind, seq, payload)
        self._cond = threading.Condition()
        self._wlock = threading.Lock()
        self._pending = {}                        # seq -> [op, (kind, payload) or None]
        self._seq = os.urandom(1)[0]              # a restarted host starts elsewhere
        self._events = collections.deque(maxlen=max_events)
        self._ev_seq = None
        self._counts = dict(events=0, events_dropped=0, events_missed=0, retries=0,
                            timeouts=0, rejected=0)
        self._closed = False
        self._error = None
        self._thread = threading.Thread(target=self._run, name="link-reader", daemon=True)
        self._thread.start()

    # ---- requests ----

    def hello(self, timeout=None):
        """The handshake: both ends must speak PROTO_VERSION. Returns the
        controller's {"proto", "fw", "build", "table"} (also kept in .info)."""
        ours = protocol.PROTO_VERSION
        try:
            info = self.request("hello", timeout=timeout, proto=ours)
        except LinkError as e:
            if e.code != "proto_mismatch":
                raise
            theirs = (e.info or {}).get("proto")
            raise _mismatch(theirs, ours, e.info) from None
        if info["proto"] != ours:
            raise _mismatch(info["proto"], ours, info)
        self.info = info
        return info

    def request(self, op, timeout=None, **args):
        """Send request `op` and return the controller's answer (a dict with
        "ok": true, "op" and the fields of RESPONSES[op]). Raises LinkError:
        the controller's error code and message for an ERROR answer, "timeout"
        when neither the request nor its one retry (same seq) was answered.
        With `session` a ServiceSession (open_service's), the request is
        signed with it: its next counter and the MAC (docs/protocol.md)."""
        session = args.get("session")
        if isinstance(session, ServiceSession):
            payload = session.sign(op, args)
            return self._call(op, lambda seq: frame.encode(link_codec.REQUEST, seq, payload),
                              timeout)
        return self._call(op, lambda seq: link_codec.encode_request(seq, op, **args), timeout)

    def request_raw(self, payload, op=None, timeout=None):
        """Send a hand-made REQUEST payload (bytes) - diagnostics and tests of
        the controller's error handling. A RESPONSE is checked against `op`
        (None: only an ERROR answer is expected; a RESPONSE is bad_response)."""
        return self._call(op, lambda seq: frame.encode(link_codec.REQUEST, seq, payload), timeout)

    def _call(self, op, build, timeout):
        timeout = self.timeout if timeout is None else timeout
        with self._cond:
            self._check_open()
            seq = self._next_seq()
            slot = self._pending[seq] = [op, None]
        try:
            data = build(seq)
            for attempt in (0, 1):
                if attempt:
                    with self._cond:
                        self._counts["retries"] += 1
                self._send(data)
                if self._wait(lambda: slot[1] is not None, timeout):
                    break
            else:
                with self._cond:
                    self._counts["timeouts"] += 1
                raise LinkError("timeout", "no answer to %s (seq %d) in 2 x %.2f s"
                                % (op, seq, timeout))
        finally:
            with self._cond:
                del self._pending[seq]
        reply = link_codec.decode(slot[1][0], slot[1][1], op)
        if isinstance(reply, LinkError):
            raise reply
        return reply

    def _next_seq(self):
        for _ in range(256):
            self._seq = (self._seq + 1) & 0xFF
            if self._seq not in self._pending:
                return self._seq
        raise RuntimeError("256 requests are already waiting for answers")

    def _send(self, data):
        with self._wlock:
            try:
                self.ser.write(data)
                self.ser.flush()
            except (serial.SerialException, OSError) as e:
                self._fail(LinkError("closed", "serial port failed: %s" % e))
                raise self._error from e

    def send_raw(self, data):
        """Bytes onto the line as they are: damaged frames and noise (the
        link fuzz, tests). Nothing waits for an answer."""
        self._send(data)

    @property
    def seq(self):
        """The seq of the latest request: a raw frame's seq far from it is
        never taken for the answer to one of ours."""
        return self._seq

    # ---- events ----

    def next_event(self, timeout=None):
        """The oldest queued event, waiting up to `timeout` s (None: until the
        link closes) for one; None if there is none."""
        with self._cond:
            if not self._wait(lambda: self._events, timeout, closed_ok=True):
                return None
            return self._events.popleft()

    def events(self, timeout=None):
        """Iterate over events as they arrive; ends after `timeout` s without
        one (None: when the link closes)."""
        while True:
            ev = self.next_event(timeout)
            if ev is None:
                return
            yield ev

    def wait_event(self, pred, timeout=None):
        """The first event (queued or new) for which pred(event) is true; it
        is removed from the queue, events before it stay queued. Raises
        LinkError("timeout") after `timeout` s (None: self.timeout)."""
        timeout = self.timeout if timeout is None else timeout
        seen = [0]                                # events already tested
        drops = [self._counts["events_dropped"]]

        def match():
            # A full queue drops its oldest events as new ones come: the
            # ones tested so far move down by as many.
            dropped = self._counts["events_dropped"] - drops[0]
            drops[0] += dropped
            seen[0] = max(0, seen[0] - dropped)
            while seen[0] < len(self._events):
                if pred(self._events[seen[0]]):
                    return True
                seen[0] += 1
            return False

        with self._cond:
            if not self._wait(match, timeout):
                raise LinkError("timeout", "no matching event in %.2f s" % timeout)
            ev = self._events[seen[0]]
            del self._events[seen[0]]
            return ev

    # ---- state ----

    def stats(self):
        """Counters: frames, garbage bytes, bad CRCs, events (queued, dropped
        for a full queue, missed by a gap in the event seq), retries, timeouts,
        rejected frames."""
        r = self.reader
        with self._cond:
            out = dict(self._counts)
            out.update(frames=r.frames, garbage=r.dropped, bad_crc=r.bad_crc,
                       queued=len(self._events))
        return out

    def close(self):
        """Stop the reader; close the port if this client opened it. Requests
        still waiting fail with LinkError("closed")."""
        self._fail(LinkError("closed", "the link was closed"))
        if self._thread is not threading.current_thread():
            self._thread.join(2)
        if self._own:
            self.ser.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _fail(self, err):
        with self._cond:
            if not self._closed:
                self._closed, self._error = True, err
            self._cond.notify_all()

    def _check_open(self):
        if self._closed:
            raise self._error

    def _wait(self, cond, timeout, closed_ok=False):
        """Wait (holding self._cond) until cond() is true: True; False at the
        timeout; raises the closing error once the link is closed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not cond():
                if self._closed:
                    if closed_ok:
                        return False
                    raise self._error
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
            return True

    # ---- the reader thread ----

    def _run(self):
        r = self.reader
        last = time.monotonic()
        while not self._closed:
            try:
                data = self.ser.read(getattr(self.ser, "in_waiting", 0) or 1)
            except Exception as e:                # port gone: pyserial, OS, closed fd
                if not self._closed:
                    self._fail(LinkError("closed", "serial port failed: %s" % e))
                return
            now = time.monotonic()
            if data:
                last = now
            elif r.n and now - last >= self.idle_flush:
                r.flush()                         # a truncated frame: rescan its bytes
            else:
                continue
            i = 0
            while True:
                i = r.feed(data, i)
                if not r.ready:
                    break
                self._dispatch(r.kind, r.seq, r.payload())

    def _dispatch(self, kind, seq, payload):
        with self._cond:
            if kind in (link_codec.RESPONSE, link_codec.ERROR):
                slot = self._pending.get(seq)
                if slot is not None and slot[1] is None:
                    slot[1] = (kind, payload)
                    self._cond.notify_all()
                else:
                    self._reject("an answer no request waits for (late or repeated)",
                                 kind, seq, payload)
            elif kind == link_codec.EVENT:
                try:
                    ev = link_codec.decode(kind, payload)
                except LinkError as e:
                    self._reject(str(e), kind, seq, payload)
                    return
                if self._ev_seq is not None:
                    self._counts["events_missed"] += (seq - self._ev_seq - 1) & 0xFF
                self._ev_seq = seq
                if len(self._events) == self._events.maxlen:
                    self._counts["events_dropped"] += 1
                self._events.append(ev)
                self._counts["events"] += 1
                self._cond.notify_all()
            else:
                self._reject("kind 0x%02x does not go to the host" % kind, kind, seq, payload)

    def _reject(self, reason, kind, seq, payload):
        self._counts["rejected"] += 1
        self.rejected.append((reason, kind, seq, payload))


def _mismatch(theirs, ours, info):
    """The refusal of another protocol, with the facts a host says it by
    (host_tools/texts/refusal.py: why `proto`, `got` theirs, `hi` ours,
    `other` the side to update)."""
    older = "firmware" if isinstance(theirs, int) and theirs < ours else "host_tools"
    facts = dict(info or {}, why="proto", got=theirs, hi=ours, other=older)
    return LinkError("proto_mismatch", "the controller speaks link protocol %s, these host "
                     "tools %d: update the %s" % (theirs, ours, older.replace("_", " ")), facts)
