"""The table's telemetry: what it does, published to the parlour's MQTT
broker with micropython-lib's umqtt.simple (frozen into the image).
docs/fleet.md gives the topics, the payloads and what the table does when
the broker fails.

Only when configured: the secret `mqtt.json` (hal.secret, NVS on a
production board, with the service key), written by `config_set` of the
keys `mqtt.*` in a service session (link/mqttconf.py). Without it
main.py never imports this module and the table runs exactly as without
telemetry.

The table first, always:
* publishing is bounded per tick: at most `_PER_TICK` messages, each
  written by two non-blocking writes (its header, its payload as queued)
  or not at all, and one read of at most 64 bytes
  (discarded: the table subscribes to nothing, so nothing the broker sends
  is parsed, and a malformed or hostile packet changes nothing);
* a connect is the one step that waits: at most `_TIMEOUT_MS` for the TCP
  connect and as much for the CONNACK, once per backoff (1 s, doubled per
  failure up to 64 s); the host must be an IPv4 address (no DNS lookup);
* memory is bounded: a queue of `_QUEUE` payloads that drops the oldest
  and counts what it dropped; the state, the build and `online` are sent
  again at every connect, so a dropped state comes back;
* any error on the socket closes it and counts it; nothing raises into
  the control loop (main.py calls `tick` and `event` inside its own
  guard too);
* a technician's visit and a hand coming back after a power cut are the
  heap's fullest times: the telemetry leaves the heap for them (`_aside`:
  its module forgotten, its counters held by link/aside.py's stand-in
  until 10 s after).

Only public facts: the state, a fault's code, name, cause and fix and its
scalar detail (none for the audit's faults, whose details may name tiles),
a hand's result, the counters, health and build. Nothing of the follower's
`hand` events, nothing that names a tile or a tag.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import gc
import json

from firmware import faults
from firmware.faults import AUDIT_FAULTS as _AUDIT_FAULTS
from firmware.hal import forget, ticks_diff

_QUEUE = const(12)             # payloads waiting; the oldest dropped beyond
_PER_TICK = const(2)           # messages written per tick at most
_BACKOFF_MIN = const(1000)
_BACKOFF_MAX = const(64000)
_TIMEOUT_MS = const(100)       # the TCP connect, then the CONNACK, each at most
_KEEPALIVE_S = const(30)       # told to the broker; a PINGREQ every half of it
_SILENT_MS = const(75000)      # nothing from the broker this long: the link is dead
_HEALTH_MS = const(5000)       # counters and health this often (offline within 10 s: docs/fleet.md)
_RESUMING = const(8)           # = the controller's (table.py): a hand coming back after a cut
_SECRET = const(("tile", "tiles", "uid"))
_HEALTH = const('{"uptime": %d, "heap_free": %d, "boots": %d, "link": {"errors": %d, '
                '"dropped": %d, "overruns": %d}, "mqtt": {"dropped": %d, "errors": %d, '
                '"refused": %d, "connects": %d, "sent": %d, "skipped": %d}}')


class Telemetry:
    def __init__(self, link, ctl, conf, kept):
        """`kept`: the link, the function that starts the telemetry
        (main._telemetry), then the counters (dropped, skipped, errors,
        refused, connects, sent, boots), of a telemetry that stepped aside
        (_aside), or of a boot."""
        hal = self.hal = link.hal
        self.link = link
        self.ctl = ctl
        self.conf = conf
        self.root = "parlour/%s/table/%s/" % (conf["site"], conf["table"])
        self.build = json.dumps({"fw": link.fw_version, "build": link.build}).encode()
        self.emit_link = link.emit
        self.ctl_write = ctl.write
        self.client = None
        self.q = []                # [leaf, payload, retain]
        # dropped: payloads the full queue pushed out; skipped: payloads a
        # step aside discarded (_aside); errors: connects failed,
        # sockets lost; refused: CONNACKs refusing (bad credentials, not
        # authorised); boots: the table's starts (the store's mqtt.boots).
        (_, self.again, self.dropped, self.skipped, self.errors, self.refused, self.connects,
         self.sent, self.boots) = kept
        self.state = None          # the last state's payload, sent again at each connect
        # A connect and counters and health at once (ticks_diff: the clock
        # may be days past its wrap after a visit).
        self.next_try = self.next_health = hal.ticks_ms()
        self.backoff = _BACKOFF_MIN
        self.last_rx = 0
        self.last_ping = 0
        self.rx = bytearray(64)

    # -- what the controller says ---------------------------------------------

    def event(self, name, fields):
        """The controller's emit: the link's first, then what is published."""
        self.emit_link(name, fields)
        if self.link.session_state:    # a visit opened in this tick: nothing published (_aside)
            return
        try:
            self._noted(name, fields)
        except Exception:          # MemoryError, a bug: the event is not published
            self.errors += 1

    def _noted(self, name, fields):
        ctl = self.ctl
        if name == "state":
            self._state()
        elif name == "fault":
            code = fields["code"]
            out = {"code": code, "name": fields["name"], "cause": faults.name_of(code, 1),
                   "fix": faults.name_of(code, 2),
                   "t": fields.get("t")}
            if code not in _AUDIT_FAULTS:
                out["detail"] = _public(fields.get("detail"))
            self.put("fault", json.dumps(out), False)     # the state "fault" came before it
        elif name == "cleared":
            self.put("cleared", json.dumps({"code": fields["code"], "t": fields.get("t")}), False)
        elif name == "result":
            w = fields["winner"]
            self.put("hand", json.dumps({"winner": w, "draw": w is None,
                                         "dealer": fields["dealer"],
                                         "wins_in_row": fields["wins_in_row"],
                                         "streak": fields["streak"], "hands": ctl.hands,
                                         "t": fields.get("t")}), False)

    def _state(self, send=True):
        ctl = self.ctl
        from firmware.controller.table import NAMES
        self.state = json.dumps({"state": NAMES[ctl.state], "fault": ctl.fault or None,
                                 "t": self.hal.ticks_ms()}).encode()
        if send:
            self.put("state", self.state, True)

    def put(self, leaf, payload, retain):
        """Queued as bytes: a str's length counts characters, the header
        needs bytes."""
        if type(payload) is str:
            payload = payload.encode()
        q = self.q
        if len(q) >= _QUEUE:
            q.pop(0)
            self.dropped += 1
        q.append((leaf, payload, retain))

    # -- the loop's share ------------------------------------------------------

    def write(self, more=0):
        """The controller's write, then the telemetry's tick: once per
        control tick, after the step (main.py's loop)."""
        self.ctl_write(more)
        self.tick(self.hal.ticks_ms())

    def tick(self, now):
        try:
            # A visit, or a hand coming back after a power cut (at the
            # boot): the heap's fullest times; the telemetry leaves it.
            if self.link.session_state or self.ctl.state == _RESUMING:
                self._aside()
                return
            if ticks_diff(now, self.next_health) >= 0:
                self.next_health = now + _HEALTH_MS
                self._health(now)
            if self.client is None:
                if ticks_diff(now, self.next_try) >= 0:
                    self._connect(now)
                return
            self._io(now)
        except Exception:          # OSError, a bug: the link is dropped, tried again later
            self._lost(now)

    def _aside(self):
        """A technician's visit, or a hand coming back after a power cut,
        is the heap's fullest time: the telemetry leaves it. Its
        connection ends with a DISCONNECT (no last-will: the table is not
        offline), what waits is dropped and counted (skipped), the
        controller's emit is its own again and its write link/aside.py's
        stand-in, which holds the counters and starts the telemetry again
        10 s after; and this module is forgotten: nothing of it stays in
        the heap."""
        sock = self.client
        if sock is not None:
            self.client = None
            try:
                sock.write(b"\xe0\0")
                sock.close()
            except Exception:
                pass
        ctl = self.ctl
        ctl.emit = self.emit_link
        from firmware.link import aside
        ctl.write = aside.waiting((self.link, self.again, self.dropped,
                                   self.skipped + len(self.q), self.errors, self.refused,
                                   self.connects, self.sent, self.boots))
        forget("firmware.link.aside")
        forget("firmware.link.telemetry")

    def _health(self, now):
        ctl = self.ctl
        by_code = []
        for code in range(len(ctl.fault_counts)):
            if ctl.fault_counts[code]:
                by_code.append([code, ctl.fault_counts[code]])
        self.put("counters", json.dumps({"cycles": ctl.cycles, "hands": ctl.hands,
                                         "lifts": ctl.lifts, "tiles_fed": list(ctl.tiles_fed),
                                         "faults": by_code}), True)
        link = self.link
        # Formatted, not json.dumps of nested dicts: one string, no dict.
        self.put("health", _HEALTH % (now, gc.mem_free(), self.boots, link.errors, link.dropped,
                                      link.overruns, self.dropped, self.errors, self.refused,
                                      self.connects, self.sent, self.skipped), True)

    def _connect(self, now):
        conf = self.conf
        self.next_try = now + self.backoff
        self.backoff = min(self.backoff * 2, _BACKOFF_MAX)
        try:
            from firmware.hal import wifi      # the board's (hal/wifi.py)
        except ImportError:                    # the twin: the host's network, no TLS
            wifi = None
        # Needed for this connect only. Its dotted name spelled here is one
        # of the image's: the twin's failed import interns none at run time.
        forget("firmware.hal.wifi")
        if wifi is not None and not wifi.up(conf):
            return
        mq = _umqtt()
        c = mq.MQTTClient(self.root[:-1].replace("/", "-"), conf["host"], conf.get("port", 1883),
                       conf["user"], conf["password"], _KEEPALIVE_S,
                       wifi.tls(self.hal, conf) if wifi is not None else None)
        c.set_last_will(self.root + "online", b"false", True)
        try:
            c.connect(True, _TIMEOUT_MS / 1000)
        except mq.MQTTException:
            self.refused += 1
            _close(c)
            return
        except Exception:
            self.errors += 1
            _close(c)
            return
        c.sock.setblocking(False)
        self.client = c.sock       # the client's strings and dict go: only its socket is kept
        self.connects += 1
        self.backoff = _BACKOFF_MIN
        self.last_rx = self.last_ping = now
        # What a subscriber must always find, first: online, the build, the state.
        self._state(False)         # now's: a visit may have changed it unpublished
        q = self.q
        q.insert(0, ("online", b"true", True))
        q.insert(1, ("build", self.build, True))
        q.insert(2, ("state", self.state, True))

    def _io(self, now):
        sock = self.client
        if sock is None:
            return
        n = sock.readinto(self.rx)
        if n == 0:                 # the broker closed it
            raise OSError(0)
        if n:
            self.last_rx = now
        elif ticks_diff(now, self.last_rx) > _SILENT_MS:
            raise OSError(1)
        if ticks_diff(now, self.last_ping) >= _KEEPALIVE_S * 500:
            if sock.write(b"\xc0\0") == 2:
                self.last_ping = now
        q = self.q
        for _ in range(_PER_TICK):
            if not q:
                return
            leaf, payload, retain = q[0]
            head = _head(self.root + leaf, len(payload), retain)
            n = sock.write(head)
            if not n:              # the socket's buffer is full: the broker is slow
                return
            # The payload as it is, no copy; half a packet on the wire
            # breaks the stream: the link is dropped and made again.
            if n != len(head) or sock.write(payload) != len(payload):
                raise OSError(2)
            q.pop(0)
            self.sent += 1

    def _lost(self, now):
        self.errors += 1
        if self.client is not None:
            try:
                self.client.close()
            except Exception:
                pass
            self.client = None
        self.next_try = now + self.backoff
        self.backoff = min(self.backoff * 2, _BACKOFF_MAX)


def _umqtt():
    """micropython-lib's umqtt.simple for a connect, its module forgotten
    at once: the client holds what it needs, and the module would stay in
    the heap for good (864 B on the twin). Imported as `from umqtt import
    simple`: the name `simple` is then one of the image's, and forgetting
    the module interns no name at run time (a name interned at run time
    may cost a new pool of names: 311 B on the twin, docs/heap-idioms.md)."""
    from umqtt import simple  # pyright: ignore[reportMissingImports]
    forget("umqtt.simple")
    forget("umqtt")
    return simple


def _close(c):
    try:
        if c.sock is not None:
            c.sock.close()
    except Exception:
        pass


def _head(topic, size, retain):
    """A PUBLISH's (QoS 0) fixed header and topic, for a payload of `size`
    bytes (the topic is ASCII: config_set checks site and table)."""
    t = topic.encode()
    size += 2 + len(t)
    head = bytearray(7 + len(t))
    head[0] = 0x30 | (1 if retain else 0)
    i = 1
    while size > 0x7F:
        head[i] = (size & 0x7F) | 0x80
        size >>= 7
        i += 1
    head[i] = size
    head[i + 1] = len(t) >> 8
    head[i + 2] = len(t) & 0xFF
    head[i + 3:i + 3 + len(t)] = t
    return memoryview(head)[:i + 3 + len(t)]


def _public(detail):
    """A fault's detail, its scalar members only, none that names a tile."""
    out = {}
    if type(detail) is dict:
        for k in detail:
            v = detail[k]
            if k not in _SECRET and (v is None or type(v) in (int, str, bool)):
                out[k] = v
    return out


def start(link, ctl, kept, again):
    """The telemetry hooked into the controller when the table holds
    valid settings (the secret `mqtt.json`), else nothing. `kept`: the
    counters of a telemetry that stepped aside for a visit (aside.py);
    None at the boot, which is counted in the store (`mqtt.boots`).
    `again`: what starts it again after it stepped aside (main's
    `_telemetry`). Never raises: a bug is counted in the link's errors
    (status), the table plays on without it."""
    try:
        with link.hal.secret("mqtt.json") as f:
            conf = json.load(f)
        for k in ("host", "site", "table", "user", "password"):
            if type(conf.get(k)) is not str or not conf[k]:
                return
        if kept is None:
            kept = (link, again, 0, 0, 0, 0, 0, 0, _boot(link.hal.store + "mqtt.boots"))
            # The module tables (sys.modules, the packages' names) grown
            # now, at the boot, for the most the telemetry imports at once
            # (this module, umqtt and umqtt.simple at a connect): grown at
            # the first connect, a table would land in the middle of the
            # free heap and split it (main._grow_module_tables).
            _umqtt()
        t = Telemetry(link, ctl, conf, kept)
        # Hooked where the controller already calls out, so that the loop
        # (main.py) is the same with the telemetry off: its events, and
        # the write the loop calls once per tick, after the step.
        ctl.emit = t.event     # the follower keeps the link's: its hand events are not published
        ctl.write = t.write
        gc.collect()
    except (OSError, ValueError):  # no settings, or not JSON: off
        pass
    except Exception:          # MemoryError, a bug: the table plays on without it
        link.errors += 1


def _boot(path):
    """The boots counted in the store, this one too."""
    boots = 0
    try:
        with open(path) as f:
            boots = int(f.read())
    except (OSError, ValueError):
        pass
    boots += 1
    try:
        with open(path, "w") as f:
            f.write(str(boots))
    except OSError:
        pass
    return boots
