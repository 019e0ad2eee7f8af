"""The telemetry's parts without a broker (firmware/link/telemetry.py): the
PUBLISH packets it writes, its config's checks (link/mqttconf.py), the
public filter on a fault's detail, the bounded queue, what it does with a
slow, closing or babbling broker, and how it steps aside for a service
session and comes back. Runs under CPython and MicroPython; the twin
against a real broker is hw_tests/test_telemetry.py."""

import io
import json

from firmware.link import mqttconf, published, telemetry


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
    """The controller's part: its counters, and its emit as
    TableController's: the link's first, then its observer's."""
    state = 0
    fault = 0
    hands = 3
    cycles = 4
    lifts = 5
    tiles_fed = [1, 2, 3, 4]
    fault_counts = [0] * 60

    def __init__(self, link):
        self.link = link
        self.observer = None

    def emit(self, name, fields):
        self.link.emit(name, fields)
        if self.observer is not None:
            self.observer.event(name, fields)


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


class _Gc:
    """CPython's gc has no mem_free (the health's free heap): 0 here."""
    collect = staticmethod(published.gc.collect)

    @staticmethod
    def mem_free():
        return 0


if not hasattr(published.gc, "mem_free"):
    published.gc = _Gc()


FAR = 1 << 28                  # within half the ticks period (2**30) of any now here


def _link():
    hal = Hal()
    hal.secrets["mqtt.json"] = json.dumps(CONF).encode()
    return Link(hal)


def _telemetry(**given):
    """A telemetry watching a controller, as main.py makes it, nothing due
    for FAR ms; `given`: attributes set after."""
    link = _link()
    ctl = link.controller = Ctl(link)
    t = telemetry.Telemetry.configured(link, ctl)
    t.due = t.next_try = t.next_health = FAR
    for k in given:
        setattr(t, k, given[k])
    ctl.observer = t
    return t


def _turns(t):
    """The times of t's turns from now on, in a list."""
    times = []
    turn = t.turn

    def counted(now):
        times.append(now)
        turn(now)

    t.turn = counted
    return times


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


def test_the_telemetry_is_made_only_where_the_table_holds_its_settings():
    link = Link()
    ctl = link.controller = Ctl(link)
    assert telemetry.Telemetry.configured(link, ctl) is None
    link.hal.secrets["mqtt.json"] = json.dumps(dict(CONF, user="")).encode()
    assert telemetry.Telemetry.configured(link, ctl) is None      # a key short
    link.hal.secrets["mqtt.json"] = json.dumps(CONF).encode()
    t = telemetry.Telemetry.configured(link, ctl)
    assert t is not None and t.on and t.boots == 1 and not t.q and not t.events


def test_a_fault_is_published_with_its_texts_and_no_tile():
    t = _telemetry()
    ctl, link = t.ctl, t.link
    ctl.emit("fault", {"code": 10, "name": "lane_jam",
                       "detail": {"lane": 2, "tile": "5m", "x": {"tiles": ["1m"]}}})
    ctl.emit("fault", {"code": 20, "name": "missing_tile", "detail": {"tiles": ["5m"]}})
    ctl.emit("hand", {"tiles": ["1m"]})
    assert link.events == ["fault", "fault", "hand"]       # the link has every one
    assert [e[0] for e in t.events] == ["fault", "fault"]
    turns = _turns(t)
    t.poll(0)                                              # their turn
    assert turns == [0] and not t.events
    q = t.q
    assert [m[0] for m in q] == ["fault", "fault"], q
    lane = json.loads(q[0][1])
    assert lane["detail"] == {"lane": 2} and lane["cause"] and lane["fix"]
    audit = json.loads(q[1][1])
    assert "detail" not in audit and audit["code"] == 20


def test_no_turn_comes_between_its_due_times_and_events():
    t = _telemetry(due=1000)
    turns = _turns(t)
    for now in range(0, 1000, 10):
        t.poll(now)
    assert turns == []
    t.poll(1000)                                           # due: a turn
    assert turns == [1000] and t.due == FAR
    t.ctl.emit("state", {"state": "idle"})
    t.poll(1010)                                           # an event: a turn
    assert turns == [1000, 1010] and [m[0] for m in t.q] == ["state"]


def test_the_events_kept_are_the_newest_and_what_was_dropped_is_counted():
    t = _telemetry()
    for i in range(15):
        t.ctl.emit("cleared", {"code": i})
    assert len(t.events) == 12 and t.dropped == 3
    assert t.events[0][1]["code"] == 3 and len(t.link.events) == 15


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
    assert len(_decode(sock.out)) == 11 and not t.q and t.due != 10


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


def test_the_telemetry_steps_aside_during_a_service_session_and_comes_back():
    """At the session's first tick the connection ends and what waits is
    dropped; no event is queued and no turn comes until 10 s without a
    session."""
    t = _telemetry()
    link, ctl = t.link, t.ctl
    sock = t.client = Sock()
    t.put("x", "1", False)
    ctl.emit("state", {"state": "idle"})
    waiting = len(t.q) + len(t.events)
    turns = _turns(t)
    link.session_state = 1
    ctl.emit("state", {"state": "idle"})        # in the tick that opened it: the link's only
    assert link.events == ["state", "state"] and waiting == 2
    t.poll(10)                                  # steps aside
    assert sock.closed and sock.out == b"\xe0\x00"    # a DISCONNECT: no will
    assert t.client is None and not t.q and not t.events and t.skipped == waiting
    t.next_try = FAR                            # no connect at the return
    t.poll(20)
    t.poll(30)                                  # the session still open
    link.session_state = 0
    ctl.emit("state", {"state": "idle"})        # stepped aside: the link's only
    assert not t.events and len(link.events) == 3
    t.poll(40)                                  # the session over: a quiet time first
    t.poll(40 + 9990)
    assert turns == []
    link.session_state = 1                      # the technician's next command
    t.poll(40 + 10000)
    link.session_state = 0
    t.poll(40 + 10010)                          # its end: the quiet time from now
    t.poll(40 + 20000)
    assert turns == []
    t.poll(40 + 20010)                          # 10 s without a session: back, a turn at once
    assert turns == [40 + 20010] and t.aside is None
    assert [m[0] for m in t.q] == ["counters", "health"]
    assert t.errors == 0 and link.errors == 0
    ctl.emit("state", {"state": "idle"})
    assert [e[0] for e in t.events] == ["state"]


def test_settings_gone_during_the_session_leave_the_telemetry_off():
    t = _telemetry()
    link, ctl = t.link, t.ctl
    link.session_state = 1
    t.poll(0)
    mqttconf.configure(link.hal, "mqtt.clear", True)
    link.session_state = 0
    t.poll(10)
    t.poll(10 + 10000)             # back: the connect's turn finds no settings
    assert not t.on and link.errors == 0
    ctl.emit("state", {"state": "idle"})
    assert link.events == ["state"] and not t.events
    turns = _turns(t)
    t.poll(10 + 20000)
    assert turns == []
