"""The table's telemetry: what it does, published to the parlour's MQTT
broker with micropython-lib's umqtt.simple (frozen into the image).
docs/fleet.md gives the topics, the payloads and what the table does when
the broker fails.

Only when configured: the secret `mqtt.json` (hal.secret, NVS on a
production board, with the service key), written by `config_set` of the
keys `mqtt.*` in a service session (link/mqttconf.py). Without it
main.py never imports this module and the table runs exactly as without
telemetry.

This module is not resident: the controller's emit and write are hooked
by link/mqtthook.py, which keeps the telemetry's state (`kept`, in the
order of `FIELDS`) and imports this module for a turn when there is
something to do, then it is forgotten (docs/heap-idioms.md, 16). A turn
publishes the events the hook queued, the counters and health when due,
connects when due, and writes what waits.

The table first, always:
* publishing is bounded per turn: at most `_PER_TURN` messages, each
  written by two non-blocking writes (its header, its payload as queued)
  or not at all, and one read of at most 16 bytes (discarded: the table
  subscribes to nothing, so nothing the broker sends is parsed, and a
  malformed or hostile packet changes nothing);
* a connect is the one step that waits: at most `_TIMEOUT_MS` for the TCP
  connect and as much for the CONNACK, once per backoff (1 s, doubled per
  failure up to 64 s); the host must be an IPv4 address (no DNS lookup);
* memory is bounded: a queue of `_QUEUE` payloads that drops the oldest
  and counts what it dropped; the state, the build and `online` are sent
  again at every connect, so a dropped state comes back;
* any error on the socket closes it and counts it; nothing raises into
  the control loop (main.py calls the hooks inside its own guard too);
* a technician's visit and a hand coming back after a power cut are the
  heap's fullest times: a turn steps aside then (the connection ended,
  what waits dropped and counted as skipped), and none comes until 10 s
  after (mqtthook.py).

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

_QUEUE = const(12)             # payloads waiting; the oldest dropped beyond (= mqtthook's)
_PER_TURN = const(8)           # messages written per turn at most: a connect's five and an event or three
_DRAIN_MS = const(100)         # the socket full: the next try at what waits
_BACKOFF_MIN = const(1000)
_BACKOFF_MAX = const(64000)
_TIMEOUT_MS = const(100)       # the TCP connect, then the CONNACK, each at most
_KEEPALIVE_S = const(30)       # told to the broker; a PINGREQ every half of it
_SILENT_MS = const(75000)      # nothing from the broker this long: the link is dead
_HEALTH_MS = const(5000)       # counters and health this often (offline within 10 s: docs/fleet.md)
_RESUMING = const(8)           # = the controller's (table.py): a hand coming back after a cut
_KEYS = const(("host", "site", "table", "user", "password"))
_SECRET = const(("tile", "tiles", "uid"))
_HEALTH = const('{"uptime": %d, "heap_free": %d, "boots": %d, "link": {"errors": %d, '
                '"dropped": %d, "overruns": %d}, "mqtt": {"dropped": %d, "errors": %d, '
                '"refused": %d, "connects": %d, "sent": %d, "skipped": %d}}')

# `kept`, the state between turns, slot by slot (the first six are
# mqtthook.py's too). dropped: payloads and events a full queue pushed out;
# skipped: what a step aside discarded; errors: connects failed, sockets
# lost, settings unreadable; refused: CONNACKs refusing (bad credentials,
# not authorised); boots: the table's starts (the store's mqtt.boots).
FIELDS = ("link", "again", "events", "due", "aside", "dropped", "placed", "spare", "client",
          "ticks_diff", "q", "next_try", "next_health", "backoff", "last_rx", "last_ping",
          "skipped", "errors", "refused", "connects", "sent", "boots")


class Telemetry:
    """One turn's telemetry: `kept`'s slots as attributes, written back
    by `store`."""

    def __init__(self, kept):
        self.kept = kept
        (self.link, self.again, self.events, self.due, self.aside, self.dropped, self.placed,
         self.spare, self.client, self.ticks_diff, self.q, self.next_try, self.next_health,
         self.backoff, self.last_rx, self.last_ping, self.skipped, self.errors, self.refused,
         self.connects, self.sent, self.boots) = kept          # in the order of FIELDS
        self.ctl = self.link.controller
        self.hal = self.link.hal
        self.root = None           # the topics' root, from the settings when a turn sends

    def store(self):
        self.kept[:] = (self.link, self.again, self.events, self.due, self.aside, self.dropped,
                        self.placed, self.spare, self.client, self.ticks_diff, self.q,
                        self.next_try, self.next_health, self.backoff, self.last_rx,
                        self.last_ping, self.skipped, self.errors, self.refused, self.connects,
                        self.sent, self.boots)

    def turn(self, now):
        """What is due now; `kept` holds the outcome, even on an error."""
        try:
            if self.link.session_state or self.ctl.state == _RESUMING:
                self._aside(now)
                return
            events = self.events
            self.events = None
            for name, fields in events or ():
                try:
                    self._noted(name, fields)
                except Exception:  # MemoryError, a bug: the event is not published
                    self.errors += 1
            self.tick(now)
        finally:
            self.store()

    # -- what the controller said ---------------------------------------------

    def _noted(self, name, fields):
        ctl = self.ctl
        if name == "state":
            self._state(fields["state"])
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

    def _state(self, name=None, front=False):
        """The state (`name`, or the controller's now), retained: at the
        queue's end, or at its front (`front`, a connect's)."""
        ctl = self.ctl
        if name is None:
            from firmware.controller.table import NAMES
            name = NAMES[ctl.state]
        payload = json.dumps({"state": name, "fault": ctl.fault or None,
                              "t": self.hal.ticks_ms()}).encode()
        if front:
            self._front(("state", payload, True))
        else:
            self.put("state", payload, True)

    def put(self, leaf, payload, retain):
        """Queued as bytes: a str's length counts characters, the header
        needs bytes."""
        if type(payload) is str:
            payload = payload.encode()
        q = self.q
        if q is None:
            q = self.q = []
        elif len(q) >= _QUEUE:
            del q[0]
            self.dropped += 1
        q.append((leaf, payload, retain))

    def _front(self, message):
        if self.q is None:
            self.q = []
        self.q.insert(0, message)

    # -- the turn's work -------------------------------------------------------

    def tick(self, now):
        """The counters and health when due, a connect when due, what waits
        written; then when the next turn is due."""
        sent = self.sent
        try:
            if ticks_diff(now, self.next_health) >= 0:
                self.next_health = now + _HEALTH_MS
                self._health(now)
            if self.client is None and ticks_diff(now, self.next_try) >= 0:
                self._connect(now)
            if self.client is not None:
                self._io(now)
        except Exception:          # OSError, a bug: the link is dropped, tried again later
            self._lost(now)
        due = self.next_health
        if self.client is None:
            due = _sooner(now, due, self.next_try)
        else:
            due = _sooner(now, due, self.last_ping + _KEEPALIVE_S * 500)
            if self.q:             # more than a turn's share, or the socket full
                due = now if self.sent != sent else now + _DRAIN_MS
        self.due = due

    def _aside(self, now):
        """A technician's visit, or a hand coming back after a power cut:
        the connection ends with a DISCONNECT (no last-will: the table is
        not offline), what waits is dropped and counted (skipped), and the
        next connect and health come at once when the hook calls again."""
        sock = self.client
        if sock is not None:
            self.client = None
            try:
                sock.write(b"\xe0\0")
                sock.close()
            except Exception:
                pass
        self.skipped += len(self.q or ()) + len(self.events or ())
        self.q = self.events = None
        # The hooks leave too but for the write's, which brings the
        # telemetry back (mqtthook._place makes them again then).
        self.ctl.emit = self.link.emit
        self.placed = False
        self.next_try = self.next_health = now
        self.backoff = _BACKOFF_MIN

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
        self.next_try = now + self.backoff
        self.backoff = min(self.backoff * 2, _BACKOFF_MAX)
        # The settings are read again at each connect: held, their dict
        # and strings would cost the heap 272 B for good, and a change made
        # in a visit applies from the next connect.
        conf = _settings(self.hal)
        if conf is None:           # gone or damaged: the telemetry is off
            self._off()
            return
        self.root = _root(conf)
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
        # The socket the connect makes is kept while connected: it takes
        # the room the hooks kept for it where the heap had room (`spare`,
        # mqtthook._place), not the first free block after this turn's
        # modules, in the middle of the largest.
        self.spare = None
        self.store()               # `kept` lets go of the room too
        gc.collect()
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
        # What a subscriber must always find, first: online, the build, the
        # state (now's: a visit may have changed it unpublished).
        self._state(None, True)
        self._front(("build", json.dumps({"fw": self.link.fw_version,
                                          "build": self.link.build}).encode(), True))
        self._front(("online", b"true", True))

    def _off(self):
        """The settings gone (a visit deleted or damaged them): the
        controller's emit and write are its own again; the hooks, `kept`
        and its queues become garbage."""
        ctl = self.ctl
        ctl.emit = self.link.emit
        del ctl.write              # the class's again (the slot stays)
        self._lost(self.hal.ticks_ms())    # counted, and a socket closed
        self.q = self.events = None

    def _io(self, now):
        sock = self.client
        if sock is None:
            return
        if self.root is None:
            conf = _settings(self.hal)
            if conf is None:
                self._off()
                return
            self.root = _root(conf)
        n = sock.readinto(bytearray(16))
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
        for _ in range(_PER_TURN):
            if not q:
                self.q = None      # nothing waits: no list kept
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
            del q[0]
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


def _sooner(now, a, b):
    return a if ticks_diff(a, now) <= ticks_diff(b, now) else b


def _settings(hal):
    """The settings as stored, or None when absent, not JSON or short of a key."""
    try:
        with hal.secret("mqtt.json") as f:
            conf = json.load(f)
    except (OSError, ValueError):
        return None
    for k in _KEYS:
        if type(conf.get(k)) is not str or not conf[k]:
            return None
    return conf


def _root(conf):
    return "parlour/%s/table/%s/" % (conf["site"], conf["table"])


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
    """main._telemetry's call. `kept` None (the boot): the telemetry
    hooked into the controller when the table holds valid settings (the
    secret `mqtt.json`), else nothing; `again`: what the hooks call for a
    turn (main's `_telemetry`). Else a turn (mqtthook.py). Never raises: a
    bug is counted in the link's errors (status), the table plays on
    without it. This module is forgotten after each call."""
    try:
        if kept is not None:
            Telemetry(kept).turn(link.hal.ticks_ms())
        else:
            _hook(link, ctl, again)
    except Exception:          # MemoryError, a bug: the table plays on
        link.errors += 1
    forget("firmware.link.telemetry")


def _hook(link, ctl, again):
    conf = _settings(link.hal)
    if conf is None:
        return
    now = link.hal.ticks_ms()
    first = {"link": link, "again": again, "events": None, "due": now, "aside": None,
             "dropped": 0, "placed": False, "spare": None, "client": None,
             "ticks_diff": ticks_diff, "q": None, "next_try": now, "next_health": now,
             "backoff": _BACKOFF_MIN, "last_rx": 0, "last_ping": 0, "skipped": 0, "errors": 0,
             "refused": 0, "connects": 0, "sent": 0,
             "boots": _boot(link.hal.store + "mqtt.boots")}
    kept = [first[f] for f in FIELDS]
    # This module first out of the link package's names (start forgets it
    # anyway), so that mqtthook takes its slot: both at once, the
    # package's table would grow, at the boot's end, in the middle of the
    # free heap.
    forget("firmware.link.telemetry")
    from firmware.link import mqtthook
    forget("firmware.link.mqtthook")   # its closures hold what they need
    # Hooked where the controller already calls out, so that the loop
    # (main.py) is the same with the telemetry off: its events, and the
    # write the loop calls once per tick, after the step.
    ctl.emit, ctl.write = mqtthook.hooked(kept)   # the follower keeps the link's emit
    gc.collect()


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
