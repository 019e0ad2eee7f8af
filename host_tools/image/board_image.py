"""The board's image (docs/deploy.md, The board's image):

    python -m host_tools.image.board_image build [--micropy-dir DIR]
                                     [--production --signing-key FILE]
    python -m host_tools.image.board_image flash --port DEV [--bin FILE] [--production]
                                     [--erase --key FILE [--config FILE] [--tags FILE]]

build: MicroPython's ESP32 port built by ESP-IDF with the board definition
firmware/image/FUZHOU_TABLE_S3 (what ships, frozen in) into build/firmware/;
build/firmware/firmware.bin is the whole image, written at 0x0.
flash: esptool writes that image (or --bin) at 0x0. The filesystem, which
lies after the app (config, tags, key, counters), is kept; --erase erases
the whole flash first and writes the `vfs` partition with a filesystem of
config.json, tags.txt and the table's service key, made on the PC
(host_tools/image/vfs_image.py), in the same esptool call.

`make firmware` and `make flash PORT=...` run these. Whatever is missing
(ESP-IDF, a full MicroPython tree, the port, the .bin) is said in one line
on stderr, exit 2; a failed build exits 1, esptool failing 3, Ctrl-C 130.

--production (make PRODUCTION=1): the production image (docs/security.md),
the board's PRODUCTION variant (mpconfigvariant_PRODUCTION.cmake): secure
boot v2 and flash encryption, signed with --signing-key, a file that must
lie outside the project; built into build/firmware-production/ and
flashed with its own partition table (partitions-production.csv), only
whole (--erase): a production board that has booted once takes no serial
flash.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from firmware import config as fwconfig
from firmware import tags as fwtags
from host_tools.image import deploy, espkit, vfs_image
from host_tools.image.mpenv import ROOT
from host_tools.image.mpenv import micropy_dir as micropy_dir_default

BOARD = "FUZHOU_TABLE_S3"
BOARD_DIR = ROOT / "firmware" / "image" / BOARD
# Where the board's filesystem lies: the board definition's, read each time.
PARTITIONS = BOARD_DIR / "partitions.csv"
OUT = ROOT / "build" / "firmware"
IMAGE = OUT / "firmware.bin"
# The production image: its own build folder, partition table and the
# table's offset (sdkconfig.production); the variant the port's make is given.
VARIANT = "PRODUCTION"
PRODUCTION_PARTITIONS = BOARD_DIR / "partitions-production.csv"
PRODUCTION_OUT = ROOT / "build" / "firmware-production"
PRODUCTION_IMAGE = PRODUCTION_OUT / "firmware.bin"
# The QEMU variant: the same freeze, the link on UART0 (QEMU has no USB).
QEMU_VARIANT = "QEMU"
QEMU_OUT = ROOT / "build" / "firmware-qemu"
TABLE_AT, PRODUCTION_TABLE_AT = 0x8000, 0xD000
# How mpconfigvariant_PRODUCTION.cmake is told where the signing key is.
SIGNING_KEY_ENV = "FUZHOU_TABLE_SIGNING_KEY"
NEEDS_KEY = ("make firmware PRODUCTION=1 signs the image: give SIGNING_KEY=<the secure boot"
             " signing key (RSA-3072, PEM), a file outside the project> (docs/security.md)")
# The ESP-IDF versions MicroPython 1.28 supports (ports/esp32/README.md):
# v5.5.1 recommended, v5.3 and v5.4 also.
IDF_OLDEST, IDF_NEWEST = (5, 3), (5, 5)
NEEDS_IDF = "make firmware needs ESP-IDF v5.5.1 (or v5.3, v5.4)"
EXPORT = "`. $IDF_PATH/export.sh`"
# What the ESP32 build reads that the vendored archive leaves out: a file
# of the MicroPython repository and the micropython-lib submodule.
FULL_TREE = ("lib/mbedtls_errors/esp32_mbedtls_errors.c", "lib/micropython-lib/README.md")
# The outer make's variables must not reach the port's make (its BOARD,
# BUILD, PORT are other things there).
MAKE_ENV = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")


class Missing(Exception):
    """Something the command needs, said in one line (exit 2)."""


def _shown(path):
    """A path as a person in the project root would type it."""
    path = Path(path).absolute()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _last_line(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


# -- build ---------------------------------------------------------------------

def idf_version(env):
    """ESP-IDF's version ("v5.5.1") once IDF_PATH and idf.py check out."""
    idf = env.get("IDF_PATH")
    if not idf:
        raise Missing("%s: IDF_PATH is not set (install ESP-IDF, then %s)" % (NEEDS_IDF, EXPORT))
    tool = Path(idf) / "tools" / "idf.py"
    if not tool.is_file():
        raise Missing("%s: IDF_PATH=%s has no tools/idf.py (point it at ESP-IDF, then %s)"
                      % (NEEDS_IDF, idf, EXPORT))
    exe = shutil.which("idf.py", path=env.get("PATH"))
    if exe is None:
        raise Missing("%s: idf.py is not on PATH (run %s in this shell)" % (NEEDS_IDF, EXPORT))
    try:
        r = subprocess.run([exe, "--version"], capture_output=True, text=True, env=env, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Missing("make firmware: idf.py does not run (%s): run %s in this shell" % (e, EXPORT))
    if r.returncode != 0:
        raise Missing("make firmware: idf.py does not run (%s): run %s in this shell"
                      % (_last_line(r.stderr + r.stdout), EXPORT))
    found = re.search(r"v(\d+)\.(\d+)(?:\.(\d+))?", r.stdout)
    if found is None:
        raise Missing("make firmware: `idf.py --version` says %r, no ESP-IDF version"
                      % _last_line(r.stdout))
    major_minor = (int(found.group(1)), int(found.group(2)))
    version = found.group(0)
    if major_minor < IDF_OLDEST or major_minor[0] != IDF_NEWEST[0]:
        raise Missing("%s: this is ESP-IDF %s" % (NEEDS_IDF, version))
    if major_minor > IDF_NEWEST:
        print("ESP-IDF %s: MicroPython 1.28 is tested with v5.3 to v5.5.1; building anyway"
              % version, file=sys.stderr)
    return version


def check_micropython(mp):
    if not (mp / "ports" / "esp32" / "Makefile").is_file():
        raise Missing("make firmware: no MicroPython source in %s (run `make tools`, or give"
                      " MICROPY_DIR=<a MicroPython v1.28.0 checkout>)" % _shown(mp))
    header = mp / "py" / "mpconfig.h"
    text = header.read_text() if header.is_file() else ""
    major = re.search(r"#define MICROPY_VERSION_MAJOR \(?(\d+)", text)
    minor = re.search(r"#define MICROPY_VERSION_MINOR \(?(\d+)", text)
    if not (major and minor and (major.group(1), minor.group(1)) == ("1", "28")):
        raise Missing("make firmware: %s is not MicroPython 1.28, the version the firmware is"
                      " pinned to" % _shown(mp))
    for rel in FULL_TREE:
        if not (mp / rel).exists():
            raise Missing("make firmware needs a full MicroPython v1.28.0 tree: %s has no %s"
                          " (give MICROPY_DIR=<a git checkout of v1.28.0 with lib/micropython-lib>:"
                          " docs/deploy.md)" % (_shown(mp), rel.rsplit("/", 1)[0]))


def _digest(paths):
    h = hashlib.sha256()
    for path in paths:
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def fresh_build_dir(out, mp, idf, version, signing_key=None):
    """ESP-IDF keeps the sdkconfig it made first over the defaults that made
    it: an edited board config (or, for production, another signing key) is
    read only once that file is gone. Another project folder, MicroPython
    tree or ESP-IDF: the build starts afresh (CMake's cache holds their
    absolute paths)."""
    paths = "\n".join([str(BOARD_DIR), str(mp.resolve()), str(Path(idf).resolve()), version])
    # Every setting the board folder holds, the kit's and the variants'
    # too (a build reads only its own, and an unread one costs a re-run of
    # ESP-IDF's configuration, not a rebuild).
    inputs = sorted(p for p in BOARD_DIR.rglob("*")
                    if p.is_file() and (p.name.startswith("sdkconfig") or p.suffix == ".cmake"))
    config = _digest(inputs) + ("" if signing_key is None else " " + str(signing_key))
    stamp = out / "board.stamp"
    try:
        old = json.loads(stamp.read_text())
    except (OSError, ValueError):
        old = {}
    if old.get("paths") not in (None, paths):
        shutil.rmtree(out)
        print("%s: another project folder, MicroPython or ESP-IDF: building afresh" % _shown(out))
    elif old.get("config") != config:
        (out / "sdkconfig").unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({"paths": paths, "config": config}))


def signing_key_path(key):
    """The production image's signing key, checked: given, a file, and
    outside the project (a key in the tree would travel with every copy
    of it, and could be committed)."""
    if not key:
        raise Missing(NEEDS_KEY)
    path = Path(key).expanduser().absolute()
    if not path.is_file():
        raise Missing("make firmware PRODUCTION=1: no SIGNING_KEY file %s" % key)
    real = path.resolve()
    if real.is_relative_to(ROOT.resolve()):
        raise Missing("make firmware PRODUCTION=1: SIGNING_KEY=%s lies inside the project (%s):"
                      " keep the signing key outside it, off every board (docs/security.md)"
                      % (key, _shown(real)))
    return real


def use_kit(vendor, env):
    """Whether the build takes ESP-IDF from the vendored kit: when
    ESP_VENDOR names it (`vendor` or the environment's), or when no ESP-IDF
    of the user's is exported and the kit lies in its default folder.
    ESP_VENDOR set empty: never the kit."""
    given = vendor if vendor is not None else env.get("ESP_VENDOR")
    if given is not None:
        return bool(given)
    return not env.get("IDF_PATH") and espkit.available()


def build(micropy_dir=None, env=None, out=None, production=False, signing_key=None,
          vendor=None, qemu=False):
    """`out`: where the build goes (tests use their own folder); `vendor`:
    the kit's folder (ESP_VENDOR), else the user's ESP-IDF when IDF_PATH
    is set, else the kit in ../shared/vendor when it is there. `qemu`: the
    board's QEMU variant (host_tools/sim/qemu.py boots it)."""
    if signing_key and not production:
        raise Missing("make firmware: SIGNING_KEY signs the production image only:"
                      " give PRODUCTION=1 too")
    key = signing_key_path(signing_key) if production else None
    variant = VARIANT if production else QEMU_VARIANT if qemu else None
    out = Path(out or (PRODUCTION_OUT if production else QEMU_OUT if qemu else OUT))
    image = out / IMAGE.name
    env = dict(os.environ if env is None else env)
    mp = Path(micropy_dir or env.get("MICROPY_DIR") or micropy_dir_default()).absolute()
    kit = use_kit(vendor, env)
    if kit:
        if not (mp / "ports" / "esp32" / "Makefile").is_file():
            check_micropython(mp)
        try:
            env = espkit.environment(vendor or env.get("ESP_VENDOR"), mp)
        except espkit.Missing as e:
            raise Missing("make firmware: %s" % e)
    elif qemu:
        raise Missing("make qemu builds with the vendored ESP32-S3 kit (QEMU has no Wi-Fi,"
                      " which the kit leaves out): give ESP_VENDOR=<the kit's folder>")
    for name in MAKE_ENV:
        env.pop(name, None)
    version = idf_version(env)
    check_micropython(mp)
    fresh_build_dir(out, mp, env["IDF_PATH"], version, key)
    print("building %s%s with ESP-IDF %s%s into %s (minutes the first time)"
          % (BOARD, " for production" if production else " for QEMU" if qemu else "", version,
             " (the vendored kit)" if kit else "", _shown(out)), flush=True)
    port = mp / "ports" / "esp32"
    # idf.py as the port's Makefile calls it, but directly: that Makefile's
    # BUILD would reach the mpy-cross it makes on the way, and put
    # mpy-cross's own generated headers into this build folder.
    cmd = ["idf.py", "-C", str(port), "-D", "MICROPY_BOARD=" + BOARD,
           "-D", "MICROPY_BOARD_DIR=" + str(BOARD_DIR)]
    if variant:
        cmd += ["-D", "MICROPY_BOARD_VARIANT=" + variant]
    cmd += ["-B", str(out.absolute()), "build"]
    if production:
        env[SIGNING_KEY_ENV] = str(key)
    r = subprocess.run(cmd, env=env)
    if r.returncode == 0:
        # The port's own step after idf.py: bootloader, partition table and
        # app in one image for 0x0.
        r = subprocess.run(["python3", str(port / "makeimg.py")] + [
            str(out / name) for name in ("sdkconfig", "bootloader/bootloader.bin",
                                         "partition_table/partition-table.bin", "micropython.bin",
                                         "firmware.bin", "micropython.uf2")],
            cwd=str(port), env=env, stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        print("make firmware: the ESP32 build failed (its output is above)", file=sys.stderr)
        return 1
    if not image.is_file():
        print("make firmware: the build made no %s" % _shown(image), file=sys.stderr)
        return 1
    print("firmware: %s (%d KB), the whole image%s: %s"
          % (_shown(image), image.stat().st_size // 1024, ", signed" if production else "",
             "`make qemu` boots it" if qemu else "`make flash%s PORT=...` writes it at 0x0"
             % (" PRODUCTION=1 ERASE=1" if production else "")))
    return 0


# -- flash ---------------------------------------------------------------------

def esptool_error(stderr):
    """The line of esptool's error that says what went wrong (its last line
    is often a hint)."""
    for line in stderr.splitlines():
        if "A fatal error occurred:" in line:
            return line.split("A fatal error occurred:", 1)[1].strip()
    return _last_line(stderr)


def filesystem(image, config, tags, key_path, production=False):
    """(offset, bytes, key made) of the `vfs` partition a board flashed with
    `image` boots into a table from: config and tags checked as the board
    checks them at boot, the table's key kept or made as make deploy does.
    A production board moves the key and the tags from there into its
    encrypted NVS at its first boot (firmware/hal/esp32.py)."""
    csv = PRODUCTION_PARTITIONS if production else PARTITIONS
    offset, size = vfs_image.partition(csv)
    table = vfs_image.image_partitions(image, PRODUCTION_TABLE_AT if production else TABLE_AT)
    if table is not None and table.get("vfs") != (offset, size):
        raise Missing("make flash: %s's partition table is not %s's (vfs at 0x%x, %d KB):"
                      " build it with `make firmware%s`"
                      % (_shown(image), _shown(csv), offset, size // 1024,
                         " PRODUCTION=1" if production else ""))
    if image.stat().st_size > offset:
        raise Missing("make flash: %s is %d KB, past 0x%x where the filesystem starts"
                      % (_shown(image), image.stat().st_size // 1024, offset))
    contents = {}
    for name, var, path, load in (("config.json", "CONFIG", config, fwconfig.load),
                                  ("tags.txt", "TAGS", tags, fwtags.load)):
        path = Path(path)
        if not path.is_file():
            raise Missing("make flash: no %s file %s" % (var, _shown(path)))
        try:
            load(str(path))
        except ValueError as e:
            raise Missing("make flash: %s=%s: %s (the board would stop at boot: fault 40"
                          " config_invalid)" % (var, _shown(path), e))
        contents[name] = path.read_bytes()
    try:
        contents[deploy.KEY], made = deploy.table_key(key_path)
    except deploy.DeployError as e:                 # it names the file
        raise Missing("make flash: KEY=%s" % e)
    except OSError as e:
        raise Missing("make flash: KEY=%s: %s%s" % (_shown(key_path), e.strerror or e,
                                                    ": %s" % e.filename if e.filename else ""))
    return offset, vfs_image.build(size, contents), made


def flash(port, image=None, erase=False, config=None, tags=None, key=None, production=False):
    if not port:
        raise Missing("make flash needs the board's port: make flash PORT=/dev/ttyACM0"
                      " [FIRMWARE=<.bin>] [ERASE=1 [KEY=<file>] [CONFIG=<.json>] [TAGS=<.txt>]]")
    if production and not erase:
        raise Missing("make flash PRODUCTION=1 writes a new board whole: give ERASE=1 (a"
                      " production board that has booted takes no serial flash: docs/security.md)")
    default = PRODUCTION_IMAGE if production else IMAGE
    if image is None and not default.is_file():
        raise Missing("make flash: no %s: build it with `make firmware%s` (or give FIRMWARE=<.bin>)"
                      % (_shown(default), " PRODUCTION=1 SIGNING_KEY=..." if production else ""))
    image = Path(image) if image is not None else default
    if not image.is_file():
        raise Missing("make flash: no file %s" % image)
    if not erase and (config or tags or key):
        raise Missing("make flash: CONFIG, TAGS and KEY are written with ERASE=1 only, which"
                      " erases the counters too; without it the board keeps its own")
    if erase and not key:
        raise Missing("make flash ERASE=1 writes the table's service key: give KEY=<file>")
    config, tags = Path(config or deploy.CONFIG), Path(tags or deploy.TAGS)
    from host_tools.link import mux as linkmux
    linkmux.release(port)           # esptool needs the port to itself (mjctl's sharer)
    cmd = [sys.executable, "-m", "esptool", "--chip", "esp32s3", "--port", port, "write-flash"]
    cmd += ["--erase-all"] if erase else []
    cmd += ["0x0", str(image)]
    made = False
    # The filesystem image holds the key: it lives in a folder of the
    # owner's only as long as esptool needs it.
    with tempfile.TemporaryDirectory(prefix="mj-flash-") as tmp:
        if erase:
            offset, data, made = filesystem(image, config, tags, key, production)
            vfs = Path(tmp) / "vfs.bin"
            vfs.write_bytes(data)
            cmd += ["0x%x" % offset, str(vfs)]
        r = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        print("make flash: esptool: %s" % esptool_error(r.stderr), file=sys.stderr)
        return 3
    sys.stderr.write(r.stderr)
    if not erase:
        print("flash: %s written at 0x0, the filesystem kept; the board restarts" % _shown(image))
        return 0
    print("flash: the whole flash erased, %s written at 0x0 and at 0x%x the filesystem:"
          " config.json (%s), tags.txt (%s), service.key (%s); the board restarts"
          % (_shown(image), offset, _shown(config), _shown(tags), _shown(key)))
    if made:
        print("the table's service key is new, in %s: keep it, only it opens service sessions"
              " on this table" % _shown(key))
    if production:
        print("its first boot burns its eFuses, encrypts its flash and moves service.key and"
              " tags.txt into its encrypted NVS: keep its power on until the table answers"
              " (docs/security.md)")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.image.board_image",
                                 description="the board's image: build it, write it")
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build build/firmware/firmware.bin (needs ESP-IDF)")
    b.add_argument("--micropy-dir", help="the MicroPython v1.28.0 tree (default: $MICROPY_DIR,"
                   " else build/micropython-1.28.0)")
    b.add_argument("--production", action="store_true",
                   help="the production image: secure boot v2, flash encryption, signed")
    b.add_argument("--signing-key", help="with --production: the secure boot signing key"
                   " (a PEM file outside the project)")
    f = sub.add_parser("flash", help="write the image at 0x0 with esptool")
    f.add_argument("--port", help="the board's USB serial device")
    f.add_argument("--bin", help="the image (default build/firmware/firmware.bin)")
    f.add_argument("--erase", action="store_true",
                   help="erase the whole flash first, then write a filesystem of config, tags"
                   " and key (the counters start afresh)")
    f.add_argument("--key", help="with --erase: the table's service key file (made if missing)")
    f.add_argument("--config", help="with --erase: the config.json to write"
                   " (default firmware/config.json)")
    f.add_argument("--tags", help="with --erase: the tags.txt to write (default firmware/tags.txt)")
    f.add_argument("--production", action="store_true",
                   help="the production image (build/firmware-production), with --erase only")
    b.add_argument("--qemu", action="store_true",
                   help="the board's QEMU variant, into build/firmware-qemu (make qemu)")
    args = ap.parse_args(argv)
    name = "make firmware" if args.command == "build" else "make flash"
    try:
        if args.command == "build":
            return build(args.micropy_dir, production=args.production,
                         signing_key=args.signing_key, qemu=args.qemu)
        return flash(args.port, args.bin, args.erase, args.config, args.tags, args.key,
                     args.production)
    except Missing as e:
        print(e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("%s: interrupted%s" % (name, "" if args.command == "build" else
                                     " (the board may hold half an image: flash it again)"),
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
