"""Service sessions: HMAC-SHA256 challenge-response with the table's key
(docs/protocol.md, Service sessions).

    host: service_open            -> controller: a fresh nonce (16 random bytes)
    host: service_auth nonce, mac -> mac = HMAC-SHA256(key, nonce + b"service")
                                     controller: a session token, its expiry
    host: jog ... session=token   -> allowed while the session lasts

A nonce answers once and only for `NONCE_MS`; a session lasts `SESSION_MS`
from its last use and never into a hand (a hand ends it). No key on the
table (`service.key`, provisioned by make deploy) refuses every session.
Every challenge, session and refusal goes into a small ring, `log`.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import binascii
import hashlib

from firmware.hal import ticks_add, ticks_diff

_BLOCK = const(64)                 # SHA-256's block size, for HMAC
_NONCES = const(4)                 # challenges outstanding at once
_LOG = const(16)                   # entries kept


def hmac_sha256(key, msg):
    """RFC 2104 HMAC with SHA-256. Written here because MicroPython's
    firmware has hashlib but no hmac module (micropython-lib's would be one
    more module on the board for these five lines); checked against
    CPython's hmac and RFC 4231's vectors in the tests."""
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key + bytes(_BLOCK - len(key))
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in key))
    inner.update(msg)
    outer = hashlib.sha256(bytes(b ^ 0x5C for b in key))
    outer.update(inner.digest())
    return outer.digest()


class Refused(Exception):
    """code (an error of the protocol), message."""
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class Service:
    NONCE_MS = 30000               # a challenge must be answered within this
    SESSION_MS = 300000            # a session lasts this long after its last use

    def __init__(self, rand, key):
        """`rand(n)`: the hardware RNG; `key`: the table's 32-byte key, or None."""
        self.rand = rand
        self.key = key
        self._nonces = []          # [nonce bytes, issued at]
        self.session = None        # the token, hex
        self._until = 0
        self.log = []              # [t, what], the newest last

    def _note(self, now, what):
        self.log.append([now, what])
        if len(self.log) > _LOG:
            self.log.pop(0)

    def challenge(self, now):
        nonce = self.rand(16)
        self._nonces.append([nonce, now])
        if len(self._nonces) > _NONCES:
            self._nonces.pop(0)
        self._note(now, "challenge")
        return binascii.hexlify(nonce).decode()

    def authenticate(self, now, nonce_hex, mac_hex, in_hand):
        """The session token (hex), or Refused. The nonce is used up either way."""
        if in_hand:
            self._refuse(now, "busy", "no service session during a hand")
        found = None
        for entry in self._nonces:
            if binascii.hexlify(entry[0]).decode() == nonce_hex:
                found = entry
        if found is None:
            self._refuse(now, "auth_failed", "unknown or already used challenge (ask service_open)")
        self._nonces.remove(found)
        if ticks_diff(now, found[1]) > self.NONCE_MS:
            self._refuse(now, "auth_failed", "challenge expired (ask service_open again)")
        if self.key is None:
            self._refuse(now, "auth_failed", "this table has no service key (make deploy KEY=...)")
        want = binascii.hexlify(hmac_sha256(self.key, found[0] + b"service")).decode()
        if mac_hex != want:
            self._refuse(now, "auth_failed", "wrong key")
        self.session = binascii.hexlify(self.rand(8)).decode()
        self._until = ticks_add(now, self.SESSION_MS)
        self._note(now, "opened")
        return self.session

    def check(self, now, token, in_hand, what):
        """Refused unless `token` is the open session (which it extends)."""
        if in_hand:
            self._refuse(now, "busy", "%s is refused during a hand" % what)
        if self.session is None or token != self.session:
            self._refuse(now, "no_session", "%s needs a service session (service_open)" % what)
        if ticks_diff(now, self._until) > 0:
            self.session = None
            self._refuse(now, "session_expired", "the service session expired: open another")
        self._until = ticks_add(now, self.SESSION_MS)
        self._note(now, what)

    def close(self, now, reason):
        if self.session is not None:
            self.session = None
            self._note(now, "closed: " + reason)
            return True
        return False

    def _refuse(self, now, code, message):
        self._note(now, "refused: " + message)
        raise Refused(code, message)
