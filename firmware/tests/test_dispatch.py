"""The link's dispatcher, on both interpreters: who may send a request, as
its line of the codec's table says, is what the real server enforces, on a
real controller: `anyone` at any time, `no_hand` never during a hand,
`session` only with the open service session and never during a hand.
(test_cpy_dispatch.py checks the table itself: one handler and one
permission per request.)"""

import binascii
import hashlib
import json
import os
import sys

from firmware import frame
from firmware.link.handlers import HANDLERS
from firmware.link import codec
from firmware.link.server import LinkServer
from firmware.tests.test_link_server import REQUEST, Line

KEY = bytes(range(32))
# Every request of the codec's table (a private constant, compiled away
# under MicroPython; test_cpy_dispatch.py checks this copy).
OPS = ("hello", "status", "start", "clear", "faults", "config_get", "hand_end", "kong",
       "service_open", "service_auth", "service_close", "service_log", "jog", "hand",
       "counters", "sensors", "dice_test", "new_game", "config_set", "rfid_scan", "rfid_audit",
       "rfid_learn")
# Arguments each request is well formed with (the table's; the rest take none).
ARGS = {"hello": {"proto": codec.PROTO_VERSION}, "kong": {"kind": "exposed", "seat": 1},
        "dice_test": {"n": 1}, "jog": {"actuator": "plate", "ms": 10},
        "config_set": {"key": "no_such_key", "value": 1},
        "service_auth": {"nonce": "00" * 16, "mac": "00" * 32}}
_EVENT = 0x12                   # the frame kind of an event (the codec's EVENT)
_IN_HAND = 6                    # the controller's state of a hand (table.NAMES)
_IDLE = 1
_FILES = ("service.log", "counters.json", "hand.rec", "walls.rec")
# status reads the heap with MicroPython's gc (CPython's has no mem_alloc).
_MICROPYTHON = sys.implementation.name == "micropython"


def _table():
    """The real controller, booted (idle), and the real server answering for it."""
    from firmware import config, tags
    from firmware.controller.table import TableController
    from firmware.devices import Devices
    from firmware.fakes.hal import FIRMWARE_DIR
    from firmware.tests.test_output_guard import GuardedPins
    class Uart:                    # the display's: frames go nowhere
        def write(self, buf, n):
            pass

        def readinto(self, buf):
            return 0

    class Pins(GuardedPins):
        def ticks_ms(self):        # the link stamps its events
            return self.now

        def uart(self, n, tx, rx, rxbuf):
            return Uart()
    _clean()
    cfg = config.load(FIRMWARE_DIR + "/config.json")
    hal = Pins()
    hal.store = ""                 # the working folder: its files are removed after
    hal.link = Line(b"")
    server = LinkServer(hal, "0.0.0", "test", "test", KEY)
    ctl = TableController(hal, cfg, Devices(hal, cfg, tags.load(FIRMWARE_DIR + "/tags.txt")),
                          server.emit)
    server.attach(ctl, HANDLERS)
    ctl.boot(0)
    return server, ctl


def _clean():
    for name in _FILES:
        try:
            os.remove(name)
        except OSError:
            pass


class _Host:
    """Requests in frames through server.poll, as a host sends them."""

    def __init__(self, server):
        self.server = server
        self.seq = 0
        self.t = 1000
        self.sk = None                 # the open session's key, its counter
        self.ctr = 0

    def ask(self, op, args):
        """The answer: a dict (`ok` true), or (code, message) of an ERROR.
        A request that carries the session's token is signed with its key."""
        import hmac
        line = self.server.hal.link
        payload = dict(args)
        payload["op"] = op
        body = json.dumps(payload).encode()
        if self.sk is not None and "session" in payload and payload["session"] == self.server.session:
            self.ctr += 1
            payload["ctr"] = self.ctr
            head = json.dumps(payload).encode()[:-1]
            body = head + b',"mac":"' + binascii.hexlify(
                hmac.new(self.sk, head, hashlib.sha256).digest()[:16]) + b'"}'
        self.seq = (self.seq + 1) & 0xFF
        self.t += 10
        line.data = frame.encode(REQUEST, self.seq, body)
        line.at = 0
        line.out.clear()
        self.server.poll(self.t)
        answers = [f for f in line.out if f[2] != _EVENT]
        assert len(answers) == 1, (op, line.out)
        got = json.loads(str(answers[0][frame.HEADER:-2], "utf-8"))
        return got if got["ok"] else (got["error"], got["message"])

    def session(self):
        import hmac                    # micropython-lib's under MicroPython, as the link's
        nonce = self.ask("service_open", {})["nonce"]
        mac = hmac.new(KEY, binascii.unhexlify(nonce) + b"service", hashlib.sha256).hexdigest()
        token = self.ask("service_auth", {"nonce": nonce, "mac": mac})["session"]
        self.sk = hmac.new(KEY, binascii.unhexlify(nonce) + b"session", hashlib.sha256).digest()
        self.ctr = 0
        return token


def _gate_refused(answer):
    """The answer is the dispatcher's refusal (not the handler's own)."""
    return type(answer) is tuple and (answer[0] == "no_session" or answer[0] == "session_expired"
                                      or (answer[0] == "busy" and "is refused during a hand"
                                          in answer[1]))


def _each(who, test):
    """test(host, ctl, op) for every request `who` may send, on a table
    booted for it (its files removed after)."""
    server, ctl = _table()
    host = _Host(server)
    try:
        ops = [op for op in OPS if codec.route(op)[0] == who]
        assert ops, who
        for op in ops:
            test(host, ctl, op)
    finally:
        _clean()


def test_a_request_for_anyone_is_answered_in_a_hand_and_without_a_session():
    def test(host, ctl, op):
        if op == "status" and not _MICROPYTHON:
            return
        ctl.state = _IN_HAND           # a hand_end may have ended the last one
        answer = host.ask(op, ARGS.get(op, {}))
        assert not _gate_refused(answer), (op, answer)
    _each("anyone", test)


def test_a_request_never_during_a_hand_is_refused_busy_in_one_only():
    def test(host, ctl, op):
        ctl.state = _IN_HAND
        code, message = host.ask(op, ARGS.get(op, {}))
        assert code == "busy" and message == "%s is refused during a hand" % op, (op, message)
        ctl.state = _IDLE
        assert not _gate_refused(host.ask(op, ARGS.get(op, {}))), op
        assert host.session()          # service_auth, right: a session
    _each("no_hand", test)


def test_a_session_request_needs_the_open_session_signed_and_no_hand():
    def test(host, ctl, op):
        ctl.state = _IDLE
        args = dict(ARGS.get(op, {}))
        assert host.ask(op, args)[0] == "no_session", op
        args["session"] = "0" * 16
        assert host.ask(op, args)[0] == "no_session", op
        token = args["session"] = host.session()
        sk, host.sk = host.sk, None    # the token alone: refused
        code, message = host.ask(op, args)
        assert code == "auth_failed" and "wrong mac" in message, (op, message)
        host.sk = sk
        host.t += 250                  # its lockout of service_auth, which the
        # session's right MACs do not end (only a right service_auth does)
        ctl.state = _IN_HAND
        if op == "service_close":      # it only ends things: answered in a hand too
            assert host.ask(op, args) == {"ok": True, "op": op, "closed": True}
            return
        code, message = host.ask(op, args)
        assert code == "busy" and "during a hand" in message, (op, message)
        ctl.state = _IDLE
        answer = host.ask(op, args)
        assert not _gate_refused(answer), (op, answer)
        assert host.ask("service_close", {"session": token})["closed"] is True
    _each("session", test)
