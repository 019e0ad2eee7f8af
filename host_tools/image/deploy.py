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

Step 1 is deploy_build.py's; mpremote and what it lists on the board,
deploy_board.py's (it runs with `resume`, no soft reset on connect: it
works the same on a board and on the virtual board of
host_tools/sim/vboard.py); the key and what to copy are chosen here.
"""

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from host_tools.image import tablekey
from host_tools.image.deploy_board import KEY, board_files, board_state, make_dirs, mpremote
from host_tools.image.deploy_build import (BOARD_MAIN, MANIFEST, STAGE, DeployError,
                                           compile_libraries, compile_tree, device_sources,
                                           library_sources, module_name, sha256_file, stage,
                                           write_manifest)
from host_tools.image.mpenv import DEVICE_PACKAGES, ROOT
from host_tools.link import mux as linkmux
from host_tools.texts import t

__all__ = ["BOARD_MAIN", "CONFIG", "KEY", "KEY_BYTES", "MANIFEST", "STAGE", "TAGS", "DeployError",
           "board_files", "board_state", "choose_key", "compile_libraries", "compile_tree",
           "deploy", "device_sources", "library_sources", "main", "module_name", "mpremote",
           "plan", "sha256_file", "stage", "table_key", "write_manifest"]

KEY_BYTES = 32
# What a board gets when it has no config or tags and none is given (make
# flash ERASE=1 writes them too).
CONFIG = ROOT / "firmware" / "config.json"
TAGS = ROOT / "firmware" / "tags.txt"


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
    log(t("msg.deploy_staging"))    # a line before each step that takes a while
    entries, build = stage(out)
    log("built %s: %d files" % (build, len(entries)))
    linkmux.release(port)           # mpremote needs the port to itself (mjctl's sharer)
    log(t("msg.deploy_reading", port=port))
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
        make_dirs(port, {Path(b).parent.as_posix() for _, b in copy})
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
