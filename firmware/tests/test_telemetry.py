"""The telemetry's parts without a broker (firmware/link/telemetry.py): the
PUBLISH packets it writes, its config's checks (link/mqttconf.py), the
public filter on a fault's detail, the bounded queue, what it does with a
slow, closing or babbling broker, and how it leaves the heap for a
service session and comes back (link/mqtthook.py, the hooks that keep its
state between turns). Runs under CPython and
MicroPython; the twin against a real broker is hw_tests/test_telemetry.py."""

import io
import json

import sys

from firmware.hal import ticks_diff
from firmware.link import mqtthook, mqttconf, telemetry


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


TURNS = []                     # the `kept` of each turn _again made


class _Gc:
    """CPython's gc has no mem_free (the health's free heap): 0 here."""
    collect = staticmethod(telemetry.gc.collect)

    @staticmethod
    def mem_free():
        return 0


if not hasattr(telemetry.gc, "mem_free"):
    telemetry.gc = _Gc()


def _again(link, ctl, kept=None):
    """main._telemetry's part: the telemetry started, or a turn."""
    if kept is not None:
        TURNS.append(kept)
    telemetry.start(link, ctl, kept, _again)


def _umqtt():
    try:
        import umqtt.simple  # noqa: F401  pyright: ignore[reportMissingImports]
    except ImportError:
        sys.modules["umqtt"] = sys.modules["umqtt.simple"] = _Umqtt()


FAR = 1 << 28                  # within half the ticks period (2**30) of any now here


def _kept(link, **given):
    """A `kept` as telemetry.start makes it, nothing due for FAR ms."""
    first = {"link": link, "again": _again, "events": None, "due": FAR, "aside": None,
             "dropped": 0, "placed": True, "spare": None, "client": None,
             "ticks_diff": ticks_diff, "q": None, "next_try": FAR, "next_health": FAR,
             "backoff": 1000, "last_rx": 0, "last_ping": 0, "skipped": 0, "errors": 0,
             "refused": 0, "connects": 0, "sent": 0, "boots": 1}
    first.update(given)
    return [first[f] for f in telemetry.FIELDS]


def _slot(kept, name):
    return kept[telemetry.FIELDS.index(name)]


def _link():
    hal = Hal()
    hal.secrets["mqtt.json"] = json.dumps(CONF).encode()
    return Link(hal)


def _telemetry():
    link = _link()
    link.controller = Ctl()
    return telemetry.Telemetry(_kept(link))


def _hooked(**given):
    """The controller with the hooks on a `kept` of its own."""
    link, ctl = _link(), Ctl()
    link.controller = ctl
    kept = _kept(link, **given)
    ctl.emit, ctl.write = mqtthook.hooked(kept)
    return link, ctl, kept


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


def test_a_turns_attributes_are_kepts_slots_in_the_order_of_fields():
    link = _link()
    link.controller = Ctl()
    kept = _kept(link)
    for i, name in enumerate(telemetry.FIELDS):
        if name not in ("link", "again", "ticks_diff"):
            kept[i] = 1000 + i
    t = telemetry.Telemetry(kept)
    for i, name in enumerate(telemetry.FIELDS):
        assert getattr(t, name) is kept[i], name
        setattr(t, name, kept[i] if name in ("link", "again", "ticks_diff") else 2000 + i)
    t.store()
    assert len(kept) == len(telemetry.FIELDS)
    assert [kept[i] for i, name in enumerate(telemetry.FIELDS)
            if name not in ("link", "again", "ticks_diff")] == [
        2000 + i for i, name in enumerate(telemetry.FIELDS)
        if name not in ("link", "again", "ticks_diff")]


def test_a_fault_is_published_with_its_texts_and_no_tile():
    link, ctl, kept = _hooked()
    ctl.emit("fault", {"code": 10, "name": "lane_jam",
                       "detail": {"lane": 2, "tile": "5m", "x": {"tiles": ["1m"]}}})
    ctl.emit("fault", {"code": 20, "name": "missing_tile", "detail": {"tiles": ["5m"]}})
    ctl.emit("hand", {"tiles": ["1m"]})
    assert link.events == ["fault", "fault", "hand"]       # the link has every one
    assert [e[0] for e in _slot(kept, "events")] == ["fault", "fault"]
    ctl.write()                                            # their turn
    assert TURNS[-1] is kept and _slot(kept, "events") is None
    q = _slot(kept, "q")
    assert [m[0] for m in q] == ["fault", "fault"], q
    lane = json.loads(q[0][1])
    assert lane["detail"] == {"lane": 2} and lane["cause"] and lane["fix"]
    audit = json.loads(q[1][1])
    assert "detail" not in audit and audit["code"] == 20


def test_no_turn_comes_between_its_due_times_and_events():
    link, ctl, kept = _hooked(due=1000)
    n = len(TURNS)
    for now in range(0, 1000, 10):
        link.hal.now = now
        ctl.write()
    assert len(TURNS) == n and ctl.writes == 100
    link.hal.now = 1000
    ctl.write()                                            # due: a turn
    assert len(TURNS) == n + 1 and _slot(kept, "due") == FAR
    ctl.emit("state", {"state": "idle"})
    ctl.write()                                            # an event: a turn
    assert len(TURNS) == n + 2 and [m[0] for m in _slot(kept, "q")] == ["state"]


def test_the_hook_keeps_the_newest_events_and_counts_what_it_dropped():
    link, ctl, kept = _hooked()
    for i in range(15):
        ctl.emit("cleared", {"code": i})
    events = _slot(kept, "events")
    assert len(events) == 12 and _slot(kept, "dropped") == 3
    assert events[0][1]["code"] == 3 and len(link.events) == 15


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


def test_at_most_eight_messages_a_turn_and_the_next_turn_at_once_for_the_rest():
    t = _telemetry()
    t.next_health = FAR
    for i in range(11):
        t.put("x", str(i), False)
    sock = Sock()
    t.client = sock
    t.tick(0)
    assert len(_decode(sock.out)) == 8 and len(t.q) == 3 and t.due == 0
    t.tick(10)
    assert len(_decode(sock.out)) == 11 and t.q is None and t.due != 10


def test_a_full_socket_waits_a_drain_time_before_the_next_turn():
    t = _telemetry()
    t.next_health = FAR
    t.put("x", "1", False)
    t.client = Sock(room=0)
    t.tick(0)
    assert len(t.q) == 1 and t.client is not None and t.due == 100


def test_a_payload_beyond_ascii_is_counted_in_bytes():
    t = _telemetry()
    t.next_health = 1 << 29
    t.put("fault", '{"reason": "\u724c"}', False)
    sock = Sock()
    t.client = sock
    t.tick(0)
    assert _decode(sock.out) == [("parlour/hall/table/t1/fault",
                                  '{"reason": "\u724c"}'.encode(), False)]


def _started(hal):
    link, ctl = Link(hal), Ctl()
    link.controller = ctl
    _umqtt()
    telemetry.start(link, ctl, None, _again)
    return link, ctl


def test_the_telemetry_steps_aside_during_a_service_session_and_comes_back():
    """Its module forgotten after each turn; a turn at the session's first
    tick ends the connection and drops what waits; no turn until 10 s
    without a session."""
    hal = Hal()
    hal.secrets["mqtt.json"] = json.dumps(CONF).encode()
    link, ctl = _started(hal)
    assert "firmware.link.telemetry" not in sys.modules
    assert "firmware.link.mqtthook" not in sys.modules
    n = len(TURNS)
    ctl.emit("state", {"state": "idle"})
    assert link.events == ["state"]
    boot_write = ctl.write
    ctl.write()                                 # the hooks made again: no turn yet
    assert len(TURNS) == n and ctl.write is not boot_write
    assert "firmware.link.mqtthook" not in sys.modules
    hal.now = 10
    ctl.write()                                 # a turn: the state; health; a connect
    kept = TURNS[n]
    kept[telemetry.FIELDS.index("errors")] = 0  # whatever the connect met (no broker here)
    t = telemetry.Telemetry(kept)
    sock = Sock()
    t.client, t.next_health, t.next_try = sock, FAR, FAR
    t.put("x", "1", False)
    waiting = len(t.q)
    t.store()
    link.session_state = 1
    ctl.emit("state", {"state": "idle"})        # in the tick that opened it: the link's only
    ctl.write()                                 # the turn that steps aside
    assert ctl.writes == 3 and link.events == ["state", "state"]
    assert "firmware.link.telemetry" not in sys.modules
    assert sock.closed and sock.out == b"\xe0\x00"    # a DISCONNECT: no will
    assert _slot(kept, "client") is None and _slot(kept, "q") is None
    assert _slot(kept, "skipped") == waiting >= 2
    kept[telemetry.FIELDS.index("next_try")] = FAR      # no connect at the return
    n = len(TURNS)
    ctl.write()
    ctl.write()                                 # the session still open: the controller's write
    assert ctl.writes == 5 and len(TURNS) == n
    link.session_state = 0
    ctl.write()                                 # the session over: a quiet time first
    hal.now += 9990
    ctl.write()
    assert len(TURNS) == n
    link.session_state = 1                      # the technician's next command
    hal.now += 10
    ctl.write()
    link.session_state = 0
    hal.now += 10
    ctl.write()                                 # its end: the quiet time from now
    hal.now += 9990
    ctl.write()
    assert ctl.writes == 10 and len(TURNS) == n
    hal.now += 10
    ctl.write()                                 # 10 s without a session: the hooks made again
    assert ctl.writes == 11 and len(TURNS) == n
    ctl.write()                                 # then a turn: the health
    kept = TURNS[-1]
    assert ctl.writes == 12 and len(TURNS) == n + 1 and _slot(kept, "aside") is None
    assert [m[0] for m in _slot(kept, "q")] == ["counters", "health"]
    assert _slot(kept, "errors") == 0 and link.errors == 0


def test_settings_gone_during_the_session_leave_the_telemetry_off():
    hal = Hal()
    hal.secrets["mqtt.json"] = json.dumps(CONF).encode()
    link, ctl = Link(hal), Ctl()
    link.controller = ctl
    own_write, own_emit = ctl.write, link.emit
    _umqtt()
    telemetry.start(link, ctl, None, _again)
    assert ctl.write != own_write
    link.session_state = 1
    ctl.write()
    mqttconf.configure(hal, "mqtt.clear", True)
    link.session_state = 0
    ctl.write()
    hal.now += 10000
    ctl.write()                    # back: the hooks made again
    ctl.write()                    # the connect's turn finds no settings
    assert ctl.write == own_write and ctl.emit == own_emit and link.errors == 0
