"""The board's images built as a table maker types it, with the vendored
ESP32-S3 kit (docs/deploy.md, Building with the vendored kit): `make
firmware` and `make firmware PRODUCTION=1` with a throwaway signing key.
Not in `make test` (a fresh clone may have no kit, and each build takes
minutes): `make test-kit` runs it, and CI does where the kit is."""

import os
import subprocess

import pytest

from host_tools.image import board_image, espkit, vfs_image
from host_tools.image.mpenv import ROOT

ESPSECURE = espkit.IDF_VENV / "bin" / "espsecure.py"
MAKE_ENV = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "IDF_PATH", "ESP_VENDOR",
            "MICROPY_DIR")


def _make(*args):
    """make as a person types it: no ESP-IDF of theirs, the kit beside the project."""
    env = {k: v for k, v in os.environ.items() if k not in MAKE_ENV}
    return subprocess.run(["make", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)


def _espsecure(*args):
    return subprocess.run([str(ESPSECURE), *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module", autouse=True)
def _kit():
    assert espkit.available(), "no ESP32-S3 kit in %s" % espkit.DEFAULT_VENDOR


def test_make_firmware_builds_the_board_image_with_the_kit():
    r = _make("firmware")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "(the vendored kit)" in r.stdout
    image = board_image.IMAGE
    table = vfs_image.image_partitions(image, board_image.TABLE_AT)
    assert table["vfs"] == vfs_image.partition(board_image.PARTITIONS)
    assert image.stat().st_size < vfs_image.partition(board_image.PARTITIONS)[0]


def test_make_firmware_production_is_signed_with_the_key_it_was_given(tmp_path):
    key, other = tmp_path / "signing.pem", tmp_path / "other.pem"
    for k in (key, other):
        r = _espsecure("generate_signing_key", "--version", "2", "--scheme", "rsa3072", str(k))
        assert r.returncode == 0, r.stderr
    r = _make("firmware", "PRODUCTION=1", "SIGNING_KEY=%s" % key)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = board_image.PRODUCTION_OUT
    config = (out / "sdkconfig").read_text()
    for setting in ("CONFIG_SECURE_BOOT=y", "CONFIG_SECURE_FLASH_ENC_ENABLED=y",
                    "CONFIG_NVS_ENCRYPTION=y", "CONFIG_NVS_SEC_KEY_PROTECT_USING_FLASH_ENC=y"):
        assert setting in config.splitlines(), setting
    table = vfs_image.image_partitions(board_image.PRODUCTION_IMAGE, board_image.PRODUCTION_TABLE_AT)
    assert table["vfs"] == vfs_image.partition(board_image.PRODUCTION_PARTITIONS)
    assert table["ota_0"] == vfs_image.partition(board_image.PRODUCTION_PARTITIONS, "ota_0")
    for part in ("micropython.bin", "bootloader/bootloader.bin"):
        good = _espsecure("verify_signature", "--version", "2", "--keyfile", str(key),
                          str(out / part))
        assert "verification successful" in good.stdout, (part, good.stdout, good.stderr)
        bad = _espsecure("verify_signature", "--version", "2", "--keyfile", str(other),
                         str(out / part))
        assert "verification successful" not in bad.stdout, part
