"""The telemetry's parts without a broker (firmware/link/telemetry.py): the
PUBLISH packets it writes, its config's checks, the public filter on a
fault's detail, the bounded queue, and what it does with a slow, closing
or babbling broker. Runs under CPython and MicroPython; the twin against
a real broker is hw_tests/test_telemetry.py."""

import io
import json

from firmware.link import telemetry


class Hal:
    def __init__(self):
        self.secrets = {}
        self.now = 0
        self.store = "/nonexistent/"

    def ticks_ms(self):
        return self.now

    def secret(self, name):
        if name not in self.secrets:
            raise OSError(2)
        return io.BytesIO(self.secrets[name])

    def set_secret(self, name, parts):
        self.secrets[name] = "".join(parts).encode()


class Link:
    errors = dropped = overruns = 0
    session = None

    def __init__(self):
        self.events = []

    def emit(self, name, fields):
        fields["ev"] = name
        fields["t"] = 5
        self.events.append(name)


class Ctl:
    state = 0
    fault = 0
    hands = 3
    cycles = 4
    lifts = 5
    tiles_fed = [1, 2, 3, 4]
    fault_counts = [0] * 60

    def write(self, more=0):
        pass


class Sock:
    def __init__(self, rx=b"", room=1 << 20):
        self.rx = rx
        self.room = room       # bytes the socket takes before it is full
        self.out = b""
        self.closed = False

    def readinto(self, buf):
        if self.rx is None:
            return 0           # closed by the broker
        if not self.rx:
            return None        # nothing now
        n = min(len(buf), len(self.rx))
        buf[:n] = self.rx[:n]
        self.rx = self.rx[n:]
        return n

    def write(self, b):
        b = bytes(b)
        if self.room <= 0:
            return None
        n = min(len(b), self.room)
        self.room -= n
        self.out += bytes(b[:n])
        return n

    def close(self):
        self.closed = True


CONF = {"host": "127.0.0.1", "site": "hall", "table": "t1", "user": "u", "password": "p"}


def _telemetry():
    return telemetry.Telemetry(Hal(), Link(), Ctl(), CONF, "image-x", "0.1.0", 1)


def _decode(data):
    """The PUBLISH packets in `data`: [(topic, payload, retain)]."""
    out = []
    i = 0
    while i < len(data):
        head = data[i]
        assert head & 0xF0 == 0x30, head
        size, shift = 0, 0
        i += 1
        while True:
            b = data[i]
            i += 1
            size |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        tl = (data[i] << 8) | data[i + 1]
        topic = data[i + 2:i + 2 + tl].decode()
        out.append((topic, data[i + 2 + tl:i + size], bool(head & 1)))
        i += size
    return out


def _packet(topic, payload, retain):
    return bytes(telemetry._head(topic, len(payload), retain)) + payload


def test_a_publish_header_counts_the_payload_s_bytes_short_or_long():
    short = _packet("parlour/hall/table/t1/state", b'{"state": "idle"}', True)
    long = _packet("a/b", b"x" * 300, False)
    assert _decode(short) == [("parlour/hall/table/t1/state", b'{"state": "idle"}', True)]
    assert _decode(long) == [("a/b", b"x" * 300, False)]
    assert long[1] & 0x80 and len(long) == 1 + 2 + 2 + 3 + 300


def test_config_set_checks_each_key_and_never_echoes_a_password():
    hal = Hal()
    for key, value in (("mqtt.host", "broker.local"), ("mqtt.host", "300.1.1.1"),
                       ("mqtt.port", 0), ("mqtt.port", "1883"), ("mqtt.site", "a/b"),
                       ("mqtt.table", ""), ("mqtt.tls", 1), ("mqtt.nope", 1),
                       ("mqtt.password", "x" * 65)):
        try:
            telemetry.configure(hal, key, value)
        except ValueError:
            continue
        assert False, (key, value)
    assert hal.secrets == {}
    telemetry.configure(hal, "mqtt.host", "192.168.1.20")
    out = telemetry.configure(hal, "mqtt.password", "s3cret")
    assert out["value"] == "***"
    assert json.loads(hal.secrets["mqtt.json"]) == {"host": "192.168.1.20", "password": "s3cret"}
    telemetry.configure(hal, "mqtt.clear", True)
    assert json.loads(hal.secrets["mqtt.json"]) == {}


def test_a_fault_is_published_with_its_texts_and_no_tile():
    t = _telemetry()
    t.event("fault", {"code": 10, "name": "lane_jam",
                      "detail": {"lane": 2, "tile": "5m", "x": {"tiles": ["1m"]}}})
    t.event("fault", {"code": 20, "name": "missing_tile", "detail": {"tiles": ["5m"]}})
    t.event("hand", {"tiles": ["1m"]})
    assert t.link.events == ["fault", "fault", "hand"]       # the link has every one
    leaves = [q[0] for q in t.q]
    assert leaves == ["fault", "fault"], leaves
    lane = json.loads(t.q[0][1])
    assert lane["detail"] == {"lane": 2} and lane["cause"] and lane["fix"]
    audit = json.loads(t.q[1][1])
    assert "detail" not in audit and audit["code"] == 20


def test_the_queue_keeps_the_newest_and_counts_what_it_dropped():
    t = _telemetry()
    for i in range(20):
        t.put("x", str(i), False)
    assert len(t.q) == 12 and t.dropped == 8
    assert t.q[0][1] == b"8" and t.q[-1][1] == b"19"


def test_a_full_socket_keeps_the_message_and_half_a_packet_drops_the_link():
    t = _telemetry()
    t.put("a", "1", False)
    t.client = Sock(room=0)
    t._io(0)
    assert len(t.q) == 1 and t.client is not None        # tried again next tick
    sock = Sock(room=5)
    t.client = sock
    t.tick(1)
    assert t.client is None and sock.closed and t.errors == 1
    assert t.next_try > 1                                  # backed off


def test_what_the_broker_sends_is_read_and_ignored_and_a_close_is_seen():
    t = _telemetry()
    t.next_health = 1 << 29
    t.client = Sock(rx=b"\x30\xff\xff\xff\xff\x7f garbage" * 20)
    for now in range(10):
        t.tick(now)
    assert t.client is not None and t.errors == 0
    t.client.rx = None
    t.tick(11)
    assert t.client is None and t.errors == 1


def test_at_most_two_messages_per_tick():
    t = _telemetry()
    t.next_health = 1 << 29
    for i in range(5):
        t.put("x", str(i), False)
    sock = Sock()
    t.client = sock
    t.tick(0)
    assert len(_decode(sock.out)) == 2 and len(t.q) == 3


def test_a_payload_beyond_ascii_is_counted_in_bytes():
    t = _telemetry()
    t.next_health = 1 << 29
    t.put("fault", '{"reason": "\u724c"}', False)
    sock = Sock()
    t.client = sock
    t.tick(0)
    assert _decode(sock.out) == [("parlour/hall/table/t1/fault",
                                  '{"reason": "\u724c"}'.encode(), False)]


def test_the_telemetry_steps_aside_during_a_service_session():
    t = _telemetry()
    t.next_health = 1 << 29
    t.put("x", "1", False)
    sock = Sock()
    t.client = sock
    t.link.session = "abcd"
    t.event("state", {"state": "idle"})
    t.tick(0)
    assert sock.closed and sock.out == b"\xe0\x00" and t.client is None   # a DISCONNECT: no will
    assert t.q == [] and t.skipped == 1 and t.dropped == 0 and t.link.events == ["state"]
    t.link.session = None
    t.tick(1)
    # (health reads gc.mem_free, which CPython lacks: MicroPython has both)
    assert [q[0] for q in t.q][:1] == ["counters"]
