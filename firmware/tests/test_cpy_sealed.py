"""Sealed files (firmware/sealed.py), property-based (CPython, hypothesis):
any data comes back whole, and any change of the file, a byte or its
length, is refused."""

from hypothesis import given, settings, strategies as st

from firmware.sealed import Sealer
from firmware.fakes.hal import FakeHal

KEY = bytes(range(32))


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=700), at=st.integers(min_value=0), flip=st.integers(1, 255),
       cut=st.integers(min_value=1))
def test_any_data_comes_back_and_any_change_is_refused(tmp_path_factory, data, at, flip, cut):
    path = str(tmp_path_factory.mktemp("sealed") / "hand.rec")
    seal = Sealer(KEY, FakeHal(seed=len(data)).rand, b"hand")
    seal.save(path, data)
    assert bytes(seal.load(path)) == data
    with open(path, "rb") as f:
        good = f.read()
    changed = bytearray(good)
    changed[at % len(good)] ^= flip
    shorter = good[:len(good) - 1 - cut % len(good)]
    for bad in (bytes(changed), shorter, good + b"\x00"):
        with open(path, "wb") as f:
            f.write(bad)
        try:
            seal.load(path)
        except ValueError:
            continue
        raise AssertionError("a changed file was taken")
