"""`make firmware` (board_image.py build, docs/deploy.md, The board's
image): MicroPython's ESP32 port built by ESP-IDF with the board definition
firmware/image/FUZHOU_TABLE_S3 (what ships, frozen in) into
build/firmware/; build/firmware/firmware.bin is the whole image, written at
0x0. --production builds the board's PRODUCTION variant
(mpconfigvariant_PRODUCTION.cmake: secure boot v2 and flash encryption,
signed with a key that must lie outside the project) into
build/firmware-production/; --qemu the QEMU variant into
build/firmware-qemu/. ESP-IDF is the user's (IDF_PATH) or the vendored
kit's (espkit.py). Whatever is missing is raised as `Missing`, one line.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from host_tools.image import espkit
from host_tools.image.mpenv import ROOT
from host_tools.image.mpenv import micropy_dir as micropy_dir_default

BOARD = "FUZHOU_TABLE_S3"
BOARD_DIR = ROOT / "firmware" / "image" / BOARD
OUT = ROOT / "build" / "firmware"
IMAGE = OUT / "firmware.bin"
# The production image: its own build folder; the variant the port's make
# is given.
VARIANT = "PRODUCTION"
PRODUCTION_OUT = ROOT / "build" / "firmware-production"
PRODUCTION_IMAGE = PRODUCTION_OUT / "firmware.bin"
# The QEMU variant: the same freeze, the link on UART0 (QEMU has no USB).
QEMU_VARIANT = "QEMU"
QEMU_OUT = ROOT / "build" / "firmware-qemu"
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


def shown(path):
    """A path as a person in the project root would type it."""
    path = Path(path).absolute()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def last_line(text):
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
                      % (last_line(r.stderr + r.stdout), EXPORT))
    found = re.search(r"v(\d+)\.(\d+)(?:\.(\d+))?", r.stdout)
    if found is None:
        raise Missing("make firmware: `idf.py --version` says %r, no ESP-IDF version"
                      % last_line(r.stdout))
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
                      " MICROPY_DIR=<a MicroPython v1.28.0 checkout>)" % shown(mp))
    header = mp / "py" / "mpconfig.h"
    text = header.read_text() if header.is_file() else ""
    major = re.search(r"#define MICROPY_VERSION_MAJOR \(?(\d+)", text)
    minor = re.search(r"#define MICROPY_VERSION_MINOR \(?(\d+)", text)
    if not (major and minor and (major.group(1), minor.group(1)) == ("1", "28")):
        raise Missing("make firmware: %s is not MicroPython 1.28, the version the firmware is"
                      " pinned to" % shown(mp))
    for rel in FULL_TREE:
        if not (mp / rel).exists():
            raise Missing("make firmware needs a full MicroPython v1.28.0 tree: %s has no %s"
                          " (give MICROPY_DIR=<a git checkout of v1.28.0 with lib/micropython-lib>:"
                          " docs/deploy.md)" % (shown(mp), rel.rsplit("/", 1)[0]))


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
        print("%s: another project folder, MicroPython or ESP-IDF: building afresh" % shown(out))
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
                      % (key, shown(real)))
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
    env = idf_environment(env, mp, kit, vendor, qemu)
    version = idf_version(env)
    check_micropython(mp)
    fresh_build_dir(out, mp, env["IDF_PATH"], version, key)
    print("building %s%s with ESP-IDF %s%s into %s (minutes the first time)"
          % (BOARD, " for production" if production else " for QEMU" if qemu else "", version,
             " (the vendored kit)" if kit else "", shown(out)), flush=True)
    if production:
        env[SIGNING_KEY_ENV] = str(key)
    if run_port_build(mp / "ports" / "esp32", out, variant, env) != 0:
        print("make firmware: the ESP32 build failed (its output is above)", file=sys.stderr)
        return 1
    if not image.is_file():
        print("make firmware: the build made no %s" % shown(image), file=sys.stderr)
        return 1
    print("firmware: %s (%d KB), the whole image%s: %s"
          % (shown(image), image.stat().st_size // 1024, ", signed" if production else "",
             "`make qemu` boots it" if qemu else "`make flash%s PORT=...` writes it at 0x0"
             % (" PRODUCTION=1 ERASE=1" if production else "")))
    return 0


def idf_environment(env, mp, kit, vendor, qemu):
    """The environment ESP-IDF builds in: the kit's when `kit` (use_kit),
    else `env`, the user's exported ESP-IDF; the outer make's variables
    taken out either way."""
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
    return env


def run_port_build(port, out, variant, env):
    """The ESP32 port built into `out` (`variant`: None, or the board's
    variant): idf.py, then the port's makeimg.py. Their exit status."""
    # idf.py as the port's Makefile calls it, but directly: that Makefile's
    # BUILD would reach the mpy-cross it makes on the way, and put
    # mpy-cross's own generated headers into this build folder.
    cmd = ["idf.py", "-C", str(port), "-D", "MICROPY_BOARD=" + BOARD,
           "-D", "MICROPY_BOARD_DIR=" + str(BOARD_DIR)]
    if variant:
        cmd += ["-D", "MICROPY_BOARD_VARIANT=" + variant]
    cmd += ["-B", str(out.absolute()), "build"]
    r = subprocess.run(cmd, env=env)
    if r.returncode == 0:
        # The port's own step after idf.py: bootloader, partition table and
        # app in one image for 0x0.
        r = subprocess.run(["python3", str(port / "makeimg.py")] + [
            str(out / name) for name in ("sdkconfig", "bootloader/bootloader.bin",
                                         "partition_table/partition-table.bin", "micropython.bin",
                                         "firmware.bin", "micropython.uf2")],
            cwd=str(port), env=env, stdout=subprocess.DEVNULL)
    return r.returncode
