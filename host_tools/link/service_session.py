"""Service sessions as the host holds them (docs/protocol.md; the
controller's side is firmware/link/service.py): opened with the table's
key by answering the controller's challenge, every request of the session
signed with the session's key and a counter, and the service log read page
by page. `ServiceRequests` is a part of LinkClient (client.py): its
requests go out through LinkClient.request.
"""

import threading
import time

from firmware import frame
from firmware.link.codec import LinkError
from host_tools.link import codec as link_codec

REQUEST_MAX = 160          # the controller's bound on a request's payload (firmware/link/server.py)


class ServiceRequests:
    """The service session's requests of a LinkClient."""

    def open_service(self, key, clock=True):
        """A service session with the table's key (bytes): the controller's
        challenge answered with HMAC-SHA256(key, nonce + b"service" + this
        PC's time, seconds since 1970 UTC, in decimal digits), the time
        sent with it: the session's entries in the controller's service
        log carry it (firmware/link/session.py). `clock` False: no time,
        the MAC of nonce + b"service" alone (the entries then carry the
        controller's uptime). Returns the ServiceSession: its token (a
        str), and the key it signs its requests with, HMAC-SHA256(key,
        nonce + b"session"). Pass it as `session=` to request()."""
        nonce = bytes.fromhex(self.request("service_open")["nonce"])
        if not clock:
            mac = _hmac(key, nonce + b"service").hex()
            token = self.request("service_auth", nonce=nonce.hex(), mac=mac)["session"]
        else:
            now = int(time.time())
            mac = _hmac(key, nonce + b"service" + str(now).encode()).hex()
            token = self.request("service_auth", nonce=nonce.hex(), mac=mac, time=now)["session"]
        return ServiceSession(token, _hmac(key, nonce + b"session"))

    def close_service(self, session):
        """Close the session (a ServiceSession): True if it was the open one;
        False if it had ended already (expired, or another took its place)."""
        try:
            return self.request("service_close", session=session)["closed"]
        except LinkError as e:
            if e.code in ("no_session", "session_expired"):
                return False
            raise

    def service_log(self, page=4, counts=None):
        """Every entry of the controller's service log, oldest first: asked
        for in pages (`service_log start n`), as the whole log with its
        details does not fit one frame. An entry too long for a frame on its
        own is shown as [None, "(too long for a frame)"]. `counts`: a dict
        that gets the key-less events counted by kind ("challenge",
        "auth_failed", ...)."""
        out = []
        start = 0
        n = page
        while True:
            try:
                got = self.request("service_log", start=start, n=n)
            except LinkError as e:
                if e.code != "too_big":
                    raise
                if n > 1:
                    n = 1
                    continue
                out.append([None, "(too long for a frame)"])
                start += 1
                n = page
                continue
            if counts is not None:
                counts.update(dict(got["counts"]))
            out += got["entries"]
            start += len(got["entries"])
            if not got["entries"] or start >= got["total"]:
                return out


class ServiceSession(str):
    """An open service session: its token (the str itself, as sent), the
    key its requests are signed with and their counter. One per session,
    shared by the threads that use it (the counter is taken under a lock;
    requests of one session sent from several threads at once may arrive
    out of order, and the later numbers then refuse the earlier)."""

    def __new__(cls, token, key):
        s = super().__new__(cls, token)
        s.key = key
        s.ctr = 0
        s._lock = threading.Lock()
        return s

    def sign(self, op, args):
        """The payload of request `op` with `args`, signed: the next
        counter, then the MAC (sign_request)."""
        with self._lock:
            self.ctr += 1
            ctr = self.ctr
        return sign_request(self.key, str(self), ctr, op, args)


def sign_request(key, token, ctr, op, args):
    """The payload (bytes) of a session's request: its canonical JSON (the
    codec's: keys sorted, no spaces) with `session` and `ctr`, and as its
    last member "mac", the first 16 bytes of HMAC-SHA256(key, every byte
    of the payload before ,"mac":) in hex. LinkError("too_big") past
    REQUEST_MAX bytes (the controller would drop it unanswered)."""
    body = dict(args, session=str(token), ctr=ctr)
    body.pop("mac", None)
    head = link_codec.encode_request(0, op, **body)[frame.HEADER:-2][:-1]   # no closing }
    payload = head + b',"mac":"' + _hmac(key, head)[:16].hex().encode() + b'"}'
    if len(payload) > REQUEST_MAX:
        raise LinkError("too_big", "%s: the request is %d bytes signed, the controller takes %d"
                        % (op, len(payload), REQUEST_MAX))
    return payload


def _hmac(key, data):
    import hashlib
    import hmac
    return hmac.new(key, data, hashlib.sha256).digest()


def service_entry(e):
    """A `service_log` entry as a dict: "clock" ("utc": "t" is seconds
    since 1970 UTC, the PC's clock given when the session opened; "up":
    "t" is ms since the controller started; None: a damaged record), "t",
    "what" and its details: a jog has "actuator", "n" (None: not given),
    "ms", "outcome" ("ok" or the refusal's code); a config change "key",
    "value", "outcome"; a dice test "rolls", "outcome"; an RFID step or a
    new game "outcome"; a refused request "op" and "why" ("bad_mac",
    "replay"); an alarm "n", the wrong MACs in a row."""
    stamp, what = e[0], e[1]
    clock, t = stamp if isinstance(stamp, list) and len(stamp) == 2 else (None, None)
    out = {"clock": clock, "t": t, "what": what}
    if what == "jog":
        out.update(actuator=e[2], n=e[3], ms=e[4], outcome=e[5])
    elif what == "rejected":               # a refused request of the session: the first
        out.update(op=e[2], why=e[3])
    elif what == "alarm":                  # wrong MACs in a row
        out["n"] = e[2]
    elif what == "config_set":
        out.update(key=e[2], value=e[3], outcome=e[4])
    elif what == "dice_test":
        out.update(rolls=e[2], outcome=e[3])
    elif isinstance(what, str) and (what.startswith("rfid_") or what == "new_game"):
        out["outcome"] = e[2] if len(e) > 2 else "ok"
    return out
