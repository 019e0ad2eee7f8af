"""HMAC_DRBG with SHA-256 (NIST SP 800-90A Rev. 1, 10.1.2): the table's
random bytes, from the dice to the service nonces, come out of it, never
the raw generator's (docs/security.md, Randomness).

    s = instantiate(entropy_input + nonce, personalization)   # the state
    reseed(s, entropy_input, additional_input)
    generate(s, n, additional_input) -> n bytes

The state is one bytearray, kept on the HAL (`hal._rb`): hal.rand hands
out a block of 32 bytes, and asks `refill` for the next. What is where
in it:

    [0]        the block's next byte to hand out (hal.rand)
    [1:33]     the last block generated
    [33:65]    K, [65:97] V
    [97]       blocks left before a reseed from the raw generator

A backend that sees physical events keeps `hal.pool`, 32 bytes into
which it XORs their microsecond times (the ESP32's stir): every block is
generated with it as additional input.

Runs on CPython too (the known answers, firmware/tests/test_drbg.py).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from hashlib import sha256

_BLOCK = const(1)
_K = const(33)
BLOCK_END = _K                 # where the block ends (hal.rand)
_V = const(65)
_LEFT = const(97)
# Blocks of 32 bytes between two reseeds from the raw generator. HMAC_DRBG
# needs none (SP 800-90A allows 2^48 requests); each adds what entropy the
# hardware has gathered since.
_RESEED = const(16)


def _mac(k, a, b=b"", x=b"", more=b""):
    """HMAC-SHA256 (RFC 2104) of a || b || x || more under the 32-byte key k."""
    pad = bytearray(b"6" * 64)         # the inner pad, 0x36, with the key XORed in
    for i in range(32):
        pad[i] ^= k[i]
    h = sha256(pad)
    h.update(a)
    h.update(b)
    h.update(x)
    h.update(more)
    inner = h.digest()
    for i in range(64):
        pad[i] ^= 0x6A                 # 0x36 ^ 0x5C: the outer pad
    h = sha256(pad)
    h.update(inner)
    return h.digest()


def _update(s, x, more=b""):
    """HMAC_DRBG_Update (10.1.2.2) of K and V in s, provided_data x || more."""
    k = _mac(s[_K:_V], s[_V:_LEFT], b"\x00", x, more)
    v = _mac(k, s[_V:_LEFT])
    if x or more:
        k = _mac(k, v, b"\x01", x, more)
        v = _mac(k, v)
    s[_K:_V] = k
    s[_V:_LEFT] = v


def instantiate(seed, pers=b""):
    """A new state (10.1.2.3): `seed` is the entropy input followed by the
    nonce, `pers` the personalization string."""
    s = bytearray(_LEFT + 1)
    s[_V:_LEFT] = b"\x01" * 32
    s[_LEFT] = _RESEED
    _update(s, seed, pers)
    return s


def reseed(s, entropy, more=b""):
    """10.1.2.4: fresh entropy input and additional input into the state."""
    _update(s, entropy, more)
    s[_LEFT] = _RESEED


def generate(s, n, more=b""):
    """n bytes (10.1.2.5), `more` the additional input."""
    if more:
        _update(s, more)
    k = s[_K:_V]
    v = s[_V:_LEFT]
    out = b""
    while len(out) < n:
        v = _mac(k, v)
        out += v
    s[_V:_LEFT] = v
    _update(s, more)
    return out[:n]


def start(hal, pers):
    """The HAL's DRBG, from its raw generator `hal.entropy` (a 32-byte
    entropy input and a 16-byte nonce), and its first block."""
    hal._rb = instantiate(hal.entropy(48), pers)
    refill(hal, 0)


def refill(hal, n):
    """A new block for hal.rand, which wants n bytes of it: the index of
    the first. Every _RESEED blocks a reseed first, from the raw generator."""
    if n > 32:
        raise ValueError("at most 32 random bytes at a time")
    s = hal._rb
    more = bytes(getattr(hal, "pool", b""))   # a copy: an IRQ may stir while it is hashed
    s[_LEFT] -= 1
    if not s[_LEFT]:
        reseed(s, hal.entropy(32), more)
    s[_BLOCK:_K] = generate(s, 32, more)
    s[0] = _BLOCK
    return _BLOCK
