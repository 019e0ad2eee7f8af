"""`make firmware` as a person types it on a machine without ESP-IDF
(host_tools/image/board_image.py): one line saying what is missing, the
port's build called as the port's own Makefile calls it, the production
build and its signing key, the build folder made afresh when an input
changes, and the vendored ESP32-S3 kit (ESP_VENDOR)."""

import os
from pathlib import Path

import pytest

from host_tools.image import board_image
from host_tools.tests.board_image_helpers import (
    BOARD_DIR, MP, ROOT, _env, _fake_idf, _make, _micropython_tree, _tool_line)


# -- make firmware without ESP-IDF ----------------------------------------------

def test_make_firmware_without_idf_path_says_so_in_one_line():
    line = _tool_line(_make("firmware"), 2)
    assert "IDF_PATH is not set" in line and "export.sh" in line and "v5.5.1" in line


def test_make_firmware_with_an_empty_idf_path_names_idf_py(tmp_path):
    line = _tool_line(_make("firmware", IDF_PATH=str(tmp_path)), 2)
    assert "idf.py" in line and str(tmp_path) in line


def test_make_firmware_without_export_sh_says_idf_py_is_not_on_path(tmp_path):
    env = _fake_idf(tmp_path / "idf")
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if not (Path(d) / "idf.py").exists())
    line = _tool_line(_make("firmware", IDF_PATH=env["IDF_PATH"], PATH=path), 2)
    assert "idf.py is not on PATH" in line and "export.sh" in line


def test_make_firmware_refuses_an_esp_idf_micropython_does_not_support(tmp_path):
    env = _fake_idf(tmp_path / "idf", version="ESP-IDF v4.4.7")
    line = _tool_line(_make("firmware", **env), 2)
    assert "this is ESP-IDF v4.4.7" in line


def test_make_firmware_asks_for_a_full_micropython_tree(tmp_path):
    env = _fake_idf(tmp_path / "idf")
    tree = _micropython_tree(tmp_path / "mp", full=False)
    line = _tool_line(_make("firmware", "MICROPY_DIR=%s" % tree, **env), 2)
    assert "full MicroPython v1.28.0 tree" in line and "lib/mbedtls_errors" in line


def test_build_runs_the_ports_make_with_this_board(tmp_path, capfd):
    """With ESP-IDF (a stand-in that records its call) and a full tree,
    idf.py is called as the port's own Makefile calls it, with the board's
    folder and our build folder; the stand-in fails, and so does the
    build, saying so."""
    env = _env(**_fake_idf(tmp_path / "idf"))
    tree = _micropython_tree(tmp_path / "mp")
    out = tmp_path / "out"
    assert board_image.build(str(tree), env=env, out=out) == 1
    args = (tmp_path / "idf" / "args.txt").read_text().split()
    assert args == ["-C", str(tree / "ports" / "esp32"), "-D", "MICROPY_BOARD=FUZHOU_TABLE_S3",
                    "-D", "MICROPY_BOARD_DIR=%s" % BOARD_DIR, "-B", str(out), "build"]
    err = capfd.readouterr().err
    assert err.splitlines()[-1] == "make firmware: the ESP32 build failed (its output is above)"


def test_make_firmware_production_needs_a_signing_key_outside_the_project(tmp_path):
    line = _tool_line(_make("firmware", "PRODUCTION=1"), 2)
    assert line == board_image.NEEDS_KEY
    line = _tool_line(_make("firmware", "PRODUCTION=1", "SIGNING_KEY=%s" % (tmp_path / "no.pem")), 2)
    assert line == "make firmware PRODUCTION=1: no SIGNING_KEY file %s" % (tmp_path / "no.pem")
    inside = ROOT / "build" / "test-signing-key.pem"
    inside.write_text("-----BEGIN PRIVATE KEY-----\n")
    linked = tmp_path / "linked.pem"          # a path outside that leads inside
    linked.symlink_to(inside)
    try:
        for given in ("build/test-signing-key.pem", str(linked)):
            line = _tool_line(_make("firmware", "PRODUCTION=1", "SIGNING_KEY=%s" % given), 2)
            assert line.startswith("make firmware PRODUCTION=1: SIGNING_KEY=%s lies inside the"
                                   " project (build/test-signing-key.pem)" % given), line
    finally:
        inside.unlink()
    key = tmp_path / "sb.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    line = _tool_line(_make("firmware", "SIGNING_KEY=%s" % key), 2)
    assert line == "make firmware: SIGNING_KEY signs the production image only: give PRODUCTION=1 too"
    # A key outside, no ESP-IDF: what is missing, in one line, as for the bench image.
    line = _tool_line(_make("firmware", "PRODUCTION=1", "SIGNING_KEY=%s" % key), 2)
    assert "IDF_PATH is not set" in line and "export.sh" in line


def test_the_production_build_runs_the_ports_make_with_the_variant_and_the_key(tmp_path, capfd):
    env = _env(**_fake_idf(tmp_path / "idf"))
    tree = _micropython_tree(tmp_path / "mp")
    key = tmp_path / "keys" / "sb.pem"
    key.parent.mkdir()
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    out = tmp_path / "out"
    assert board_image.build(str(tree), env=env, out=out, production=True,
                             signing_key=str(key)) == 1
    args = (tmp_path / "idf" / "args.txt").read_text().split()
    assert args == ["-C", str(tree / "ports" / "esp32"), "-D", "MICROPY_BOARD=FUZHOU_TABLE_S3",
                    "-D", "MICROPY_BOARD_DIR=%s" % BOARD_DIR, "-D", "MICROPY_BOARD_VARIANT=PRODUCTION",
                    "-B", str(out), "build"]
    assert (tmp_path / "idf" / "key.txt").read_text().strip() == str(key)
    assert "building FUZHOU_TABLE_S3 for production" in capfd.readouterr().out
    # Another key: ESP-IDF must make its sdkconfig again to read it.
    (out / "sdkconfig").write_text("made by ESP-IDF")
    board_image.fresh_build_dir(out, tree, tmp_path / "idf", "v5.5.1", key)
    assert (out / "sdkconfig").exists()
    board_image.fresh_build_dir(out, tree, tmp_path / "idf", "v5.5.1", tmp_path / "other.pem")
    assert not (out / "sdkconfig").exists()


def test_an_edited_board_config_is_read_again_and_another_tree_builds_afresh(tmp_path):
    out, idf = tmp_path / "out", tmp_path / "idf"
    board_image.fresh_build_dir(out, MP, idf, "v5.5.1")
    (out / "sdkconfig").write_text("made by ESP-IDF")
    (out / "micropython.bin").write_text("built")
    board_image.fresh_build_dir(out, MP, idf, "v5.5.1")          # nothing changed
    assert (out / "sdkconfig").exists() and (out / "micropython.bin").exists()
    stamp = out / "board.stamp"
    stamp.write_text(stamp.read_text().replace('"config": "', '"config": "0'))
    board_image.fresh_build_dir(out, MP, idf, "v5.5.1")          # the board's config changed
    assert not (out / "sdkconfig").exists() and (out / "micropython.bin").exists()
    board_image.fresh_build_dir(out, MP, idf, "v5.4.2")          # another ESP-IDF
    assert not (out / "micropython.bin").exists() and stamp.exists()


# -- the vendored ESP32-S3 kit (ESP_VENDOR) --------------------------------------

def test_the_kit_is_taken_when_named_or_when_no_esp_idf_is_exported(monkeypatch):
    monkeypatch.setattr(board_image.espkit, "available", lambda vendor=None: True)
    assert board_image.use_kit("/some/kit", {"IDF_PATH": "/opt/idf"})    # named: the kit
    assert board_image.use_kit(None, {"ESP_VENDOR": "/some/kit", "IDF_PATH": "/opt/idf"})
    assert not board_image.use_kit(None, {"IDF_PATH": "/opt/idf"})       # the user's ESP-IDF
    assert board_image.use_kit(None, {})                                 # neither: the kit
    assert not board_image.use_kit(None, {"ESP_VENDOR": ""})             # empty: never
    monkeypatch.setattr(board_image.espkit, "available", lambda vendor=None: False)
    assert not board_image.use_kit(None, {})


def test_make_firmware_with_a_folder_that_is_no_kit_names_what_is_missing(tmp_path):
    line = _tool_line(_make("firmware", "ESP_VENDOR=%s" % tmp_path), 2)
    assert line == ("make firmware: the toolchain: no xtensa-esp32s3-elf-gcc14.2.0-binutils2.44-"
                    "newlib-esp4.3.0.tar.xz in %s (ESP_VENDOR=<the kit's folder>)" % tmp_path)


def test_the_qemu_image_without_the_kit_says_it_needs_it(tmp_path):
    env = _env(**_fake_idf(tmp_path / "idf"))
    with pytest.raises(board_image.Missing, match="^make qemu builds with the vendored ESP32-S3 kit"):
        board_image.build(str(_micropython_tree(tmp_path / "mp")), env=env, qemu=True)
    assert not (tmp_path / "idf" / "args.txt").exists()      # nothing was built
