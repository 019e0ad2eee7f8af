"""The board's filesystem as `make flash ERASE=1` writes it (docs/deploy.md,
The first time): a littlefs v2 image of the `vfs` partition holding
config.json, tags.txt and service.key, made on the PC with littlefs-python
in the form MicroPython's ESP32 port mounts at boot.

The port's _boot.py mounts the partition with `vfs.mount(bdev, "/")`: the
littlefs signature in block 0 or 1 makes extmod/vfs.c build
`vfs.VfsLfs2(bdev)` with no arguments. So the image takes the defaults of
extmod/vfs_lfs.c and the lfs2_config that extmod/vfs_lfsx.c fills from them
(init_config), and the block device esp32.Partition makes of the partition
(ports/esp32/esp32_partition.c). littlefs refuses to mount a superblock whose
block size or block count differs from the device's, or whose disk version
is newer than its own.
"""

from littlefs import LittleFS, UserContext

# esp32_partition.c: NATIVE_BLOCK_SIZE_BYTES, the erase sector, which
# flashbdev.py keeps by finding "vfs" with no block_size.
BLOCK_SIZE = 4096
# vfs_lfs.c, lfs_make_allowed_args: readsize, progsize, lookahead.
READ_SIZE = PROG_SIZE = LOOKAHEAD = 32
# vfs_lfsx.c, init_config: what it derives from those and sets itself.
LFS_CONFIG = {
    "block_size": BLOCK_SIZE,
    "read_size": READ_SIZE,
    "prog_size": PROG_SIZE,
    "lookahead_size": LOOKAHEAD,
    "cache_size": min(BLOCK_SIZE, 4 * max(READ_SIZE, PROG_SIZE)),
    "block_cycles": 100,
    # name_max, file_max, attr_max are 0 there: lfs2.h's LFS2_NAME_MAX
    # (255) is what the superblock records and the board allows.
    "name_max": 255,
    # lfs2.h's LFS2_DISK_VERSION (littlefs 2.11): the ESP32 build defines no
    # LFS2_MULTIVERSION, so the board mounts 2.1 and older only.
    "disk_version": 0x00020001,
}


def _number(text):
    """A partition CSV number: 0x.., decimal, or with K / M (ESP-IDF's forms)."""
    text = text.strip()
    unit = {"K": 1024, "M": 1024 * 1024}.get(text[-1:].upper(), 1)
    return int(text[:-1] if unit > 1 else text, 0) * unit


def partition(csv, label="vfs"):
    """(offset, size) of the partition `label` in an ESP-IDF partition CSV."""
    for line in csv.read_text().splitlines():
        fields = [f.strip() for f in line.split("#")[0].split(",")]
        if len(fields) >= 5 and fields[0] == label:
            return _number(fields[3]), _number(fields[4])
    raise LookupError("%s has no %s partition" % (csv, label))


def image_partitions(image, at=0x8000):
    """{label: (offset, size)} of the partition table an image carries at
    `at` (0x8000, ESP-IDF's default; a production image's is at 0xD000),
    ESP-IDF's 32-byte entries: magic AA 50, type, subtype, offset, size,
    label, flags; or None when it has none there."""
    with open(image, "rb") as f:
        f.seek(at)
        table = f.read(0xC00)
    if table[:2] != b"\xaa\x50":
        return None
    found = {}
    for at in range(0, len(table) - 31, 32):
        entry = table[at:at + 32]
        if entry[:2] != b"\xaa\x50":
            break
        found[entry[12:28].rstrip(b"\0").decode("ascii", "replace")] = (
            int.from_bytes(entry[4:8], "little"), int.from_bytes(entry[8:12], "little"))
    return found


def build(size, contents):
    """The filesystem of a `size`-byte partition holding `contents` ({name:
    bytes}; a name with slashes goes into its folders), as bytes up to the
    last block littlefs wrote: after ERASE=1 the blocks beyond are blank
    (0xFF) on the board as in the image, and writing them would only take
    time and wear the flash."""
    fs = LittleFS(block_count=size // BLOCK_SIZE, **LFS_CONFIG)
    for name, data in contents.items():
        folder = name.rpartition("/")[0]
        if folder:
            fs.makedirs(folder, exist_ok=True)
        with fs.open(name, "wb") as f:
            f.write(data)
    fs.unmount()
    data = bytes(fs.context.buffer)
    blank = b"\xff" * BLOCK_SIZE
    end = len(data)
    while end and data[end - BLOCK_SIZE:end] == blank:
        end -= BLOCK_SIZE
    return data[:end]


def update(partition_bytes, contents):
    """The partition's bytes (a whole partition, as on the flash) with
    `contents` ({name: bytes, or None to remove it}) written into the
    filesystem it holds, the other files kept: the virtual table's flash
    between two boots."""
    buf = bytearray(partition_bytes)
    fs = LittleFS(context=UserContext(buffer=buf), block_count=len(buf) // BLOCK_SIZE,
                  **LFS_CONFIG)
    for name, data in contents.items():
        if data is None:
            try:
                fs.remove(name)
            except FileNotFoundError:
                pass
            continue
        with fs.open(name, "wb") as f:
            f.write(data)
    fs.unmount()
    return bytes(buf)


def _mounted(partition_bytes):
    return LittleFS(context=UserContext(buffer=bytearray(partition_bytes)),
                    block_count=len(partition_bytes) // BLOCK_SIZE, **LFS_CONFIG)


def read(partition_bytes, name):
    """The file `name` of the filesystem the partition's bytes hold, or
    None when there is none: the virtual table's flash as the firmware
    last wrote it (littlefs commits copy-on-write, so the bytes read at
    any moment are a filesystem as the firmware had it)."""
    try:
        with _mounted(partition_bytes).open(name, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def files(partition_bytes):
    """{name: bytes} of the files at the top of that filesystem."""
    fs = _mounted(partition_bytes)
    out = {}
    for name in fs.listdir("/"):
        if fs.stat(name).type == 1:            # LFS_TYPE_REG
            with fs.open(name, "rb") as f:
                out[name] = f.read()
    return out
