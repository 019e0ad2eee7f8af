"""Files that name hidden tiles, sealed: the hand's record and the walls
lifted (controller/saved_state.py) lie in the flash encrypted and
authenticated with keys derived from the table's key, so that neither a
look at the flash (a development board's filesystem, a bench board's
chip read with esptool) nor a file written there by hand tells or
changes a tile. On a production board the table's key stays in
encrypted NVS (docs/security.md).

    sealer = Sealer(table_key, rand, b"hand")   # one per kind of file
    sealer.save(path, data)     # atomic: NAME.new, then renamed over NAME
    sealer.load(path)           # the data; None if there is no file;
                                # ValueError if its seal does not check

A file: MAGIC, an 8-byte nonce from the table's DRBG, the data XORed
with a keystream, then the first 16 bytes of HMAC-SHA256 over all before
it (encrypt, then MAC). Keystream block i (32 bytes) is
HMAC-SHA256(k_enc, nonce | i, 4 bytes big endian): HMAC as a PRF in
counter mode. Written here because neither interpreter the firmware runs
on has a cipher that fits: the twin is built without a TLS library, so
without `cryptolib`, and the esp32 port's `cryptolib` has no counter
mode; hashlib's SHA-256 and micropython-lib's hmac (the service sessions'
own) are on both. k_enc and k_mac are HMAC-SHA256(table key, label |
kind): a record cannot be passed off as walls, nor the reverse, and
neither key is a session's (those are HMACs of a 16-byte nonce).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import hashlib
import hmac
import os

MAGIC = b"SL1"
_NONCE = const(8)
_TAG = const(16)
_BLOCK = const(32)


def _hmac(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()  # pyright: ignore[reportArgumentType]  (MicroPython's hash object)


class Sealer:
    def __init__(self, table_key, rand, kind):
        """`table_key`: the table's key (32 bytes); `rand(n)`: n random
        bytes (the HAL's DRBG); `kind`: what the files hold (b"hand",
        b"walls")."""
        self.rand = rand
        self._enc = _hmac(table_key, b"sealed file, encryption: " + kind)
        self._mac = _hmac(table_key, b"sealed file, authentication: " + kind)

    def _xor(self, nonce, buf):
        """buf XORed in place with the keystream of `nonce`."""
        block = bytearray(_NONCE + 4)
        block[:_NONCE] = nonce
        for i in range(0, len(buf), _BLOCK):
            n = i // _BLOCK
            block[_NONCE] = n >> 24 & 255
            block[_NONCE + 1] = n >> 16 & 255
            block[_NONCE + 2] = n >> 8 & 255
            block[_NONCE + 3] = n & 255
            stream = _hmac(self._enc, block)
            for j in range(min(_BLOCK, len(buf) - i)):
                buf[i + j] ^= stream[j]

    def save(self, path, data):
        """`data` (bytes) sealed into the file at `path`, whole or not at
        all: a cut leaves the old file or the new one."""
        nonce = self.rand(_NONCE)
        body = bytearray(len(MAGIC) + _NONCE + len(data))
        body[:len(MAGIC)] = MAGIC
        body[len(MAGIC):len(MAGIC) + _NONCE] = nonce
        body[len(MAGIC) + _NONCE:] = data
        self._xor(nonce, memoryview(body)[len(MAGIC) + _NONCE:])
        with open(path + ".new", "wb") as f:
            f.write(body)
            f.write(_hmac(self._mac, body)[:_TAG])
        os.rename(path + ".new", path)

    def load(self, path):
        """The data sealed at `path`; None if there is no such file;
        ValueError if the file is not one this table sealed, or was
        changed, cut short or damaged since."""
        try:
            f = open(path, "rb")
        except OSError:
            return None
        with f:
            body = f.read()
        head = len(MAGIC) + _NONCE
        if len(body) < head + _TAG or body[:len(MAGIC)] != MAGIC:
            raise ValueError("%s is not a sealed file" % path)
        tag = _hmac(self._mac, memoryview(body)[:len(body) - _TAG])
        diff = 0
        for i in range(_TAG):                 # every byte compared, whichever differ
            diff |= tag[i] ^ body[len(body) - _TAG + i]
        if diff:
            raise ValueError("%s does not check: sealed with another key, or changed" % path)
        data = bytearray(body[head:len(body) - _TAG])
        self._xor(body[len(MAGIC):head], data)
        return data
