"""The board's definition (firmware/image/FUZHOU_TABLE_S3): its partition
tables, its settings, what the port's CMake makes of it, and the
production variant's secure boot and flash encryption
(docs/security.md)."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from host_tools.image import board_image, vfs_image
from host_tools.tests.board_image_helpers import BOARD_DIR, FLASH, MP, _env, partitions


def _aligned_in_order(rows, start):
    """Every partition on ESP-IDF's alignment (apps 64 KB, data 4 KB), in
    order from `start`, none overlapping, all inside the 8 MB."""
    end = start
    for r in rows:
        align = 0x10000 if r["type"] == "app" else 0x1000
        assert r["offset"] % align == 0 and r["size"] % 0x1000 == 0, r
        assert r["offset"] >= end, r
        end = r["offset"] + r["size"]
    assert end <= FLASH


def test_the_partition_table_fits_8_mb_with_esp_idf_alignment():
    rows = partitions()
    by_name = {r["name"]: r for r in rows}
    assert len(by_name) == len(rows)
    # The partition table itself is at 0x8000 (4 KB); makeimg.py takes the
    # nvs partition's offset as the end of the table's room.
    assert rows[0]["name"] == "nvs" and rows[0]["offset"] == 0x9000
    _aligned_in_order(rows, 0x9000)
    nvs, phy = by_name["nvs"], by_name["phy_init"]
    assert (nvs["type"], nvs["subtype"]) == ("data", "nvs") and nvs["size"] >= 0x3000
    assert (phy["type"], phy["subtype"]) == ("data", "phy")
    apps = [r for r in rows if r["type"] == "app"]
    assert [(r["name"], r["subtype"]) for r in apps] == [("factory", "factory")]   # no OTA
    assert apps[0]["size"] >= 2 * 1024 * 1024
    vfs = by_name["vfs"]
    assert vfs["type"] == "data" and vfs["offset"] + vfs["size"] == FLASH       # the rest


def test_sdkconfig_board_names_the_partition_table_and_8_mb():
    lines = (BOARD_DIR / "sdkconfig.board").read_text().splitlines()
    assert "CONFIG_ESPTOOLPY_FLASHSIZE_8MB=y" in lines
    assert "CONFIG_PARTITION_TABLE_CUSTOM=y" in lines
    assert 'CONFIG_PARTITION_TABLE_CUSTOM_FILENAME="@MICROPY_BOARD_DIR@/partitions.csv"' in lines
    assert "CONFIG_SPIRAM=y" not in lines and "CONFIG_BT_ENABLED=n" in lines


def _port_config(tmp_path, variant=None, key=None):
    """ports/esp32/CMakeLists.txt run by CMake with a stand-in for ESP-IDF's
    project.cmake: (CMake's result, {setting: value} of the one sdkconfig it
    makes from the board's list, the last one read winning)."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("no cmake on this machine")
    idf = tmp_path / "idf" / "tools" / "cmake"
    idf.mkdir(parents=True)
    (idf / "project.cmake").write_text(
        "function(idf_build_set_property)\nendfunction()\n"
        "macro(project)\n    _project(${ARGV0} NONE)\n"
        '    message(STATUS "board: ${IDF_TARGET} ${MICROPY_FROZEN_MANIFEST} ${MICROPY_PY_BTREE}")\n'
        "endmacro()\n")
    out = tmp_path / "build"
    args = [cmake, "-S", str(MP / "ports" / "esp32"), "-B", str(out),
            "-DMICROPY_BOARD=FUZHOU_TABLE_S3", "-DMICROPY_BOARD_DIR=%s" % BOARD_DIR]
    if variant:
        args.append("-DMICROPY_BOARD_VARIANT=%s" % variant)
    env = _env(IDF_PATH=str(tmp_path / "idf"))
    if key:
        env[board_image.SIGNING_KEY_ENV] = key
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    settings = {}
    if r.returncode == 0:
        for line in (out / "sdkconfig.combined").read_text().splitlines():
            if line.startswith("CONFIG_") and "=" in line:
                name, value = line.split("=", 1)
                settings[name] = value
    return r, settings


def test_the_port_reads_this_board_and_finds_its_partition_table(tmp_path):
    """What the port gives ESP-IDF (the target, the frozen manifest, the
    sdkconfig it makes from the board's list) is this board's, and the
    partition table's name resolves, as ESP-IDF resolves it (from
    ports/esp32), to this folder's partitions.csv."""
    r, settings = _port_config(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "board: esp32s3 %s OFF" % (BOARD_DIR / "manifest.py") in r.stdout
    name = settings["CONFIG_PARTITION_TABLE_CUSTOM_FILENAME"].strip('"')
    assert Path(os.path.join(MP / "ports" / "esp32", name)).resolve() == BOARD_DIR / "partitions.csv"
    assert settings["CONFIG_ESPTOOLPY_FLASHSIZE_8MB"] == "y"
    assert settings["CONFIG_ESPTOOLPY_FLASHSIZE_4MB"] == ""
    assert "CONFIG_BT_NIMBLE_ENABLED" not in settings and "CONFIG_SPIRAM_MODE_QUAD" not in settings
    assert "CONFIG_SECURE_BOOT" not in settings and "CONFIG_SECURE_FLASH_ENC_ENABLED" not in settings


# -- the production image (docs/security.md) ----------------------------------------

# What sdkconfig.production sets, each name checked against ESP-IDF v5.5.1's
# Kconfig (components/bootloader/Kconfig.projbuild, nvs_flash, nvs_sec_provider,
# partition_table) when it was written: ESP-IDF is not on this machine.
PRODUCTION_SETTINGS = {
    "CONFIG_SECURE_BOOT": "y", "CONFIG_SECURE_BOOT_V2_ENABLED": "y",
    "CONFIG_SECURE_SIGNED_APPS_RSA_SCHEME": "y", "CONFIG_SECURE_BOOT_BUILD_SIGNED_BINARIES": "y",
    "CONFIG_SECURE_FLASH_ENC_ENABLED": "y", "CONFIG_SECURE_FLASH_ENCRYPTION_AES128": "y",
    "CONFIG_SECURE_FLASH_ENCRYPTION_MODE_RELEASE": "y", "CONFIG_SECURE_FLASH_CHECK_ENC_EN_IN_APP": "y",
    "CONFIG_SECURE_DISABLE_ROM_DL_MODE": "y",
    "CONFIG_NVS_ENCRYPTION": "y", "CONFIG_NVS_SEC_KEY_PROTECT_USING_FLASH_ENC": "y",
    "CONFIG_PARTITION_TABLE_OFFSET": "0xD000", "CONFIG_PARTITION_TABLE_CUSTOM": "y"}


def test_the_production_variant_turns_on_secure_boot_and_flash_encryption(tmp_path):
    """BOARD_VARIANT=PRODUCTION (make firmware PRODUCTION=1): the board's
    settings, then sdkconfig.production's over them, with the signing key
    given and this folder's production partition table; its own freeze.
    Nothing that leaves JTAG, the ROM's download mode or plaintext flash
    writes open is set."""
    key = str(tmp_path / "outside" / "signing key.pem")
    r, settings = _port_config(tmp_path, "PRODUCTION", key)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "board: esp32s3 %s OFF" % (BOARD_DIR / "manifest_production.py") in r.stdout
    for name, value in PRODUCTION_SETTINGS.items():
        assert settings.get(name) == value, name
    assert settings["CONFIG_SECURE_BOOT_SIGNING_KEY"] == '"%s"' % key
    name = settings["CONFIG_PARTITION_TABLE_CUSTOM_FILENAME"].strip('"')
    assert (Path(os.path.join(MP / "ports" / "esp32", name)).resolve()
            == BOARD_DIR / "partitions-production.csv")
    assert settings["CONFIG_ESPTOOLPY_FLASHSIZE_8MB"] == "y"        # the board's, kept
    for insecure in ("CONFIG_SECURE_BOOT_INSECURE", "CONFIG_SECURE_BOOT_ALLOW_JTAG",
                     "CONFIG_SECURE_FLASH_ENCRYPTION_MODE_DEVELOPMENT",
                     "CONFIG_SECURE_INSECURE_ALLOW_DL_MODE", "CONFIG_SECURE_ENABLE_SECURE_ROM_DL_MODE",
                     "CONFIG_SECURE_FLASH_UART_BOOTLOADER_ALLOW_ENC"):
        assert insecure not in settings, insecure
    assert "@" not in "".join(settings.values())
    assert int(settings["CONFIG_PARTITION_TABLE_OFFSET"], 16) == board_image.PRODUCTION_TABLE_AT
    # Without the key's path the variant stops CMake, saying how to build it.
    r, _ = _port_config(tmp_path / "again", "PRODUCTION")
    assert r.returncode != 0
    assert "make firmware PRODUCTION=1 SIGNING_KEY=" in " ".join(r.stderr.split())   # CMake wraps it


def test_the_production_partition_table_has_nvs_keys_and_two_ota_slots():
    rows = partitions("partitions-production.csv")
    by_name = {r["name"]: r for r in rows}
    assert [r["name"] for r in rows] == ["nvs", "nvs_keys", "otadata", "phy_init", "ota_0",
                                         "ota_1", "vfs"]
    # After the partition table at 0xD000 (4 KB); makeimg.py takes the nvs
    # partition's offset as the end of the table's room (3 KB at most).
    _aligned_in_order(rows, board_image.PRODUCTION_TABLE_AT + 0x1000)
    keys = by_name["nvs_keys"]
    assert (keys["type"], keys["subtype"], keys["size"]) == ("data", "nvs_keys", 0x1000)
    assert keys["flags"] == ["encrypted"]                 # ESP-IDF requires it
    assert by_name["nvs"]["subtype"] == "nvs" and by_name["nvs"]["flags"] == []   # NVS's own scheme
    assert (by_name["otadata"]["subtype"], by_name["otadata"]["size"]) == ("ota", 0x2000)
    apps = [r for r in rows if r["type"] == "app"]
    assert [r["subtype"] for r in apps] == ["ota_0", "ota_1"]
    assert apps[0]["size"] == apps[1]["size"] >= 2 * 1024 * 1024
    vfs = by_name["vfs"]
    assert vfs["type"] == "data" and vfs["offset"] + vfs["size"] == FLASH
    assert vfs_image.partition(BOARD_DIR / "partitions-production.csv") == (vfs["offset"],
                                                                             vfs["size"])


def test_mpconfigboard_names_the_board():
    text = (BOARD_DIR / "mpconfigboard.h").read_text()
    assert '#define MICROPY_HW_BOARD_NAME               "Fuzhou mahjong table (ESP32-S3)"' in text
    assert re.search(r"#define MICROPY_HW_ENABLE_UART_REPL\s+\(0\)", text)
    assert re.search(r"#define MICROPY_PY_BLUETOOTH\s+\(0\)", text)
