"""The ESP32 HAL's secrets (firmware/hal/esp32.py) on CPython, with
stand-ins for the board's `machine`, `network`, `micropython` and `esp32`
modules: on a production image the service key and the tag table are NVS blobs; the
files make flash ERASE=1 leaves on the filesystem are moved into NVS once
and removed; a bench image keeps them as files. (CPython only: the
stand-ins replace modules MicroPython has built in.)"""

import importlib
import os
import sys
import types

import pytest

from firmware import tags as fwtags
from firmware.fakes.hal import unload
from firmware.fakes.hal import FIRMWARE_DIR


class FakeNVS:
    """esp32.NVS as MicroPython 1.28 gives it (ports/esp32/esp32_nvs.c):
    get_blob fills the buffer and returns the blob's length, OSError when
    the key is missing or the buffer too short; set_blob takes a buffer."""
    spaces = {}

    def __init__(self, space):
        self.blobs = self.spaces.setdefault(space, {})
        self.commits = 0

    def get_blob(self, key, buf):
        if key not in self.blobs:
            raise OSError(2, "ESP_ERR_NVS_NOT_FOUND")
        data = self.blobs[key]
        if len(data) > len(buf):
            raise OSError(-1, "ESP_ERR_NVS_INVALID_LENGTH")
        buf[:len(data)] = data
        return len(data)

    def set_blob(self, key, value):
        assert len(key) <= 15, key                    # NVS key names
        self.blobs[key] = bytes(value)

    def commit(self):
        self.commits += 1


@pytest.fixture
def esp32hal(monkeypatch):
    """The module, imported with the stand-ins (and forgotten after)."""
    micropython = types.ModuleType("micropython")
    micropython.const = lambda x: x
    micropython.kbd_intr = lambda c: None
    esp32 = types.ModuleType("esp32")
    esp32.NVS = FakeNVS
    FakeNVS.spaces = {}
    for name, mod in (("micropython", micropython), ("esp32", esp32),
                      ("machine", types.ModuleType("machine")),
                      ("network", types.ModuleType("network"))):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.delitem(sys.modules, "firmware.hal.esp32", raising=False)
    yield importlib.import_module("firmware.hal.esp32")
    unload("firmware.hal.esp32")     # from the package too, or the next import finds this one


def _hal(module, folder, nvs):
    """An Esp32Hal with only what its secrets use: its store and its mode
    (the constructor would claim the USB console)."""
    hal = module.Esp32Hal.__new__(module.Esp32Hal)
    hal.store = str(folder) + "/"
    hal.nvs = nvs
    return hal


def _nvs():
    return FakeNVS.spaces.get("table", {})


def test_a_production_board_moves_its_provisioning_files_into_nvs_once(esp32hal, tmp_path):
    key = os.urandom(32)
    (tmp_path / "service.key").write_bytes(key)
    table = open(FIRMWARE_DIR + "/tags.txt", "rb").read()
    (tmp_path / "tags.txt").write_bytes(table)
    hal = _hal(esp32hal, tmp_path, True)
    with hal.secret("service.key") as f:
        assert f.read() == key
    assert _nvs() == {"service.key": key}
    assert not (tmp_path / "service.key").exists()           # no copy a file read can find
    loaded = fwtags.load("tags.txt", hal)                      # read twice: a seekable stream
    assert len(loaded) == 288 and loaded.path == "tags.txt"
    assert _nvs()["tags.txt"] == table and not (tmp_path / "tags.txt").exists()
    # From now on NVS answers; a file put on the filesystem later is not read.
    (tmp_path / "service.key").write_bytes(bytes(32))
    with hal.secret("service.key") as f:
        assert f.read() == key
    assert (tmp_path / "service.key").read_bytes() == bytes(32)


def test_no_secret_anywhere_is_an_oserror_as_a_missing_file_is(esp32hal, tmp_path):
    hal = _hal(esp32hal, tmp_path, True)
    with pytest.raises(OSError):
        hal.secret("service.key")
    with pytest.raises(ValueError) as e:                      # main.py: fault 40 config_invalid
        fwtags.load("tags.txt", hal)
    assert str(e.value).startswith("tags: cannot read tags.txt")


def test_rfid_learns_lines_are_written_whole_into_nvs(esp32hal, tmp_path):
    hal = _hal(esp32hal, tmp_path, True)
    lines = ["# learned\n", "4d4a0000 1m\n", "4d4a0001 2m\n"]
    hal.set_secret("tags.txt", iter(lines))
    assert _nvs()["tags.txt"] == "".join(lines).encode()
    assert len(fwtags.load("tags.txt", hal)) == 2
    assert os.listdir(tmp_path) == []


def test_a_secret_longer_than_the_limit_is_refused_and_the_file_kept(esp32hal, tmp_path):
    hal = _hal(esp32hal, tmp_path, True)
    big = b"4d4a0000 1m\n" * 800                              # 9,600 bytes
    (tmp_path / "tags.txt").write_bytes(big)
    with pytest.raises(OSError):
        hal.secret("tags.txt")
    assert (tmp_path / "tags.txt").read_bytes() == big and _nvs() == {}
    with pytest.raises(OSError):
        hal.set_secret("tags.txt", [big])
    assert _nvs() == {}


def test_a_bench_image_keeps_its_secrets_as_files(esp32hal, tmp_path):
    hal = _hal(esp32hal, tmp_path, False)
    (tmp_path / "service.key").write_bytes(b"k" * 32)
    with hal.secret("service.key") as f:
        assert f.read() == b"k" * 32
    hal.set_secret("tags.txt", [b"4d4a0000 1m\n"])
    assert (tmp_path / "tags.txt").read_bytes() == b"4d4a0000 1m\n"
    assert (tmp_path / "service.key").exists() and _nvs() == {}
