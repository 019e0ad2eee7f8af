"""The controller's side of the link: requests in, responses and events out.

Requests are parsed from a preallocated FrameReader; answers and events are
written by the codec straight into one preallocated frame buffer. A frame
the host cannot take now (no host attached) is dropped and counted: the
control loop never waits for the host.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import gc
import os
import sys
from array import array

from firmware import faults
from firmware.faults import AUDIT_FAULTS as _AUDIT_FAULTS
from firmware.hal import ticks_diff
from firmware import frame
from firmware.link import codec, protocol
from firmware.link.protocol import LOCK_MAX_MS, NONCE_MS, SESSION_MS

_RX = const(32)
_REQUEST_MAX = const(160)             # requests are small: the longest is a config_get
_EVENT_MAX = const(200)               # events are small: a fault with its detail
# Constant tuples: no module global (no interned name, no slot) for them.
_POLL_ANSWERS = const(2)              # answers per poll: each parses and writes JSON
_POLL_READS = const(8)                # x _RX bytes per poll (a garbage flood)
_QUIET_MS = const(100)                 # a frame's bytes come together; a gap this long ends it
_RETRY_MS = const(5000)                # same seq and payload this soon: a retry, answered again
# LinkServer.challenges: the challenges issued, the last one no longer
# answerable, and the count at the last mark and when it was made.
_ISSUED = const(0)
_FLOOR = const(1)
_MARK = const(2)
_MARK_AT = const(3)


class LinkServer:
    """The controller's end of the link. Every attribute is set in
    __init__, at boot: an instance dict that grows later (at a technician's
    first session, say) takes a larger table wherever the heap has a hole
    then, and splits the free space for good (docs/heap-idioms.md)."""

    def __init__(self, hal, fw_version, build, table="esp32", key=None, frozen=False):
        """`key`: the table's service key (bytes), None if it has none;
        `frozen`: the code runs frozen into the MicroPython image."""
        self.hal = hal
        self.frozen = frozen
        self.fw_version = fw_version
        self.build = build
        self.table = table
        self.key = key             # the table's service key (bytes), or None
        self.controller = None     # the TableController, once the config is good (attach)
        self.handlers = {}         # the request handlers' modules by home (attach)
        self.session = None        # the open service session's token (hex)
        self.fault_code = 0        # a fault found at boot (no controller): its code,
        self.fault_name = ""       # its name (also the error code of every refused
        self.fault_detail = None   # request) and why: {"reason": text, facts}
        # Service sessions (link/session.py): what
        # outlives a request, as plain data made here, at boot (a key-less
        # host asks at will: made per request, it would split the free heap).
        # A challenge carries what its check needs (the boot's prefix, its
        # number, its time), so the controller keeps none of them and no
        # host's challenges push out another's.
        self.session_at = 0        # the session's last use (ticks),
        self.session_ctr = 0       # the last request counter it accepted,
        self.session_state = 0     # 0 ended, 1 open, 2 open and a refusal of it logged
        # The session's key (32 bytes), then the boot's challenge prefix (8).
        self.session_key = bytearray(40)
        self.challenges = array("i", bytes(16))     # _ISSUED _FLOOR _MARK _MARK_AT
        self.bad_run = 0           # wrong MACs in a row (a right service_auth ends the run)
        self.lock_at = -1          # when the last wrong MAC came (-1: no lockout)
        # Key-less service events by kind (session.COUNTED, then "unsaved"
        # entries of the log file, then any other refusal).
        self.service_counts = array("H", bytes(2 * 10))
        # The service log's ring: its next entry, the session's PC clock,
        # the session's dice test entry (link/service_log.py: NEXT...).
        self.service_ring = array("i", (-1, 0, 0, 0, -1, 0))
        self.reader = frame.FrameReader(_REQUEST_MAX)
        self.rx = bytearray(_RX)
        # Answers are written to `tx` and stay there until the next request
        # (a retried request gets them again); events have their own buffer.
        self.tx = bytearray(frame.OVERHEAD + frame.MAX_PAYLOAD)
        self.ev = bytearray(frame.OVERHEAD + _EVENT_MAX)
        self.event_seq = 0
        self.requests = 0
        self.errors = 0
        self.dropped = 0
        self.overruns = 0          # control ticks that ran late (counted by main)
        self.retries = 0
        self.rx_n = 0              # request bytes read into rx,
        self.rx_next = 0           # the next of them to the reader,
        self.rx_time = 0           # when the last ones arrived
        self.last_seq = -1         # the last request answered: its seq,
        self.last_crc = -1         # its CRC,
        self.last_time = 0         # when,
        self.last_n = 0            # and its answer's length in tx

    def boot_fault(self, code, detail):
        """Nothing may move (a bad config, a changed firmware): only `hello`
        and `status` are answered, with this fault; `detail`: its reason's
        text and facts."""
        self.fault_code = code
        self.fault_name = faults.name_of(code)
        self.fault_detail = detail

    def attach(self, controller, handlers):
        """The controller to answer for (built after this server: it
        needs `emit`), and the modules that answer its requests, by their
        home in the codec's table (link/handlers.py; the service requests'
        module is imported at the first: `_answer`). Given here, not
        imported by this module: the link's core answers alone when the
        boot stops before the controller (a bad config, a changed
        firmware: main.py)."""
        self.controller = controller
        self.handlers = handlers

    # -- out -----------------------------------------------------------------

    def emit(self, name, fields):
        """An unsolicited event; fields must be public (the codec refuses
        anything else). `fields` is a dict made for this event: "ev" and
        "t" go into it (a copy would double what an event costs the heap)."""
        obj = fields
        try:
            obj["ev"] = name
            obj["t"] = self.hal.ticks_ms()
        except MemoryError:
            # No heap for the event now (its dict must grow): the event is
            # lost, counted, and the table goes on; the state it told is in
            # `status` and `hand`, and the next hand event carries it whole.
            self.dropped += 1
            return
        self.event_seq = (self.event_seq + 1) & 0xFF
        # Tile codes go out only for audit faults: they name tiles of walls
        # that are not in play (before the lift, or the next set's).
        reveal = name == "fault" and fields.get("code") in _AUDIT_FAULTS
        try:
            n = codec.write_event(self.ev, self.event_seq, obj, reveal=reveal)
        except codec.LinkError:
            self.errors += 1           # a bug: an undeclared field; seen in status
            return
        except MemoryError:            # the writer allocates nothing (codec), but
            self.dropped += 1          # never raise into the loop's fault path
            return
        self._send(self.ev, n)

    def _audit_detail(self, result):
        """May this answer name tiles? Audit faults' details (walls not in
        play), and an rfid_audit: authenticated, refused during a hand."""
        if result.get("op") == "rfid_audit":
            return True
        if result.get("op") == "status":
            f = result.get("fault")
            return bool(f) and f["code"] in _AUDIT_FAULTS
        if result.get("op") == "faults":
            for f in result["faults"]:
                if f["code"] not in _AUDIT_FAULTS:
                    for k in codec.SECRET_KEYS:
                        if k in f["detail"]:
                            return False   # let the guard refuse it
            return True
        return False

    def _send(self, buf, n):
        link = self.hal.link
        if link is None or not link.write(buf, n):
            self.dropped += 1

    # -- in ------------------------------------------------------------------

    def poll(self, now):
        """Requests in, answered: at most _POLL_ANSWERS answers and
        _POLL_READS reads of the line per call, so that a host that never
        stops sending (or sends garbage) cannot hold the control loop (on
        a board the watchdog would reset it): the loop polls at every tick
        and whenever a request wakes it while it sleeps, never past the
        tick's end. The rest waits in the UART's buffer.

        First the service session's idle time, the challenges' age and the
        lockout after a wrong MAC, ended at the tick that passes them: a
        request days later finds them over whatever the tick counter did
        (link/session.py checks the same with ticks_diff, right while the
        interval is short). Inline, with no local of its own: a method
        more is 16 B more of the resident heap, and a local more would
        put this frame on the heap at every poll (link/json_bytes.py)."""
        if self.session_state and ticks_diff(now, self.session_at) > SESSION_MS:
            self.session_state = 0
            self.service_ring[1] = 0       # its PC clock (service_log.CLOCK) ends with it
        if self.lock_at >= 0 and ticks_diff(now, self.lock_at) > LOCK_MAX_MS:
            self.lock_at = -1
        if ticks_diff(now, self.challenges[_MARK_AT]) > NONCE_MS:
            # Every challenge up to the mark is older than NONCE_MS now.
            if self.challenges[_MARK] > self.challenges[_FLOOR]:
                self.challenges[_FLOOR] = self.challenges[_MARK]
            self.challenges[_MARK] = self.challenges[_ISSUED]
            self.challenges[_MARK_AT] = now
        link = self.hal.link
        if link is None:
            return
        r = self.reader
        reads = 0
        answers = 0
        while True:
            if self.rx_next >= self.rx_n and not r.backlog():
                if reads == _POLL_READS:
                    return
                reads += 1
                self.rx_n = link.readinto(self.rx)
                self.rx_next = 0
                if not self.rx_n:
                    # A frame half received on a quiet line will never end
                    # (its length was damaged): give it up so its bytes are
                    # rescanned and the host's next request gets through.
                    if r.n and ticks_diff(now, self.rx_time) > _QUIET_MS:
                        r.flush()
                        continue
                    return
                self.rx_time = now
            self.rx_next = r.feed(self.rx, self.rx_next, self.rx_n)
            if r.ready:
                self._request(now, r)
                answers += 1
                if answers == _POLL_ANSWERS:
                    return

    def _request(self, now, r):
        seq = r.seq
        crc = frame.crc16(r.buf, 0xFFFF, frame.HEADER, frame.HEADER + r.length)
        if seq == self.last_seq and crc == self.last_crc \
                and ticks_diff(now, self.last_time) < _RETRY_MS and self.last_n:
            self.retries += 1          # the host lost our answer: send it again, do nothing
            self._send(self.tx, self.last_n)
            return
        self.requests += 1
        try:
            op, args = codec.decode_request(r)      # a frame of another kind: bad_kind
            result: dict = self._answer(now, op, args)
            result["op"] = op
            # Fault details may name tiles only for audit faults, whose walls
            # are not in play (see emit); status and faults carry such details.
            n = codec.write_response(self.tx, seq, result, reveal=self._audit_detail(result))
        except codec.LinkError as e:
            self.errors += 1
            n = 0
            try:
                n = codec.write_error(self.tx, seq, e)
            except MemoryError:        # no heap even for the error's fields
                pass
        except MemoryError:
            self.errors += 1
            n = 0
        if not n:
            # The answer did not fit in the heap now: say so rather than
            # leave the host waiting (the control loop itself allocates
            # nothing, so the table is not at risk). If even that does not
            # fit, no answer: the host asks again, nothing raises.
            try:
                n = codec.write_error(self.tx, seq, {"error": "internal", "why": "no_heap", "message":
                                                     "out of memory for this answer: ask again"})
            except MemoryError:
                self.dropped += 1
                return
        self.last_seq = seq
        self.last_crc = crc
        self.last_time = now
        self.last_n = n
        self._send(self.tx, n)

    def _answer(self, now, op, args):
        """The answer to a request (LinkError if refused), as its line of
        the codec's table says (codec.route): its handler is the function
        named after it in its home, a method of this class (hello and
        status, asked at once and all the time) or a function of
        link/commands.py, readouts.py or service.py. service.py checks
        first who may send what it answers."""
        home = codec.route(op)[1]
        ctl = self.controller
        if ctl is None and op != "hello" and op != "status":
            # A boot fault (main._boot_fault): nothing else is answered.
            d = self.fault_detail or {}
            raise codec.LinkError(self.fault_name or "internal", d.get("reason", "no controller"),
                                  {k: d[k] for k in d if k != "reason"})   # its facts
        if home == "server":
            # The function from the class: from the instance it would be
            # a bound method, made on the heap at every request.
            return getattr(LinkServer, op)(self, ctl, now, args)
        if home == "service":
            # The technician's requests (link/service.py): imported at a
            # visit's first request and kept from then on. A table nobody
            # services does not hold their code, 10 KB of heap in the .mpy
            # form, which its 128 KB cycle would not fit (docs/heap-idioms.md).
            from firmware.link import service
            return service.answer(self, ctl, now, op, args)
        return getattr(self.handlers[home], op)(self, ctl, now, args)

    def hello(self, ctl, now, args):
        """The firmware, its build and what it runs on, the table's name (a
        host of another protocol is refused before: codec.decode_request)."""
        return {"ok": True, "proto": protocol.PROTO_VERSION, "fw": self.fw_version,
                "build": self.build, "table": self.table, "runtime": self.runtime()}

    def status(self, ctl, now, args):
        """What the table is doing; with no controller (a boot fault),
        what stopped the boot."""
        if ctl is None:
            return {"ok": True, "state": "fault", "phase": "none", "cycles": 0,
                    "fault": {"code": self.fault_code, "name": self.fault_name,
                              "detail": self.fault_detail},
                    "uptime": now, "dealer": None, "dice": None,
                    "tiles_per_side": [0, 0, 0, 0], "lanes": [0, 0, 0, 0], "lifters": []}
        out = ctl.status(now)
        out["ok"] = True
        out["link"] = {"requests": self.requests, "errors": self.errors,
                       "dropped": self.dropped, "overruns": self.overruns,
                       "garbage": self.reader.dropped, "bad_crc": self.reader.bad_crc}
        out["heap"] = {"alloc": gc.mem_alloc(), "free": gc.mem_free()}
        return out

    def runtime(self):
        """What this firmware runs on, as it knows it itself: the word size,
        whether its code is frozen into the image, MicroPython's version
        (None under CPython, in host tests), its port ("esp32" on the chip
        or in QEMU, "unix" on the twin), the chip (os.uname's machine ends
        "with ESP32S3" on the esp32 port; None elsewhere) and where the
        DRBG's seed came from (the HAL's entropy_source)."""
        v = sys.implementation.version
        esp32 = sys.platform == "esp32"
        return {"bits": 64 if sys.maxsize > 0x7FFFFFFF else 32, "frozen": self.frozen,
                "micropython": "%d.%d.%d" % (v[0], v[1], v[2])
                if sys.implementation.name == "micropython" else None,
                "port": "esp32" if esp32 else "unix",
                "chip": os.uname().machine.rsplit(" ", 1)[-1] if esp32 else None,
                "entropy": getattr(self.hal, "entropy_source", None)}
