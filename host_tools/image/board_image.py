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
The build is firmware_build.py's; the flash and the command line of both
are here.

--production (make PRODUCTION=1): the production image (docs/security.md),
the board's PRODUCTION variant (mpconfigvariant_PRODUCTION.cmake): secure
boot v2 and flash encryption, signed with --signing-key, a file that must
lie outside the project; built into build/firmware-production/ and
flashed with its own partition table (partitions-production.csv), only
whole (--erase): a production board that has booted once takes no serial
flash.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from firmware import config as fwconfig
from firmware import tags as fwtags
from host_tools.image import deploy, espkit, vfs_image
from host_tools.image.firmware_build import (BOARD, BOARD_DIR, IMAGE, NEEDS_KEY, OUT,
                                             PRODUCTION_IMAGE, PRODUCTION_OUT, QEMU_OUT,
                                             QEMU_VARIANT, SIGNING_KEY_ENV, VARIANT, Missing,
                                             build, check_micropython, fresh_build_dir,
                                             idf_version, last_line, shown, signing_key_path,
                                             use_kit)

__all__ = ["BOARD", "BOARD_DIR", "IMAGE", "NEEDS_KEY", "OUT", "PARTITIONS", "PRODUCTION_IMAGE",
           "PRODUCTION_OUT", "PRODUCTION_PARTITIONS", "PRODUCTION_TABLE_AT", "QEMU_OUT",
           "QEMU_VARIANT", "SIGNING_KEY_ENV", "TABLE_AT", "VARIANT", "Missing", "build",
           "check_micropython", "espkit", "esptool_error", "filesystem", "flash",
           "fresh_build_dir", "idf_version", "main", "signing_key_path", "use_kit"]

# Where the board's filesystem lies: the board definition's, read each time;
# the production image has its own partition table, and the table its own
# offset (sdkconfig.production).
PARTITIONS = BOARD_DIR / "partitions.csv"
PRODUCTION_PARTITIONS = BOARD_DIR / "partitions-production.csv"
TABLE_AT, PRODUCTION_TABLE_AT = 0x8000, 0xD000


# -- flash ---------------------------------------------------------------------

def esptool_error(stderr):
    """The line of esptool's error that says what went wrong (its last line
    is often a hint)."""
    for line in stderr.splitlines():
        if "A fatal error occurred:" in line:
            return line.split("A fatal error occurred:", 1)[1].strip()
    return last_line(stderr)


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
                      % (shown(image), shown(csv), offset, size // 1024,
                         " PRODUCTION=1" if production else ""))
    if image.stat().st_size > offset:
        raise Missing("make flash: %s is %d KB, past 0x%x where the filesystem starts"
                      % (shown(image), image.stat().st_size // 1024, offset))
    contents = {}
    for name, var, path, load in (("config.json", "CONFIG", config, fwconfig.load),
                                  ("tags.txt", "TAGS", tags, fwtags.load)):
        path = Path(path)
        if not path.is_file():
            raise Missing("make flash: no %s file %s" % (var, shown(path)))
        try:
            load(str(path))
        except ValueError as e:            # the config's facts in words, as mjctl says them
            from host_tools.texts.refusal import said
            raise Missing("make flash: %s=%s: %s (the board would stop at boot: fault 40"
                          " config_invalid)" % (var, shown(path),
                                                said(str(e), getattr(e, "facts", None))))
        contents[name] = path.read_bytes()
    try:
        contents[deploy.KEY], made = deploy.table_key(key_path)
    except deploy.DeployError as e:                 # it names the file
        raise Missing("make flash: KEY=%s" % e)
    except OSError as e:
        raise Missing("make flash: KEY=%s: %s%s" % (shown(key_path), e.strerror or e,
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
                      % (shown(default), " PRODUCTION=1 SIGNING_KEY=..." if production else ""))
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
        print("flash: %s written at 0x0, the filesystem kept; the board restarts" % shown(image))
        return 0
    print("flash: the whole flash erased, %s written at 0x0 and at 0x%x the filesystem:"
          " config.json (%s), tags.txt (%s), service.key (%s); the board restarts"
          % (shown(image), offset, shown(config), shown(tags), shown(key)))
    if made:
        print("the table's service key is new, in %s: keep it, only it opens service sessions"
              " on this table" % shown(key))
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
