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
from array import array

from firmware import faults
from firmware.faults import AUDIT_FAULTS as _AUDIT_FAULTS
from firmware.hal import forget, ticks_diff
from firmware import frame
from firmware.link import codec

_RX = const(32)
_NONCES = const(4)                    # service challenges outstanding at once
_REQUEST_MAX = const(160)             # requests are small: the longest is a config_get
_EVENT_MAX = const(200)               # events are small: a fault with its detail
# Constant tuples: no module global (no interned name, no slot) for them.
_SECRET = const(("tile", "tiles", "uid"))    # = codec's (tile identities)
_READOUTS = const(("counters", "sensors", "dice_test", "config_get"))
_TECHNICIAN = const(("counters", "sensors", "dice_test", "config_get", "jog", "config_set"))
_POLL_ANSWERS = const(2)              # answers per poll: each parses and writes JSON
_POLL_READS = const(8)                # x _RX bytes per poll (a garbage flood)
_IN_PENDING = const(0)          # request bytes left in rx after a frame
_IN_AT = const(1)               # the next of them
_IN_RX_AT = const(2)            # when the last bytes arrived
_IN_LAST_SEQ = const(3)         # the last request answered: its seq,
_IN_LAST_CRC = const(4)         # its CRC,
_IN_LAST_AT = const(5)          # when,
_IN_LAST_N = const(6)           # and the answer's length in tx
_QUIET_MS = const(100)                 # a frame's bytes come together; a gap this long ends it
_RETRY_MS = const(5000)                # same seq and payload this soon: a retry, answered again


class LinkServer:
    """The controller's end of the link. Every attribute is set in
    __init__, at boot: an instance dict that grows later (at a technician's
    first session, say) takes a larger table wherever the heap has a hole
    then, and splits the free space for good (docs/heap-idioms.md, 5)."""

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
        self.session = None        # the open service session's token (hex)
        self.session_until = 0
        self.fault_code = 0        # a fault found at boot (no controller): its code,
        self.fault_name = ""       # its name (also the error code of every refused
        self.fault_reason = ""     # request) and why
        # Service sessions (link/service.py, loaded per request): what
        # outlives a request, as plain data made here, at boot (a key-less
        # host asks for challenges at will: made per request, they split the
        # free heap).
        self.nonces = bytearray(16 * _NONCES)      # the outstanding challenges,
        self.nonce_at = array("i", bytes(4 * _NONCES))   # when each was issued,
        self.nonce_live = bytearray(_NONCES)       # 1 until answered
        self.nonce_next = 0                        # the slot the next one takes
        # Key-less service events by kind (service._COUNTED, then "unsaved"
        # entries of the log file, then any other refusal).
        self.service_counts = array("H", bytes(2 * 7))
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
        # The reading and the last answer's state, by _IN_*: small ints in
        # one array (one object, no interned name each).
        self._in = array("i", (0, 0, 0, -1, -1, 0, 0))

    def boot_fault(self, code, reason):
        """Nothing may move (a bad config, a changed firmware): only `hello`
        and `status` are answered, with this fault."""
        self.fault_code = code
        self.fault_name = faults.name_of(code)
        self.fault_reason = reason

    def attach(self, controller):
        """The controller to answer for (built after this server: it
        needs `emit`)."""
        self.controller = controller

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
                    for k in _SECRET:
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
        tick's end. The rest waits in the UART's buffer."""
        link = self.hal.link
        if link is None:
            return
        r = self.reader
        reads = 0
        answers = 0
        while True:
            st = self._in
            if st[_IN_AT] >= st[_IN_PENDING] and not r.backlog():
                if reads == _POLL_READS:
                    return
                reads += 1
                st[_IN_PENDING] = link.readinto(self.rx)
                st[_IN_AT] = 0
                if not st[_IN_PENDING]:
                    # A frame half received on a quiet line will never end
                    # (its length was damaged): give it up so its bytes are
                    # rescanned and the host's next request gets through.
                    if r.n and ticks_diff(now, st[_IN_RX_AT]) > _QUIET_MS:
                        r.flush()
                        continue
                    return
                st[_IN_RX_AT] = now
            st[_IN_AT] = r.feed(self.rx, st[_IN_AT], st[_IN_PENDING])
            if r.ready:
                self._request(now, r)
                answers += 1
                if answers == _POLL_ANSWERS:
                    return

    def _request(self, now, r):
        seq = r.seq
        crc = frame.crc16(r.buf, 0xFFFF, frame.HEADER, frame.HEADER + r.length)
        st = self._in
        if seq == st[_IN_LAST_SEQ] and crc == st[_IN_LAST_CRC] \
                and ticks_diff(now, st[_IN_LAST_AT]) < _RETRY_MS and st[_IN_LAST_N]:
            self.retries += 1          # the host lost our answer: send it again, do nothing
            self._send(self.tx, st[_IN_LAST_N])
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
                n = codec.write_error(self.tx, seq, {"error": "internal", "message":
                                                     "out of memory for this answer: ask again"})
            except MemoryError:
                self.dropped += 1
                return
        st[_IN_LAST_SEQ] = seq
        st[_IN_LAST_CRC] = crc
        st[_IN_LAST_AT] = now
        st[_IN_LAST_N] = n
        self._send(self.tx, n)

    def _answer(self, now, op, args):
        if op == "hello":
            if args.get("proto") != codec.PROTO_VERSION:
                raise codec.LinkError("proto_mismatch", "controller speaks %d, host %r"
                                      % (codec.PROTO_VERSION, args.get("proto")),
                                      {"proto": codec.PROTO_VERSION})
            return {"ok": True, "proto": codec.PROTO_VERSION, "fw": self.fw_version,
                    "build": self.build, "table": self.table, "runtime": self.runtime()}
        ctl = self.controller
        if ctl is None:
            if op == "status":         # what stopped the boot
                return {"ok": True, "state": "fault", "phase": "none", "cycles": 0,
                        "fault": {"code": self.fault_code, "name": self.fault_name,
                                  "detail": {"reason": self.fault_reason}},
                        "uptime": now, "dealer": None, "dice": None, "runtime": self.runtime(),
                        "tiles_per_side": [0, 0, 0, 0], "lanes": [0, 0, 0, 0], "lifters": []}
            raise codec.LinkError(self.fault_name or "internal",
                                  self.fault_reason or "no controller")
        if op == "status":
            return self._status(now, ctl)
        if op == "start":
            why = ctl.start(now)
            if why:
                raise codec.LinkError("busy", why)
            return {"ok": True, "state": "building"}
        if op == "clear":
            code = ctl.fault
            ctl.clear(now)
            return {"ok": True, "cleared": code or None}
        if op == "hand_end":
            winner = args.get("winner")
            why = ctl.hand_end(now, winner)
            if why:
                raise codec.LinkError("busy", why)
            return {"ok": True, "state": "next"}
        if op.startswith("service_") or op.startswith("rfid_") or op in _TECHNICIAN:
            # Loaded for this request and forgotten after it: link/readouts.py
            # (no session needed), link/service.py (the rest).
            gc.collect()
            if op in _READOUTS:
                from firmware.link import readouts
                try:
                    return readouts.answer(ctl, op, args)
                finally:
                    forget("firmware.link.readouts")
            from firmware.link import service
            try:
                return service.answer(self, ctl, now, op, args)
            finally:
                forget("firmware.link.service")
        if op == "hand":
            st = ctl.follower.public()
            out = {"ok": True, "active": st is not None}
            if st is not None:
                for k in st:
                    if k != "op":
                        out[k] = st[k]
            return out
        if op == "kong":
            kind = args["kind"]
            if kind != "exposed" and kind != "concealed":
                raise codec.LinkError("bad_request", "kind must be exposed or concealed")
            seat = args["seat"]
            if seat < 0 or seat > 3:
                raise codec.LinkError("bad_request", "seat must be 0..3")
            why = ctl.kong(now, seat, kind == "concealed")
            if why:
                raise codec.LinkError("refused", why)
            return {"ok": True, "state": "in_hand"}
        if op == "faults":
            log = ctl.faults_logged()
            n = args.get("n", len(log))    # any int the codec let through: compared, never sliced
            out = []
            for t, code, name, detail in log:
                if len(out) >= n:
                    break
                out.append({"t": t, "code": code, "name": name, "detail": detail})
            return {"ok": True, "faults": out, "total": len(log)}
        raise codec.LinkError("unknown_op", "no request %r" % op)

    def _status(self, now, ctl):
        from firmware.controller.builder import NAMES as BUILDER
        from firmware.controller.table import NAMES
        from firmware.drivers.motion import NAMES as LIFT
        d = ctl.d
        fault = None
        if ctl.fault:
            fault = {"code": ctl.fault, "name": faults.name_of(ctl.fault),
                     "detail": ctl.fault_detail or {}, "t": ctl.fault_at}
        return {"ok": True, "state": NAMES[ctl.state], "phase": BUILDER[ctl.builder.state],
                "cycles": ctl.cycles, "fault": fault, "uptime": now,
                "dealer": ctl.dealership.dealer,
                "dice": [d.dice.a, d.dice.b] if d.dice.a else None,
                "tiles_per_side": ctl.builder.tiles_per_side(),
                "lanes": [lane.count for lane in d.lanes],
                "lifters": [LIFT[l.state] for l in d.lifters],
                "link": {"requests": self.requests, "errors": self.errors,
                         "dropped": self.dropped, "overruns": self.overruns,
                         "garbage": self.reader.dropped, "bad_crc": self.reader.bad_crc},
                "heap": {"alloc": gc.mem_alloc(), "free": gc.mem_free()},
                "runtime": self.runtime()}

    def runtime(self):
        """What this firmware runs on, as it knows it itself: the word size,
        whether its code is frozen into the image, MicroPython's version
        (None under CPython, in host tests)."""
        import sys
        v = sys.implementation.version
        return {"bits": 64 if sys.maxsize > 0x7FFFFFFF else 32, "frozen": self.frozen,
                "micropython": "%d.%d.%d" % (v[0], v[1], v[2])
                if sys.implementation.name == "micropython" else None}
