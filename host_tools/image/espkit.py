"""The vendored ESP32-S3 kit: a cross toolchain, ESP-IDF v5.3.1 and QEMU
with Espressif's esp32s3 machine, as archives in a folder (ESP_VENDOR, by
default ../shared/vendor beside the project; its README says how each was
made). `make firmware`, `make qemu` and the QEMU tests build with it when
it is there (docs/deploy.md, Building with the vendored kit).

`environment(vendor)` unpacks what is not unpacked yet under build/esp32/
(each archive's sha256 checked first), makes ESP-IDF's Python environment
from the kit's pinned requirements, adds the two MicroPython libraries the
esp32 port reads that the MicroPython archive leaves out, and returns the
environment ESP-IDF runs in. Each missing part is said in one line
(`Missing`).
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from host_tools.image.mpenv import ROOT

KIT = ROOT / "build" / "esp32"
DEFAULT_VENDOR = ROOT.parent / "shared" / "vendor"
IDF_VERSION = "5.3.1"
# Each archive: (file, the folder it is unpacked into under build/esp32/,
# the one path inside that says it is whole).
TOOLCHAIN = ("xtensa-esp32s3-elf-gcc14.2.0-binutils2.44-newlib-esp4.3.0.tar.xz", "",
             "xtensa-esp32s3-elf/bin/xtensa-esp32s3-elf-gcc")
IDF = ("esp-idf-v5.3.1-trimmed.tar.xz", "", "esp-idf-v5.3.1/tools/idf.py")
QEMU = ("qemu-xtensa-esp32s3-lcgamboa-9.2.2.tar.xz", "qemu", "qemu/bin/qemu-system-xtensa")
MP_LIBS = "micropython-1.28.0-esp32-libs.tar.xz"
REQUIREMENTS = "esp-idf-v5.3.1-python-requirements.txt"
IDF_VENV = KIT / "idf-venv"
# Debian packages the kit needs here: CMake and Ninja for ESP-IDF, and
# the libraries QEMU links (the vendor README lists them).
DEBIAN = {"cmake": "cmake", "ninja": "ninja-build"}
QEMU_LIBS = ("libpixman-1-0", "libgcrypt20", "libfdt1", "libslirp0", "libglib2.0-0",
             "libgnutls30", "libpng16-16")


class Missing(Exception):
    """A part of the kit that is not there, said in one line."""


def vendor_dir(given=None):
    """The kit's folder: ESP_VENDOR when given, else ../shared/vendor."""
    given = given or os.environ.get("ESP_VENDOR")
    return Path(given).absolute() if given else DEFAULT_VENDOR


def available(vendor=None):
    """True when the folder holds every archive of the kit."""
    vendor = vendor_dir(vendor)
    return all((vendor / name).is_file()
               for name in (TOOLCHAIN[0], IDF[0], QEMU[0], MP_LIBS, REQUIREMENTS))


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _unpack(vendor, name, into, whole_path, what):
    """Unpack `name` under KIT/into unless its stamp says this very archive
    is there already; the sha256 beside it checked first."""
    archive = vendor / name
    if not archive.is_file():
        raise Missing("%s: no %s in %s (ESP_VENDOR=<the kit's folder>)" % (what, name, vendor))
    stamp = KIT / (name + ".unpacked")
    digest = _sha256(archive)
    if stamp.is_file() and stamp.read_text() == digest and (KIT / whole_path).exists():
        return
    expected = vendor / (name + ".sha256")
    if expected.is_file() and expected.read_text().split()[0] != digest:
        raise Missing("%s: %s does not match its sha256 file" % (what, archive))
    print("unpacking %s into %s" % (name, (KIT / into).relative_to(ROOT)), flush=True)
    (KIT / into).mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(KIT / into, filter="tar")
    if not (KIT / whole_path).exists():
        raise Missing("%s: %s has no %s" % (what, name, whole_path))
    stamp.write_text(digest)


def _debian(what, packages):
    """Debian packages installed when missing and root can; else the
    command to run."""
    missing = [p for p in packages
               if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if not missing:
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("installing %s (%s)" % (" ".join(missing), what), flush=True)
        ok = (subprocess.run(["apt-get", "update", "-qq"]).returncode == 0
              and subprocess.run(["apt-get", "install", "-y", "-qq"] + missing,
                                 stdout=subprocess.DEVNULL).returncode == 0)
        if ok:
            return
    raise Missing("%s needs Debian's %s: run  sudo apt-get install %s"
                  % (what, " ".join(missing), " ".join(missing)))


def _idf_venv(vendor):
    """ESP-IDF's own Python environment, from the kit's pinned list."""
    req = vendor / REQUIREMENTS
    stamp = IDF_VENV / ".requirements"
    if stamp.is_file() and stamp.read_text() == req.read_text():
        return
    print("making ESP-IDF's Python environment in %s" % IDF_VENV.relative_to(ROOT), flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(IDF_VENV)], check=True)
    r = subprocess.run([str(IDF_VENV / "bin" / "pip"), "install", "--quiet", "-r", str(req)])
    if r.returncode != 0:
        raise Missing("the kit's ESP-IDF Python packages did not install (%s): pip's output"
                      " is above" % req.name)
    stamp.write_text(req.read_text())


def micropython_libs(vendor, mp):
    """lib/berkeley-db-1.xx and lib/mbedtls_errors, which the esp32 port
    reads, into the MicroPython tree `mp` (the archive leaves them out)."""
    if (mp / "lib" / "mbedtls_errors" / "esp32_mbedtls_errors.c").is_file():
        return
    archive = vendor / MP_LIBS
    if not archive.is_file():
        raise Missing("make firmware: no %s in %s for %s" % (MP_LIBS, vendor, mp))
    with tarfile.open(archive) as tar:
        tar.extractall(mp, filter="tar")


def qemu_binary(vendor=None):
    """QEMU with the esp32s3 machine, unpacked; its runtime libraries
    installed."""
    vendor = vendor_dir(vendor)
    _unpack(vendor, QEMU[0], QEMU[1], QEMU[2], "QEMU")
    _debian("QEMU", QEMU_LIBS)
    return KIT / QEMU[2]


def environment(vendor=None, mp=None):
    """The environment ESP-IDF builds in with the kit (a copy of ours)."""
    vendor = vendor_dir(vendor)
    if not vendor.is_dir():
        raise Missing("no ESP32-S3 kit: %s is not a folder (ESP_VENDOR=<the kit's folder>)"
                      % vendor)
    for name, into, whole, what in ((TOOLCHAIN[0], TOOLCHAIN[1], TOOLCHAIN[2], "the toolchain"),
                                    (IDF[0], IDF[1], IDF[2], "ESP-IDF")):
        _unpack(vendor, name, into, whole, what)
    _debian("ESP-IDF", [pkg for tool, pkg in DEBIAN.items() if shutil.which(tool) is None])
    _idf_venv(vendor)
    if mp is not None:
        micropython_libs(vendor, mp)
    env = dict(os.environ)
    idf = KIT / "esp-idf-v5.3.1"
    env.update({
        "IDF_PATH": str(idf),
        "IDF_VERSION": IDF_VERSION,
        "IDF_PYTHON_ENV_PATH": str(IDF_VENV),
        "IDF_PYTHON_CHECK_CONSTRAINTS": "no",
        # GCC 14.2, not the esp-13.2 ESP-IDF 5.3 expects: a warning, not an error.
        "IDF_MAINTAINER": "1",
        # The component registry is not reachable, and the kit needs nothing from it.
        "IDF_COMPONENT_MANAGER": "0",
        # The board definition reads this (kit/kit.cmake).
        "FUZHOU_TABLE_KIT": "1",
    })
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = os.pathsep.join([str(IDF_VENV / "bin"), str(KIT / "xtensa-esp32s3-elf" / "bin"),
                                   str(idf / "tools"), env.get("PATH", "")])
    return env
