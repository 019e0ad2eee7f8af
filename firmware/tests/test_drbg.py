"""The DRBG (firmware/drbg.py), on both interpreters: NIST's known answers
for HMAC_DRBG with SHA-256, then the HAL's random bytes (HalCommon.rand)
as blocks of that DRBG, never the raw generator's bytes.

The known answers are NIST CAVP's (Cryptographic Algorithm Validation
Program, Random Number Generators: the DRBG test vectors for SP 800-90A,
drbgtestvectors.zip, https://csrc.nist.gov/projects/cryptographic-algorithm-validation-program/random-number-generators):
each case's second Generate call returns ReturnedBits (1024 bits), the
first one's output is discarded, as the DRBG Validation System
prescribes. All three are [SHA-256] with EntropyInputLen 256, NonceLen
128, ReturnedBitsLen 1024.
"""

from binascii import hexlify, unhexlify

from firmware import drbg
from firmware.link.handlers import HANDLERS
from firmware.hal import HalCommon


def _h(*parts):
    return unhexlify("".join(parts))


def _returned_bits(s):
    """The second of two Generate calls of 1024 bits, the first discarded."""
    drbg.generate(s, 128)
    return drbg.generate(s, 128)


def test_no_reseed_count_0():
    """drbgvectors_no_reseed/HMAC_DRBG.rsp, [SHA-256],
    [PredictionResistance = False], PersonalizationStringLen 0,
    AdditionalInputLen 0, COUNT = 0."""
    s = drbg.instantiate(_h("ca851911349384bffe89de1cbdc46e6831e44d34a4fb935ee285dd14b71a7488",
                            "659ba96c601dc69fc902940805ec0ca8"))
    assert _returned_bits(s) == _h(
        "e528e9abf2dece54d47c7e75e5fe302149f817ea9fb4bee6f4199697d04d5b89",
        "d54fbb978a15b5c443c9ec21036d2460b6f73ebad0dc2aba6e624abf07745bc1",
        "07694bb7547bb0995f70de25d6b29e2d3011bb19d27676c07162c8b5ccde0668",
        "961df86803482cb37ed6d5c0bb8d50cf1f50d476aa0458bdaba806f48be9dcb8")


def test_no_reseed_with_a_personalization_string_count_0():
    """drbgvectors_no_reseed/HMAC_DRBG.rsp, [SHA-256],
    [PredictionResistance = False], PersonalizationStringLen 256,
    AdditionalInputLen 0, COUNT = 0."""
    s = drbg.instantiate(_h("5cacc68165a2e2ee20812f35ec73a79dbf30fd475476ac0c44fc6174cdac2b55",
                            "6f885496c1e63af620becd9e71ecb824"),
                         _h("e72dd8590d4ed5295515c35ed6199e9d211b8f069b3058caa6670b96ef1208d0"))
    assert _returned_bits(s) == _h(
        "f1012cf543f94533df27fedfbf58e5b79a3dc517a9c402bdbfc9a0c0f721f9d5",
        "3faf4aafdc4b8f7a1b580fcaa52338d4bd95f58966a243cdcd3f446ed4bc546d",
        "9f607b190dd69954450d16cd0e2d6437067d8b44d19a6af7a7cfa8794e5fbd72",
        "8e8fb2f2e8db5dd4ff1aa275f35886098e80ff844886060da8b1e7137846b23b")


def test_reseed_and_additional_input_count_0():
    """drbgvectors_pr_false/HMAC_DRBG.rsp, [SHA-256],
    [PredictionResistance = False], PersonalizationStringLen 0,
    AdditionalInputLen 256, COUNT = 0: instantiate, reseed with
    EntropyInputReseed and AdditionalInputReseed, two generates with their
    AdditionalInput."""
    s = drbg.instantiate(_h("05ac9fc4c62a02e3f90840da5616218c6de5743d66b8e0fbf833759c5928b53d",
                            "2b89a17904922ed8f017a63044848545"))
    drbg.reseed(s, _h("2791126b8b52ee1fd9392a0a13e0083bed4186dc649b739607ac70ec8dcecf9b"),
                _h("43bac13bae715092cf7eb280a2e10a962faf7233c41412f69bc74a35a584e54c"))
    drbg.generate(s, 128, _h("3f2fed4b68d506ecefa21f3f5bb907beb0f17dbc30f6ffbba5e5861408c53a1e"))
    assert drbg.generate(
        s, 128, _h("529030df50f410985fde068df82b935ec23d839cb4b269414c0ede6cffea5b68")) == _h(
        "02ddff5173da2fcffa10215b030d660d61179e61ecc22609b1151a75f1cbcbb4",
        "363c3a89299b4b63aca5e581e73c860491010aa35de3337cc6c09ebec8c91a62",
        "87586f3a74d9694b462d2720ea2e11bbd02af33adefb4a16e6b370fa0effd57d",
        "607547bdcfbb7831f54de7073ad2a7da987a0016a82fa958779a168674b56524")


# -- the HAL's random bytes ------------------------------------------------

class Raw:
    """A raw generator that keeps what it handed out: bytes 0, 1, 2, ..."""

    def __init__(self):
        self.asked = []
        self.given = bytearray()

    def __call__(self, n):
        self.asked.append(n)
        out = bytes((len(self.given) + i) & 0xFF for i in range(n))
        self.given.extend(out)
        return out


class Board(HalCommon):
    """HalCommon on a raw generator, with a backend's jitter pool or not."""

    def __init__(self, raw, pers=b"", pool=None):
        self.entropy = raw
        if pool is not None:
            self.pool = pool
        HalCommon.__init__(self, pers)


def _block(hal):
    """One block's 32 bytes, asked for as the firmware asks: a byte for a
    die, 16 for a nonce, 8 for a session token..."""
    return bytes(hal.rand(16) + hal.rand(8) + hal.rand(4) + hal.rand(2) + hal.rand(1)
                 + hal.rand(1))


def test_the_hals_bytes_are_the_drbgs_blocks_and_never_the_raw_generators():
    raw = Raw()
    hal = Board(raw, b"board 1")
    assert raw.asked == [48]               # entropy input and nonce, at once
    s = drbg.instantiate(bytes(raw.given), b"board 1")
    for _ in range(15):
        assert _block(hal) == drbg.generate(s, 32)
    assert raw.asked == [48]               # no reseed in the first 15 blocks
    block = _block(hal)                    # the 16th: reseeded first
    assert raw.asked == [48, 32]
    drbg.reseed(s, bytes(raw.given[48:]))
    assert block == drbg.generate(s, 32)
    for _ in range(15):
        _block(hal)
    assert raw.asked == [48, 32]
    _block(hal)                            # every 16th block
    assert raw.asked == [48, 32, 32]


def test_bytes_left_in_a_block_too_few_for_a_request_are_never_handed_out():
    raw = Raw()
    hal = Board(raw)
    s = drbg.instantiate(bytes(raw.given))
    first, second = drbg.generate(s, 32), drbg.generate(s, 32)
    assert bytes(hal.rand(24)) == first[:24]
    assert bytes(hal.rand(16)) == second[:16]      # 8 left: a new block
    assert bytes(hal.rand(16)) == second[16:]


def test_at_most_32_bytes_at_a_time():
    hal = Board(Raw())
    try:
        hal.rand(33)
    except ValueError:
        return
    raise AssertionError("rand(33) answered")


def test_the_same_raw_bytes_give_the_same_bytes_and_another_personalization_others():
    """A virtual table is reproducible from its seed (its raw generator);
    the personalization tells two boards with the same raw bytes apart."""
    a, b, c = Board(Raw(), b"board 1"), Board(Raw(), b"board 1"), Board(Raw(), b"board 2")
    assert _block(a) == _block(b)
    assert _block(a) != _block(c)


def test_every_block_takes_the_backends_jitter_pool_as_additional_input():
    raw = Raw()
    pool = bytearray(32)
    hal = Board(raw, b"", pool)
    s = drbg.instantiate(bytes(raw.given))
    assert _block(hal) == drbg.generate(s, 32, bytes(32))
    pool[5] ^= 0x5A                        # a physical event's time, stirred in
    stirred = _block(hal)
    assert stirred == drbg.generate(s, 32, bytes(pool))
    still = Board(Raw(), b"", bytearray(32))
    _block(still)
    assert _block(still) != stirred


class Idle:
    pass


def test_a_key_less_service_open_gets_the_drbgs_bytes_as_its_nonces_prefix():
    import json

    from firmware import frame
    from firmware.link.server import LinkServer
    from firmware.tests.test_link_server import REQUEST, Line
    raw = Raw()
    hal = Board(raw)
    hal.link = Line(frame.encode(REQUEST, 1, b'{"op":"service_open"}'))
    server = LinkServer(hal, "0.0.0", "test")
    server.attach(Idle(), HANDLERS)        # service_open asks nothing of the controller
    for t in range(10):
        server.poll(t)
    answer = json.loads(str(hal.link.out[0][frame.HEADER:-2], "utf-8"))
    s = drbg.instantiate(bytes(raw.given))
    # The boot's prefix (8 bytes), then the challenge's number 1 and its tick.
    assert answer["nonce"][:16] == hexlify(drbg.generate(s, 32)[:8]).decode(), answer
    assert answer["nonce"][16:24] == "00000001", answer
