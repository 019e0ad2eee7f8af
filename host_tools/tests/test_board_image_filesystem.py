"""`make flash ERASE=1`: the filesystem it writes (host_tools/image/vfs_image.py),
mounted by MicroPython as the board mounts it, within the limits of the
port's littlefs; the production board's, where its partition table puts
it."""

import hashlib
import re

import littlefs

from host_tools.image import board_image, vfs_image
from host_tools.tests.board_image_helpers import (
    BOARD_DIR, MP, ROOT, _fake_image, _flash_erase, _make, _mount, _port_block_size,
    _tool_line, partitions)


def _sha(data):
    return hashlib.sha256(data).hexdigest()


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


def test_the_host_reads_back_what_micropython_wrote_on_the_filesystem(tmp_path):
    """vfs_image.read, as the virtual table in QEMU reads the firmware's
    files from its flash: a file MicroPython's littlefs wrote (a new file
    renamed, as the counters), one the image brought, none for a name the
    rename took away."""
    size = {r["name"]: r for r in partitions()}["vfs"]["size"]
    r = _mount(tmp_path, vfs_image.build(size, {"config.json": b"{}"}), size)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "wrote ok", r.stdout + r.stderr
    part = (tmp_path / "vfs-partition.bin").read_bytes()
    assert vfs_image.read(part, "counters.json") == b'{"hands": 1}'
    assert vfs_image.read(part, "config.json") == b"{}"
    assert vfs_image.read(part, "counters.json.new") is None


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


def test_a_file_removed_between_two_boots_is_gone_and_the_others_kept():
    """change_while_off's None (a test's flash reader removing walls.rec):
    the file gone, the rest read back; a name not there changes nothing."""
    size = {r["name"]: r for r in partitions()}["vfs"]["size"]
    data = vfs_image.build(size, {"walls.rec": b"lifted", "counters.json": b"{}"})
    flash = vfs_image.update(data + b"\xff" * (size - len(data)),
                             {"walls.rec": None, "hand.rec": None})
    assert vfs_image.files(flash) == {"counters.json": b"{}"}


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
