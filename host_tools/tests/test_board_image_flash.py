"""`make flash` as a person types it on a machine without a board
(host_tools/image/board_image.py): one line and its exit code for each
mistake, what esptool is given, and what ERASE=1 refuses before it
writes."""

import subprocess
import sys

from host_tools.image import board_image
from host_tools.tests.board_image_helpers import (
    ROOT, _env, _fake_image, _flash_erase, _make, _tool_line)


# -- make flash without a board -------------------------------------------------

def test_make_flash_without_port_prints_its_usage():
    line = _tool_line(_make("flash"), 2)
    assert line.startswith("make flash needs the board's port: make flash PORT=")


def test_make_flash_without_the_image_says_what_to_build(tmp_path, monkeypatch, capsys):
    line = _tool_line(_make("flash", "PORT=/dev/ttyACM9", "FIRMWARE=%s" % (tmp_path / "no.bin")), 2)
    assert line == "make flash: no file %s" % (tmp_path / "no.bin")
    monkeypatch.setattr(board_image, "IMAGE", tmp_path / "firmware.bin")
    assert board_image.main(["flash", "--port", "/dev/ttyACM9"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "make flash: no %s: build it with `make firmware` (or give FIRMWARE=<.bin>)"
        % (tmp_path / "firmware.bin")]


def test_flash_to_a_port_with_no_board_is_exit_3_and_one_line(tmp_path):
    image = tmp_path / "fake.bin"
    image.write_bytes(b"\xe9" + bytes(4095))
    port = str(tmp_path / "ttyACM9")                  # no such device
    r = subprocess.run([sys.executable, "-m", "host_tools.image.board_image", "flash", "--port", port,
                        "--bin", str(image)], cwd=ROOT, env=_env(), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 3 and "Traceback" not in r.stderr + r.stdout
    assert r.stderr.splitlines() == [
        "make flash: esptool: Could not open %s, the port is busy or doesn't exist." % port]
    line = _tool_line(_make("flash", "PORT=%s" % port, "FIRMWARE=%s" % image), 3)
    assert line == r.stderr.strip()


def test_flash_keeps_the_filesystem_unless_asked_and_ctrl_c_is_130(tmp_path, monkeypatch, capsys):
    image = tmp_path / "firmware.bin"
    image.write_bytes(b"\xe9")
    calls = []

    def esptool(cmd, **kw):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stderr="")
    monkeypatch.setattr(board_image.subprocess, "run", esptool)
    assert board_image.main(["flash", "--port", "/dev/ttyACM9", "--bin", str(image)]) == 0
    assert board_image.main(["flash", "--port", "/dev/ttyACM9", "--bin", str(image), "--erase",
                             "--key", str(tmp_path / "table.key")]) == 0
    tail = ["--chip", "esp32s3", "--port", "/dev/ttyACM9", "write-flash"]
    assert calls[0][1:] == ["-m", "esptool"] + tail + ["0x0", str(image)]
    assert calls[1][1:8] == ["-m", "esptool"] + tail
    assert calls[1][8:11] == ["--erase-all", "0x0", str(image)]
    assert "erase-flash" not in calls[0] and "--erase-all" not in calls[0]
    capsys.readouterr()

    def interrupted(cmd, **kw):
        raise KeyboardInterrupt
    monkeypatch.setattr(board_image.subprocess, "run", interrupted)
    assert board_image.main(["flash", "--port", "/dev/ttyACM9", "--bin", str(image)]) == 130
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_make_flash_erase_with_a_missing_config_is_one_line_and_makes_no_key(tmp_path):
    image = _fake_image(tmp_path / "fake.bin")
    key, missing = tmp_path / "t.key", tmp_path / "no.json"
    line = _tool_line(_make("flash", "PORT=/dev/ttyACM9", "ERASE=1", "FIRMWARE=%s" % image,
                            "KEY=%s" % key, "CONFIG=%s" % missing), 2)
    assert line == "make flash: no CONFIG file %s" % missing
    assert not key.exists()


def test_flash_erase_refuses_what_the_board_would_refuse(tmp_path, monkeypatch, capsys):
    key = tmp_path / "t.key"
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": 1}')
    assert _flash_erase(tmp_path, monkeypatch, "--key", str(key), "--config", str(bad))[0] == 2
    tags = tmp_path / "tags.txt"
    tags.write_text("0123abcd zz\n")
    assert _flash_erase(tmp_path, monkeypatch, "--key", str(key), "--tags", str(tags))[0] == 2
    short = tmp_path / "short.key"
    short.write_bytes(b"12345")
    assert _flash_erase(tmp_path, monkeypatch, "--key", str(short))[0] == 2
    assert _flash_erase(tmp_path, monkeypatch)[0] == 2                      # no key
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and "Traceback" not in "".join(err), err
    assert err[0].startswith("make flash: CONFIG=%s: tile_sets must be a whole number 1..2, not null"
                             % bad), err[0]
    assert err[0].endswith("(the board would stop at boot: fault 40 config_invalid)")
    assert err[1].startswith("make flash: TAGS=%s: tags line 1: unknown tile code" % tags)
    assert err[2] == "make flash: KEY=%s: a key is 32 bytes, not 5" % short
    assert err[3] == "make flash ERASE=1 writes the table's service key: give KEY=<file>"
    assert not key.exists()


def test_flash_erase_refuses_an_image_that_does_not_match_partitions_csv(tmp_path, monkeypatch,
                                                                         capsys):
    key = tmp_path / "t.key"
    stock = _fake_image(tmp_path / "stock.bin", [("factory", 0x10000, 0x1F0000),
                                                 ("vfs", 0x200000, 0x600000)], size=0x9000)
    assert _flash_erase(tmp_path, monkeypatch, "--key", str(key), image=stock)[0] == 2
    big = _fake_image(tmp_path / "big.bin", size=0x310000 + 4096)
    assert _flash_erase(tmp_path, monkeypatch, "--key", str(key), image=big)[0] == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["make flash: %s's partition table is not firmware/image/FUZHOU_TABLE_S3/"
                   "partitions.csv's (vfs at 0x310000, 5056 KB): build it with `make firmware`"
                   % stock,
                   "make flash: %s is 3140 KB, past 0x310000 where the filesystem starts" % big]
    ours = _fake_image(tmp_path / "ours.bin", [("factory", 0x10000, 0x300000),
                                               ("vfs", 0x310000, 0x4F0000)], size=0x9000)
    assert _flash_erase(tmp_path, monkeypatch, "--key", str(key), image=ours)[0] == 0


def test_make_flash_passes_the_key_with_erase_and_says_when_it_goes_unused(tmp_path):
    r = _make("-n", "flash", "PORT=/dev/ttyACM9", "ERASE=1", "KEY=keys/t7.key")
    assert r.returncode == 0 and "--erase" in r.stdout.split()
    assert "--key keys/t7.key" in " ".join(r.stdout.split())
    image = _fake_image(tmp_path / "fake.bin")
    # No shared default key: each table's is named.
    line = _tool_line(_make("flash", "PORT=/dev/ttyACM9", "FIRMWARE=%s" % image, "ERASE=1"), 2)
    assert line == "make flash ERASE=1 writes the table's service key: give KEY=<file>"
    for given in ("KEY=%s" % (tmp_path / "t.key"), "CONFIG=firmware/config.json"):
        line = _tool_line(_make("flash", "PORT=/dev/ttyACM9", "FIRMWARE=%s" % image, given), 2)
        assert line == ("make flash: CONFIG, TAGS and KEY are written with ERASE=1 only, which"
                        " erases the counters too; without it the board keeps its own")
    assert not (tmp_path / "t.key").exists()


def test_make_flash_erase_to_a_port_with_no_board_has_made_the_key(tmp_path):
    """Through make and the real esptool: the filesystem is built (the key
    made, owner-only) before esptool finds no board."""
    image = _fake_image(tmp_path / "fake.bin")
    key, port = tmp_path / "keys" / "t2.key", str(tmp_path / "ttyACM9")
    line = _tool_line(_make("flash", "PORT=%s" % port, "ERASE=1", "FIRMWARE=%s" % image,
                            "KEY=%s" % key), 3)
    assert line == ("make flash: esptool: Could not open %s, the port is busy or doesn't exist."
                    % port)
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
