# What ships: the one list of code frozen into the MicroPython image, in
# MicroPython's manifest form (docs/deploy.md, The image). Frozen code runs
# in place from flash: its bytecode, names and constants take no heap.
#
# Both targets include this file with the HAL they have:
#   twin/manifest.py             the unix port built 32-bit (make image)
#   FUZHOU_TABLE_S3/manifest.py  the ESP32-S3 board (make firmware)
#
# It freezes what the firmware takes from micropython-lib, then engine_core/
# and firmware/ without their tests and stand-ins (fakes/), this folder (build inputs, not
# modules) or the other target's HAL, and writes firmware/image_build.py:
# the image's build id, a digest of what it freezes, and PRODUCTION, whether
# the image is built for production (the board's manifest_production.py
# includes this file with production=True; the board's frozen main.py then
# boots as docs/security.md says). The firmware imports that module to know
# it runs frozen (firmware/main.py); no .py tree has it.
# firmware=False: the libraries alone, for the unfrozen build
# (unfrozen/manifest.py) and the .mpy files of make deploy
# (host_tools/image/deploy_build.py reads this file for them).
import hashlib
import os

metadata(description="The Fuzhou mahjong table's controller firmware")  # first, for MODE_COMPILE
options.defaults(hal="sim", firmware=True, production=False)
if options.hal not in ("sim", "esp32", "qemu"):
    raise ValueError("hal must be sim, esp32 or qemu, not %r" % (options.hal,))

require("hmac")                # the service sessions' challenge (link/session.py)
require("umqtt.simple")        # the telemetry's MQTT client (telemetry.py)

_root = os.path.abspath(os.path.join(os.getcwd(), "..", ".."))   # this file's folder is the cwd
# The board in QEMU (FUZHOU_TABLE_S3/manifest_qemu.py) has both HALs: the
# sim HAL on its UART1, and the esp32 HAL for the HAL's own check; the
# twin's entry stays out.
_other_hal = {"sim": ("firmware/hal/esp32.py", "firmware/hal/wifi.py", "firmware/hal/qemu.py"),
              "esp32": ("firmware/hal/sim.py", "firmware/sim_main.py", "firmware/hal/qemu.py"),
              "qemu": ("firmware/sim_main.py",)}[options.hal]


def _shipped(package):
    for folder, subs, files in os.walk(os.path.join(_root, package)):
        subs[:] = sorted(s for s in subs if s not in ("tests", "fakes", "image", "__pycache__"))
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(folder, name), _root).replace(os.sep, "/")
            if name.endswith(".py") and rel not in _other_hal:
                yield rel


_files = [f for p in ("engine_core", "firmware") for f in _shipped(p)] if options.firmware else []


# The fault codes: compiled into each module that imports them
# (inline_faults.py).
import sys

sys.path.insert(0, os.getcwd())
from inline_faults import fault_codes as _fault_codes, with_codes_inlined as _with_codes_inlined  # noqa: E402

_codes = _fault_codes(_root) if options.firmware else {}
for _f in _files:
    _inlined = _with_codes_inlined(_root, _f, _codes) if _f.startswith("firmware/") else None
    if _inlined is None:
        module(_f, base_path=_root)
        continue
    _gen_src = os.path.join(_root, "build", "image", "inlined-" + options.hal)
    _path = os.path.join(_gen_src, _f)
    os.makedirs(os.path.dirname(_path), exist_ok=True)
    if not os.path.exists(_path) or open(_path).read() != _inlined:   # unchanged: no rebuild
        with open(_path, "w") as _out:
            _out.write(_inlined)
    module(_f, base_path=_gen_src)

if options.firmware:
    _digest = hashlib.sha256(b"production\0" if options.production else b"")
    for _f in _files:
        with open(os.path.join(_root, _f), "rb") as _src:
            _digest.update(_f.encode() + b"\0" + _src.read())
    # Each flavour its own folder: a production build never reads the
    # module of a bench build made before it, nor the other way round.
    _gen = os.path.join(_root, "build", "image",
                        "gen-" + options.hal + ("-production" if options.production else ""))
    os.makedirs(os.path.join(_gen, "firmware"), exist_ok=True)
    _text = 'BUILD = "image-%s"\nPRODUCTION = %r\n' % (_digest.hexdigest()[:12],
                                                      bool(options.production))
    _path = os.path.join(_gen, "firmware", "image_build.py")
    if not os.path.exists(_path) or open(_path).read() != _text:   # unchanged: no rebuild
        with open(_path, "w") as _out:
            _out.write(_text)
    module("firmware/image_build.py", base_path=_gen)
