"""The host's link client (host_tools/link/client.py) over a real pty,
against a tiny fake controller: answers, events, retries, lost and spoiled
frames, and the errors that reach the caller. See docs/protocol.md."""

import json
import os
import select
import threading
import time
import tty

import pytest
import serial

from firmware import frame
from firmware.link import codec
from firmware.link.codec import LinkError
from host_tools.link import codec as link_codec
from host_tools.link.client import LinkClient
from host_tools.tests.link_codec_helpers import BUF, RUNTIME


class FakeController(threading.Thread):
    """The controller's link loop in miniature, on the pty master: the
    firmware-side codec functions, a preallocated transmit buffer, and the
    retry rule (the same seq and payload again gets the same answer again,
    without acting twice). Knobs make it lose or spoil traffic."""

    def __init__(self, fd, proto=codec.PROTO_VERSION, hello_proto=codec.PROTO_VERSION):
        super().__init__(daemon=True)
        self.fd, self.proto, self.hello_proto = fd, proto, hello_proto
        self.reader = frame.FrameReader()
        self.tx = bytearray(BUF)
        self.stop = threading.Event()
        self.last = None                 # (seq, payload, answer frame)
        self.ignore = 0                  # requests to lose
        self.spoil = 0                   # answers to send with a flipped bit
        self.truncate_before = 0         # answers preceded by a truncated frame
        self.garbage = b""               # bytes sent before every answer
        self.seen = []                   # ops received, retries included
        self.starts = 0
        self.ev_seq = 0
        self.t = 1000

    def run(self):
        while not self.stop.is_set():
            if not select.select([self.fd], [], [], 0.02)[0]:
                continue
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                return
            i = 0
            while True:
                i = self.reader.feed(data, i)
                if not self.reader.ready:
                    break
                self.handle()

    def send(self, data):
        os.write(self.fd, data)

    def handle(self):
        r = self.reader
        seq, payload = r.seq, r.payload()
        self.seen.append(payload)
        if self.last and self.last[:2] == (seq, payload):
            self.send(self.last[2])                      # a retry: same answer, no action
            return
        if self.ignore:
            self.ignore -= 1
            return
        events = []
        try:
            op, args = codec.decode_request(r)
            n, events = self.answer(seq, op, args)
        except LinkError as e:
            n = codec.write_error(self.tx, seq, e)
        answer = bytes(self.tx[:n])
        self.last = (seq, payload, answer)
        out = self.garbage
        if self.truncate_before:
            self.truncate_before -= 1
            out += frame.encode(link_codec.EVENT, 99, b"z" * 300)[:40]
        if self.spoil:
            self.spoil -= 1
            spoiled = bytearray(answer)
            spoiled[-3] ^= 0x04
            answer = bytes(spoiled)
        self.send(out + answer)
        for ev in events:
            n = codec.write_event(self.tx, self.ev_seq, ev)
            self.ev_seq = (self.ev_seq + 1) & 0xFF
            self.send(bytes(self.tx[:n]))

    def answer(self, seq, op, args):
        if op == "hello":
            if args["proto"] != self.proto:
                raise LinkError("proto_mismatch", "host speaks protocol %d, controller %d"
                                % (args["proto"], self.proto), {"op": op, "proto": self.proto})
            return codec.write_response(self.tx, seq, {
                "op": "hello", "proto": self.hello_proto, "fw": "0.1.0", "build": "test-build",
                "table": "pty-fake", "runtime": RUNTIME}), []
        if op == "status":
            return codec.write_response(self.tx, seq, {
                "op": "status", "state": "idle", "phase": "walls_down", "cycles": self.starts,
                "fault": None, "uptime": self.t, "dealer": 2, "dice": [3, 5],
                "tiles_per_side": [36, 36, 36, 36], "lanes": [0, 0, 0, 0],
                "lifters": ["bottom"] * 4}), []
        if op == "start":
            if self.starts:
                raise LinkError("busy", "a table cycle is running")
            self.starts += 1
            evs = [{"ev": "state", "t": self.t, "state": "building"}]
            evs += [{"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": self.t + k, "lane": k % 4, "count": k} for k in range(1, 9)]
            return codec.write_response(self.tx, seq, {"op": "start", "state": "building"}), evs
        raise LinkError("internal", "the fake controller has no %s" % op)


@pytest.fixture
def pty_link():
    """(controller, client factory): a pty pair in raw mode, the fake
    controller on the master, LinkClients on the slave's path."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    ctl = FakeController(master)
    ctl.path = os.ttyname(slave)
    ctl.start()
    clients = []

    def connect(**kw):
        c = LinkClient(kw.pop("port", ctl.path), **kw)
        clients.append(c)
        return c
    yield ctl, connect
    for c in clients:
        c.close()
    ctl.stop.set()
    ctl.join(2)
    os.close(slave)
    os.close(master)


def test_pty_hello_status_start_and_events(pty_link):
    ctl, connect = pty_link
    ctl.garbage = b"\x00boot log line\r\n\xa5"
    link = connect(timeout=0.5)
    info = link.hello()
    assert info["proto"] == codec.PROTO_VERSION and info["fw"] == "0.1.0" and link.info == info
    st_ = link.request("status")
    assert st_["ok"] and st_["dice"] == [3, 5] and st_["fault"] is None
    assert link.request("start")["state"] == "building"
    assert link.wait_event(lambda e: e["ev"] == "jogged" and e["count"] == 8, timeout=2)["lane"] == 0
    queued = list(link.events(timeout=0.2))              # the ones before it stayed queued
    assert queued[0] == {"ev": "state", "t": 1000, "state": "building"}
    assert [e["count"] for e in queued[1:]] == list(range(1, 8))
    with pytest.raises(LinkError) as e:
        link.request("start")
    assert (e.value.code, e.value.message) == ("busy", "a table cycle is running")
    s = link.stats()
    assert s["garbage"] == 4 * len(ctl.garbage) and s["events"] == 9 and s["timeouts"] == 0
    assert s["bad_crc"] == 0 and s["events_missed"] == 0 and s["rejected"] == 0


def test_pty_lost_request_is_retried_with_the_same_seq(pty_link):
    ctl, connect = pty_link
    link = connect(timeout=0.3)
    ctl.ignore = 1
    assert link.request("start")["state"] == "building"
    assert len(ctl.seen) == 2 and ctl.seen[0] == ctl.seen[1]        # same seq, same bytes
    assert link.stats()["retries"] == 1 and ctl.starts == 1


def test_pty_spoiled_answer_is_counted_and_the_retry_does_not_act_twice(pty_link):
    ctl, connect = pty_link
    link = connect(timeout=0.3)
    ctl.spoil = 1
    assert link.request("start")["state"] == "building"
    assert ctl.starts == 1 and len(ctl.seen) == 2
    s = link.stats()
    assert s["bad_crc"] == 1 and s["retries"] == 1


def test_pty_truncated_frame_before_an_answer(pty_link):
    """A frame cut short (a reset mid-frame) claims the bytes after it; the
    client gives it up when the line goes quiet and finds the answer inside."""
    ctl, connect = pty_link
    link = connect(timeout=1.0, idle_flush=0.1)
    ctl.truncate_before = 1
    t0 = time.monotonic()
    assert link.request("status")["state"] == "idle"
    assert time.monotonic() - t0 < 0.9 and link.stats()["retries"] == 0
    assert link.stats()["garbage"] >= 40


def test_pty_no_answer_is_a_timeout_after_one_retry(pty_link):
    ctl, connect = pty_link
    link = connect(timeout=0.2)
    ctl.ignore = 2
    with pytest.raises(LinkError) as e:
        link.request("status")
    assert e.value.code == "timeout" and "status" in e.value.message
    assert len(ctl.seen) == 2 and link.stats()["timeouts"] == 1
    assert link.request("status")["ok"]                 # the link still works


@pytest.mark.parametrize("proto,hello_proto", [(codec.PROTO_VERSION + 1, codec.PROTO_VERSION),
                                               (codec.PROTO_VERSION, codec.PROTO_VERSION + 1)])
def test_pty_hello_refuses_another_protocol(pty_link, proto, hello_proto):
    ctl, connect = pty_link
    ctl.proto, ctl.hello_proto = proto, hello_proto
    link = connect(timeout=0.5)
    with pytest.raises(LinkError) as e:
        link.hello()
    assert e.value.code == "proto_mismatch"
    assert "protocol %d, these host tools %d" % (codec.PROTO_VERSION + 1, codec.PROTO_VERSION) \
        in e.value.message and "update the host tools" in e.value.message
    assert link.info is None


def test_pty_controller_errors_reach_the_caller(pty_link):
    ctl, connect = pty_link
    link = connect(timeout=0.5)
    for payload, code in [(b'{"op":"reboot"}', "unknown_op"), (b"{nope", "bad_json"),
                          (b"[1]", "bad_request"), (b'{"op":"hello","proto":"1"}', "bad_request")]:
        with pytest.raises(LinkError) as e:
            link.request_raw(payload)
        assert e.value.code == code and e.value.message
    with pytest.raises(LinkError) as e:
        link.request("faults")
    assert e.value.code == "internal"
    with pytest.raises(LinkError) as e:
        link.request("hello", proto="1")                 # refused before it is sent
    assert e.value.code == "bad_request" and len(ctl.seen) == 5


def test_pty_open_serial_object_is_left_open(pty_link):
    ctl, connect = pty_link
    ser = serial.serial_for_url(ctl.path, timeout=None)
    link = connect(port=ser, timeout=0.5)
    assert link.request("status")["ok"] and ser.timeout == 0.05
    link.close()
    assert ser.is_open
    with pytest.raises(LinkError) as e:
        link.request("status")
    assert e.value.code == "closed"
    ser.close()


def test_wait_event_still_finds_its_event_when_a_full_queue_drops_old_ones(pty_link):
    """Events that do not match stay queued; when the queue is full the
    oldest are dropped as new ones arrive, and the search must move with
    them (else it skips events, and a long hand's `result` is missed)."""
    ctl, connect = pty_link
    link = connect(timeout=0.5, max_events=4)

    def feed():
        for k in range(1, 40):
            payload = json.dumps({"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": k, "lane": 0, "count": k},
                                 sort_keys=True, separators=(",", ":")).encode()
            link._dispatch(link_codec.EVENT, k & 0xFF, payload)   # as the reader thread does
            time.sleep(0.001)
    t = threading.Thread(target=feed)
    t.start()
    found = [link.wait_event(lambda e, n=n: e["count"] == n, timeout=2)["count"]
             for n in (30, 35, 39)]
    t.join()
    assert found == [30, 35, 39]
    assert link.stats()["events_dropped"] > 0
