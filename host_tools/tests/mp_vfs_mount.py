# Run by MicroPython (board_image_helpers.py's _mount): mounts a filesystem
# image as the ESP32 port mounts its vfs partition, and prints what it holds.
#
#   micropython mp_vfs_mount.py IMAGE BLOCK_SIZE BLOCK_COUNT
#
# IMAGE is the whole partition as the board's flash holds it. The block
# device is esp32.Partition's interface (MicroPython's docs, Block devices,
# the extended one with offsets), over the file. Prints "fs NAME" for the
# filesystem the mount found, one "file NAME SIZE SHA256" line a file, then
# writes a file the way the firmware keeps its counters (a new file, then
# a rename) and checks a second mount reads it back: "wrote ok".
import sys
import vfs
import os
import hashlib
import binascii


class FileBlocks:
    def __init__(self, path, block_size, count):
        self.f = open(path, "r+b")
        self.size = block_size
        self.count = count

    def readblocks(self, block, buf, offset=0):
        self.f.seek(block * self.size + offset)
        self.f.readinto(buf)

    def writeblocks(self, block, buf, offset=None):
        if offset is None:                  # the simple interface: erase first
            for i in range(len(buf) // self.size):
                self.ioctl(6, block + i)
            offset = 0
        self.f.seek(block * self.size + offset)
        self.f.write(buf)

    def ioctl(self, op, arg):
        if op == 4:                         # block count
            return self.count
        if op == 5:                         # block size
            return self.size
        if op == 6:                         # erase a block: 0xFF, as flash
            self.f.seek(arg * self.size)
            self.f.write(b"\xff" * self.size)
            return 0
        if op == 3:                         # sync
            self.f.flush()
        return 0


def sha256(path):
    with open(path, "rb") as f:
        return binascii.hexlify(hashlib.sha256(f.read()).digest()).decode()


path, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bdev = FileBlocks(path, size, count)
# _boot.py's call: the filesystem is found from the block device alone.
vfs.mount(bdev, "/flash")
for fs, where in vfs.mount():
    if where == "/flash":
        print("fs", type(fs).__name__)
for name, kind, *_ in sorted(os.ilistdir("/flash")):
    p = "/flash/" + name
    print("file", name, os.stat(p)[6], sha256(p) if kind == 0x8000 else "dir")
with open("/flash/counters.json.new", "w") as f:
    f.write('{"hands": 1}')
os.rename("/flash/counters.json.new", "/flash/counters.json")
vfs.umount("/flash")
fs = vfs.VfsLfs2(bdev)
with fs.open("counters.json", "r") as f:
    print("wrote", "ok" if f.read() == '{"hands": 1}' else "differs")
