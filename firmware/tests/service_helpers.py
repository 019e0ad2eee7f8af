"""What the service sessions' tests share (test_service_*.py), on both
interpreters: a link's session state as a LinkServer keeps it, a
technician's end of a session, a request signed, sent through the link's
reader and answered, and controllers that answer only what a service
request may ask of them."""

import binascii
import json
import os
from array import array

from firmware import frame
from firmware.link import codec
from firmware.link import service as s
from firmware.link import session
from firmware.link.codec import LinkError
from firmware.fakes.hal import FakeHal


KEY = bytes(range(32))


LOG = "service.log"             # the store is the working folder here


class _Link:
    """What a LinkServer keeps of the service sessions between requests
    (firmware/link/server.py makes the same at boot)."""
    def __init__(self, key, fresh=True):
        self.hal = FakeHal()
        self.hal.store = ""
        self.key = key
        self.controller = None
        self.session = None
        self.session_at = 0
        self.session_ctr = 0
        self.session_state = 0
        self.session_key = bytearray(40)
        self.challenges = array("i", bytes(16))
        self.bad_run = 0
        self.lock_at = -1
        self.service_counts = array("H", bytes(20))
        self.service_ring = array("i", (-1, 0, 0, 0, -1, 0))
        self.reader = frame.FrameReader(160)
        self.events = []
        if fresh:
            try:
                os.remove(LOG)
            except OSError:
                pass


    def emit(self, name, fields):
        self.events.append((name, fields))


def _log(link):
    """The log's entries, an uptime stamp ["up", ms] as its ms (a PC's
    time, ["utc", s], as it is)."""
    return [[e[0][1]] + e[1:] if e[0][0] == "up" else e for e in session.entries(link)]


def _cleaned(test):
    """The test, then its log file removed (no temp folder on MicroPython)."""
    def run():
        try:
            test()
        finally:
            try:
                os.remove(LOG)
            except OSError:
                pass
    return run


def _counts(link):
    return dict(s.answer(link, _Ctl(), 0, "service_log", {})["counts"])


def _hex(b):
    return binascii.hexlify(b).decode()


def hmac_sha256(key, msg):
    """micropython-lib's hmac, as link/service.py uses it (CPython's own
    under CPython)."""
    import hmac
    return hmac.new(key, msg, "sha256").digest()


def _answer(nonce_hex, key=KEY):
    return _hex(hmac_sha256(key, binascii.unhexlify(nonce_hex) + b"service"))


def _refused(fn, *args):
    try:
        fn(*args)
    except LinkError as e:
        return e.code, e.message
    return None


class _Tech:
    """A technician's end of a session: its token, its key (derived from
    the challenge, as the host's client does) and its request counter."""

    def __init__(self, link, now=0, key=KEY):
        nonce = session.challenge(link, now)
        self.token = session.authenticate(link, now, nonce, _answer(nonce, key))
        self.sk = hmac_sha256(key, binascii.unhexlify(nonce) + b"session")
        self.ctr = 0

    def payload(self, op, ctr=None, **args):
        """The request signed: any JSON serves, the MAC covers its bytes."""
        self.ctr += 1
        args["op"] = op
        args["session"] = self.token
        args["ctr"] = self.ctr if ctr is None else ctr
        return _sign(self.sk, json.dumps(args).encode())


def _sign(sk, payload):
    head = payload[:-1]                # the object without its closing }
    return head + b',"mac":"' + binascii.hexlify(hmac_sha256(sk, head)[:16]) + b'"}'


def _send(link, now, payload, ctl=None):
    """The payload through the link's reader and the service, as the server
    hands it over: the answer, or the refusal (code, message)."""
    r = frame.FrameReader(160)
    r.feed(frame.encode(0x10, 1, payload))
    assert r.ready
    link.reader = r
    try:
        op, args = codec.decode_request(r)
        return s.answer(link, ctl or _Ctl(), now, op, args)
    except LinkError as e:
        return e.code, e.message


def _passed(answer):
    """The session's check let the request through: a jog with a wrong
    argument is refused by its handler, never consulting the table."""
    return answer[0] == "bad_request"


def _jog_payload(tech, ctr=None):
    return tech.payload("jog", ctr, actuator="lift", n=1, ms=100)


class _Ctl:
    """A controller that must not be reached: a jog with a wrong argument
    is refused before the table's state is even looked at."""
    def in_hand(self):
        return False

    def still(self):
        raise AssertionError("the table was consulted for a wrong jog")


class _InHand(_Ctl):
    """A controller in the middle of a hand."""
    def in_hand(self):
        return True


class _Stoppable(_Ctl):
    """A controller whose jog service_close stops (none runs)."""
    def __init__(self, in_hand=False):
        self.hand = in_hand
        self.work = None

    def in_hand(self):
        return self.hand


def _session(link):
    return _Tech(link)


def _jog(link, tech, **args):
    """The refusal (code, message) of a jog with these arguments."""
    return _send(link, 10, tech.payload("jog", **args))
