"""The table's telemetry: what it does, published to the parlour's MQTT
broker with micropython-lib's umqtt.simple (frozen into the image).
docs/fleet.md gives the topics, the payloads and what the table does when
the broker fails.

Only when configured: the secret `mqtt.json` (hal.secret, NVS on a
production board, with the service key), written by `config_set` of the
keys `mqtt.*` in a service session (link/mqttconf.py). Without it
main.py never imports this module and the table runs exactly as without
telemetry.

One object, made at the boot when the settings are there
(`Telemetry.configured`): the controller tells it each of its events
(TableController.observer, `event`), and the control loop gives it a turn
after each step (`poll`, main.py). A turn publishes the events queued,
the counters and health when due, connects when due, and writes what
waits; between turns a tick compares two numbers and allocates nothing.

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
  heap's fullest times: the telemetry steps aside then (the connection
  ended, what waits dropped and counted as skipped, no event queued), and
  comes back 10 s after the last of them (a visit is often several
  sessions, one per command).

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

from firmware.controller.states import NAMES, RESUMING
from firmware.hal import ticks_diff
from firmware.link import mqttconf, published

try:
    from umqtt import simple as umqtt  # pyright: ignore[reportMissingImports]  (frozen: manifest.py)
except ImportError:  # CPython (host-side tests give their own)
    umqtt = None
try:
    from firmware.hal import wifi      # the board's network (hal/wifi.py)
except ImportError:                    # the twin: the host's network, no TLS
    wifi = None

_QUEUE = const(12)             # payloads waiting, and events; the oldest dropped beyond
_PER_TURN = const(8)           # messages written per turn at most: a connect's five and an event or three
_DRAIN_MS = const(100)         # the socket full: the next try at what waits
_BACKOFF_MIN = const(1000)
_BACKOFF_MAX = const(64000)
_TIMEOUT_MS = const(100)       # the TCP connect, then the CONNACK, each at most
_KEEPALIVE_S = const(30)       # told to the broker; a PINGREQ every half of it
_SILENT_MS = const(75000)      # nothing from the broker this long: the link is dead
_HEALTH_MS = const(5000)       # counters and health this often (offline within 10 s: docs/fleet.md)
_QUIET_MS = const(10000)       # back this long after the last session or resume

class Telemetry:
    """The telemetry of one table, resident while it is on."""

    # Counters: dropped, payloads and events a full queue pushed out;
    # skipped, what a step aside discarded; errors, connects failed,
    # sockets lost, settings unreadable; refused, CONNACKs refusing (bad
    # credentials, not authorised); boots, the table's starts (the
    # store's mqtt.boots).

    def __init__(self, link, ctl, now, boots):
        self.link = link
        self.ctl = ctl
        self.hal = link.hal
        self.on = True             # False once the settings are gone
        self.events = []           # (name, fields) of the controller's, for the next turn
        self.q = []                # (leaf, payload, retain) to publish
        self.client = None         # the broker's socket while connected
        self.root = None           # the topics' root, from the settings at a connect
        self.due = now             # the next turn, events or not
        self.aside = None          # None; -1: aside now; else quiet since (ticks)
        self.next_try = now
        self.next_health = now
        self.backoff = _BACKOFF_MIN
        self.last_rx = 0
        self.last_ping = 0
        self.dropped = 0
        self.skipped = 0
        self.errors = 0
        self.refused = 0
        self.connects = 0
        self.sent = 0
        self.boots = boots

    @staticmethod
    def configured(link, ctl):
        """The telemetry when the table holds valid settings (the secret
        `mqtt.json`), else None."""
        if mqttconf.settings(link.hal) is None:
            return None
        return Telemetry(link, ctl, link.hal.ticks_ms(), _boot(link.hal.store + "mqtt.boots"))

    def event(self, name, fields):
        """One of the controller's events (its observer's call), queued
        for the next turn if it is published; `fields` is the dict the
        link sent, with its time."""
        if not self.on or self.aside is not None or self.link.session_state:
            return
        if name in published.EVENTS:
            events = self.events
            if len(events) >= _QUEUE:
                del events[0]
                self.dropped += 1
            events.append((name, fields))

    def poll(self, now):
        """The control loop's call after each step: a turn when one is
        due, stepping aside for a visit or a resume. Never raises: a bug
        is counted in the link's errors (status), the table plays on."""
        if not self.on:
            return
        try:
            if self.link.session_state or self.ctl.state == RESUMING:
                if self.aside is None:
                    self._aside(now)
                self.aside = -1
                return
            if self.aside is not None:
                if self.aside < 0:
                    self.aside = now
                if ticks_diff(now, self.aside) < _QUIET_MS:
                    return
                self.aside = None
                self.due = now                 # back: a connect at once
            if self.events or ticks_diff(now, self.due) >= 0:
                self.turn(now)
        except Exception:          # MemoryError, a bug: the table plays on
            self.link.errors += 1

    def turn(self, now):
        """The events queued published, then what is due now."""
        events = self.events
        while events:
            name, fields = events.pop(0)
            try:
                self._noted(name, fields)
            except Exception:      # MemoryError, a bug: the event is not published
                self.errors += 1
        self.tick(now)

    # -- what the controller said ---------------------------------------------

    def _noted(self, name, fields):
        if name == "state":
            self._state(fields["state"])
        else:                          # the state "fault" came before a fault
            self.put(*published.of_event(name, fields, self.ctl.hands))

    def _state(self, name=None, front=False):
        """The state (`name`, or the controller's now), retained: at the
        queue's end, or at its front (`front`, a connect's)."""
        ctl = self.ctl
        if name is None:
            name = NAMES[ctl.state]
        payload = published.state(name, ctl.fault, self.hal.ticks_ms())
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
        if len(q) >= _QUEUE:
            del q[0]
            self.dropped += 1
        q.append((leaf, payload, retain))

    def _front(self, message):
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
        next connect and health come at once when it is back."""
        sock = self.client
        if sock is not None:
            self.client = None
            try:
                sock.write(b"\xe0\0")
                sock.close()
            except Exception:
                pass
        self.skipped += len(self.q) + len(self.events)
        self.q = []
        self.events = []
        self.next_try = self.next_health = now
        self.backoff = _BACKOFF_MIN

    def _health(self, now):
        self.put("counters", published.counters(self.ctl), True)
        self.put("health", published.health(now, self.link, self), True)

    def _connect(self, now):
        self.next_try = now + self.backoff
        self.backoff = min(self.backoff * 2, _BACKOFF_MAX)
        # The settings are read again at each connect: held, their dict
        # and strings would cost the heap 272 B for good, and a change made
        # in a visit applies from the next connect.
        conf = mqttconf.settings(self.hal)
        if conf is None:           # gone or damaged: the telemetry is off
            self._off()
            return
        self.root = mqttconf.root(conf)
        mqtt = umqtt
        if mqtt is None:           # CPython without a test's stand-in
            self._off()
            return
        if wifi is not None and not wifi.up(conf):
            return
        # The client id is not the table's identity: the parlour's broker
        # replaces it with the user's name (docs/fleet.md, The broker), so
        # only this table's password can take this table's connection.
        c = mqtt.MQTTClient(self.root[:-1].replace("/", "-"), conf["host"], conf.get("port", 1883),
                          conf["user"], conf["password"], _KEEPALIVE_S,
                          wifi.tls(self.hal, conf) if wifi is not None else None)
        c.set_last_will(self.root + "online", b"false", True)
        try:
            c.connect(True, _TIMEOUT_MS / 1000)
        except mqtt.MQTTException:
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
        self._front(("build", published.build(self.link.fw_version, self.link.build), True))
        self._front(("online", b"true", True))

    def _off(self):
        """The settings gone (a visit deleted or damaged them): the
        telemetry off until the next boot, what waits dropped."""
        self._lost(self.hal.ticks_ms())    # counted, and a socket closed
        self.on = False            # `event` and `poll` do nothing from now on
        self.q = []
        self.events = []

    def _io(self, now):
        sock = self.client
        if sock is None:
            return
        if self.root is None:
            conf = mqttconf.settings(self.hal)
            if conf is None:
                self._off()
                return
            self.root = mqttconf.root(conf)
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
