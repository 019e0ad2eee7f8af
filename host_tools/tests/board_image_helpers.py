"""What the board image's tests share (test_board_image_*.py): `make` run
as a person types it on a machine without ESP-IDF or a board, stand-ins
for ESP-IDF and the MicroPython tree, flash with esptool replaced by a
recorder, the board's filesystem mounted by MicroPython, and the board's
partition tables read.

Through make, a failing recipe ends with make's own line on stderr
(`make: *** [Makefile:N: flash] Error 3`) and make's exit status 2,
whatever the tool's: `_tool_line` accepts that one line after the tool's
single line; the tests check the tool's own exit codes by running it
directly."""

import os
import re
import subprocess
from pathlib import Path

from host_tools.image import board_image
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


MOUNT = Path(__file__).parent / "mp_vfs_mount.py"
RUN = subprocess.run           # the real one, while flash's esptool is a recorder


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
