"""The telemetry's parts without a broker (firmware/link/telemetry.py): the
PUBLISH packets it writes, its config's checks (link/mqttconf.py), the
public filter on a fault's detail, the bounded queue, what it does with a
slow, closing or babbling broker, and how it leaves the heap for a
service session and comes back (link/aside.py). Runs under CPython and
MicroPython; the twin against a real broker is hw_tests/test_telemetry.py."""

import io
import json

import sys

from firmware.link import mqttconf, telemetry


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
    session_state = 0
    fw_version = "0.1.0"
    build = "image-x"

    def __init__(self, hal=None):
        self.events = []
        self.hal = hal or Hal()

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
    writes = 0

    def write(self, more=0):
        self.writes += 1


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


class _Umqtt:
    """umqtt and umqtt.simple where the interpreter has none (CPython):
    telemetry.start imports it once at the boot (and forgets it)."""
    MQTTClient = MQTTException = None

    def __init__(self):
        self.simple = self


def _again(link, ctl, kept=None):
    """main._telemetry's part: the telemetry started (again)."""
    telemetry.start(link, ctl, kept, _again)


def _umqtt():
    try:
        import umqtt.simple  # noqa: F401  pyright: ignore[reportMissingImports]
    except ImportError:
        sys.modules["umqtt"] = sys.modules["umqtt.simple"] = _Umqtt()


def _telemetry():
    link = Link()
    return telemetry.Telemetry(link, Ctl(), CONF, (link, _again, 0, 0, 0, 0, 0, 0, 1))


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
            mqttconf.configure(hal, key, value)
        except ValueError:
            continue
        assert False, (key, value)
    assert hal.secrets == {}
    mqttconf.configure(hal, "mqtt.host", "192.168.1.20")
    out = mqttconf.configure(hal, "mqtt.password", "s3cret")
    assert out["value"] == "***"
    assert json.loads(hal.secrets["mqtt.json"]) == {"host": "192.168.1.20", "password": "s3cret"}
    mqttconf.configure(hal, "mqtt.clear", True)
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


def test_the_telemetry_leaves_the_heap_during_a_service_session_and_comes_back():
    """Its module forgotten, the controller's emit and write its own but
    for the stand-in, which keeps the counters and starts it again (its
    settings read again) at the first tick after the session."""
    hal = Hal()
    hal.secrets["mqtt.json"] = json.dumps(CONF).encode()
    link, ctl = Link(hal), Ctl()
    link.controller = ctl
    own_emit = link.emit
    _umqtt()
    telemetry.start(link, ctl, (link, _again, 0, 0, 0, 0, 0, 0, 7), _again)
    t = ctl.write.__self__ if hasattr(ctl.write, "__self__") else None
    ctl.emit("state", {"state": "idle"})
    assert link.events == ["state"]
    sock = Sock()
    if t is not None:              # CPython: the object behind the hook
        t.next_health = 1 << 29
        t.client = sock
        t.put("x", "1", False)
    link.session_state = 1
    ctl.emit("state", {"state": "idle"})        # in the tick that opened it: the link's only
    ctl.write()
    assert ctl.writes == 1 and link.events == ["state", "state"]
    assert ctl.emit == own_emit
    assert "firmware.link.telemetry" not in sys.modules
    assert "firmware.link.aside" not in sys.modules
    if t is not None:
        assert sock.closed and sock.out == b"\xe0\x00"    # a DISCONNECT: no will
    ctl.write()
    ctl.write()                                 # the session still open: the controller's write
    assert ctl.writes == 3 and "firmware.link.telemetry" not in sys.modules
    link.session_state = 0
    ctl.write()                                 # the session over: a quiet time first
    hal.now += 9990
    ctl.write()
    assert "firmware.link.telemetry" not in sys.modules
    link.session_state = 1                      # the technician's next command
    hal.now += 10
    ctl.write()
    link.session_state = 0
    hal.now += 9990
    ctl.write()
    assert ctl.writes == 7 and "firmware.link.telemetry" not in sys.modules
    hal.now += 10
    ctl.write()                                 # 10 s without a session: started again
    assert ctl.writes == 8
    from firmware.link import telemetry as again
    back = ctl.write.__self__ if hasattr(ctl.write, "__self__") else None
    if back is not None:
        assert isinstance(back, again.Telemetry) and back is not t
        assert back.boots == 7 and back.skipped == 2 and back.errors == 0
        assert back.state is None and back.q == []
    ctl.write()
    assert ctl.writes == 9 and link.errors == 0


def test_settings_gone_during_the_session_leave_the_telemetry_off():
    hal = Hal()
    hal.secrets["mqtt.json"] = json.dumps(CONF).encode()
    link, ctl = Link(hal), Ctl()
    link.controller = ctl
    own_write = ctl.write
    _umqtt()
    telemetry.start(link, ctl, None, _again)
    assert ctl.write != own_write
    link.session_state = 1
    ctl.write()
    mqttconf.configure(hal, "mqtt.clear", True)
    link.session_state = 0
    ctl.write()
    hal.now += 10000
    ctl.write()
    assert ctl.write == own_write and link.errors == 0
