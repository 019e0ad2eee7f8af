"""Sealed files (firmware/sealed.py) on both interpreters: what goes in
comes back, nothing of it readable in the file, and a file changed,
cut short, of another key or of another kind refused."""

import os

from firmware.sealed import MAGIC, Sealer
from firmware.fakes.hal import FakeHal

KEY = bytes(range(32))
PATH = "sealed-test.rec"            # in the working folder (no temp folder on MicroPython)


def _clean():
    for name in (PATH, PATH + ".new"):
        try:
            os.remove(name)
        except OSError:
            pass


def _read():
    with open(PATH, "rb") as f:
        return f.read()


def _refused(seal, why):
    try:
        seal.load(PATH)
    except ValueError as e:
        assert why in str(e), str(e)
        return
    raise AssertionError("a file taken: %r" % (_read(),))


def test_what_is_sealed_comes_back_and_is_not_in_the_file():
    _clean()
    try:
        seal = Sealer(KEY, FakeHal(seed=3).rand, b"hand")
        assert seal.load(PATH) is None
        tiles = b'"tiles": "' + b"0a1b2c3d" * 36 + b'"'     # longer than a keystream block
        for data in (b"", b"x", tiles, bytes(range(256))):
            seal.save(PATH, data)
            assert bytes(seal.load(PATH)) == data
            raw = _read()
            assert raw[:len(MAGIC)] == MAGIC and len(raw) == len(MAGIC) + 8 + len(data) + 16
            assert len(data) < 8 or data[:8] not in raw
        first = _read()
        seal.save(PATH, bytes(range(256)))        # the same data again: a new nonce
        assert _read() != first and bytes(seal.load(PATH)) == bytes(range(256))
        assert not _exists(PATH + ".new")
    finally:
        _clean()


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def test_a_file_changed_short_or_not_this_tables_is_refused():
    _clean()
    try:
        seal = Sealer(KEY, FakeHal(seed=4).rand, b"hand")
        seal.save(PATH, b"the walls of hand 12")
        good = _read()
        for at in range(len(good)):
            bad = bytearray(good)
            bad[at] ^= 0x40
            with open(PATH, "wb") as f:
                f.write(bad)
            _refused(seal, "not a sealed file" if at < len(MAGIC) else "does not check")
        for cut in (0, 5, len(MAGIC) + 8 + 15, len(good) - 1):
            with open(PATH, "wb") as f:
                f.write(good[:cut])
            _refused(seal, "not a sealed file" if cut < len(MAGIC) + 8 + 16 else "does not check")
        with open(PATH, "wb") as f:
            f.write(good)
        _refused(Sealer(bytes(32), FakeHal(seed=4).rand, b"hand"), "does not check")
        _refused(Sealer(KEY, FakeHal(seed=4).rand, b"walls"), "does not check")
        assert bytes(seal.load(PATH)) == b"the walls of hand 12"
    finally:
        _clean()
