"""The integrity manifest, checked at boot (docs/deploy.md).

`make deploy` writes `manifest.txt` at the root of the code: a `# build ID`
line, then one `SHA256 PATH` line per file it installed (the .mpy modules
and main.py; not config.json, tags.txt or the key, which change in service).
At boot every listed file is hashed again. A file missing or changed, an
unlisted module in the code folders (it could shadow a listed one), or no
manifest on a deployed board is a fault: the table does not move.

It proves the files are the ones deployed (a flash fault, a half-finished
copy, a hand-edited file), not who deployed them. Needed at boot only, by
a development deploy (an image's code is frozen and checks no manifest).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import binascii
import hashlib
import os

NAME = const("manifest.txt")   # host_tools/image/deploy_build.py (CPython) writes the file by it
_CHUNK = const(512)
_CODE = const("engine_core firmware")     # the folders whose modules must be listed


def check(root, required):
    """The build id of a good manifest at `root` ("" or a path ending in
    "/"), or ValueError saying what is wrong. With no manifest: an
    error when `required` (a board), else None (a development run).
    Private names and ValueError, no class of its own: this module leaves
    the heap after boot, but each name it had stays interned (docs/
    firmware.md, Memory)."""
    try:
        f = open(root + NAME)
    except OSError:
        if required:
            raise ValueError("no %s: the firmware was not installed by make deploy" % NAME)
        return None
    build = "?"
    listed = {}
    buf = bytearray(_CHUNK)
    with f:
        for line in f:                     # a line at a time: boot is the fullest heap
            line = line.strip()
            if line.startswith("# build "):
                build = line[8:]
            elif line and not line.startswith("#"):
                parts = line.split()
                if len(parts) != 2 or len(parts[0]) != 64:
                    raise ValueError("%s: a line is not `SHA256 PATH`: %r" % (NAME, line[:40]))
                digest, path = parts
                got = sha256_of(root + path, buf)
                if got is None:
                    raise ValueError("%s is missing" % path)
                if got != digest:
                    raise ValueError("%s has changed since it was deployed" % path)
                listed[path] = True
    for top in _CODE.split():
        stray = _unlisted(root, top, listed)
        if stray:
            raise ValueError("%s is not in the manifest" % stray)
    return build


def sha256_of(path, buf):
    """Hex SHA-256 of a file read through `buf`, or None if it is not there."""
    try:
        f = open(path, "rb")
    except OSError:
        return None
    h = hashlib.sha256()
    mv = memoryview(buf)
    with f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(mv[:n])
    return binascii.hexlify(h.digest()).decode()


def _unlisted(root, path, listed):
    """A module file under the folder `path` that the manifest does not list, or None."""
    try:
        entries = os.listdir(root + path)
    except OSError:
        return None
    for name in entries:
        sub = path + "/" + name
        if name.endswith(".mpy") or name.endswith(".py"):
            if sub not in listed:
                return sub
        elif "." not in name:
            stray = _unlisted(root, sub, listed)
            if stray:
                return stray
    return None
