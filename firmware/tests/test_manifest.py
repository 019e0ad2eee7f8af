"""The boot check of manifest.txt (firmware/manifest.py), on both
interpreters: a little code tree is written in the current directory (no
tempfile module on MicroPython), checked, broken in each way, removed."""

import os

from firmware import manifest

ROOT = "_mf_test/"
FILES = {"firmware/a.mpy": b"\x4d\x06abc", "firmware/link/b.mpy": b"\x4d\x06" + bytes(range(200)) * 4,
         "engine_core/c.mpy": b"\x4d\x06c", "main.py": b"board()\n"}


def _rmtree(path):
    try:
        entries = os.listdir(path)
    except OSError:
        try:
            os.remove(path)
        except OSError:
            pass
        return
    for name in entries:
        _rmtree(path + "/" + name)
    os.rmdir(path)


def _tree(files=FILES, listed=None):
    _rmtree(ROOT[:-1])
    for d in ("", "firmware", "firmware/link", "engine_core"):
        os.mkdir(ROOT + d)
    buf = bytearray(64)
    lines = ["# build test-1"]
    for path in sorted(files):
        with open(ROOT + path, "wb") as f:
            f.write(files[path])
        if listed is None or path in listed:
            lines.append("%s %s" % (manifest.sha256_of(ROOT + path, buf), path))
    with open(ROOT + "manifest.txt", "w") as f:
        f.write("\n".join(lines) + "\n")


def _fails(required=True):
    try:
        manifest.check(ROOT, required)
    except ValueError as e:
        return str(e)
    return None


def _damaged(damage, files=FILES, listed=None, required=True):
    """Build the tree, damage it, check: the failure's text (None: passed)."""
    _tree(files, listed)
    try:
        damage()
        return _fails(required)
    finally:
        _rmtree(ROOT[:-1])


def _nothing():
    pass


def _append(path, data):
    def damage():
        with open(ROOT + path, "ab") as f:
            f.write(data)
    return damage


def _remove(path):
    def damage():
        os.remove(ROOT + path)
    return damage


def test_a_good_tree_passes_and_gives_its_build_id():
    _tree()
    try:
        assert manifest.check(ROOT, True) == "test-1"
    finally:
        _rmtree(ROOT[:-1])


def test_the_hash_is_sha256_of_the_whole_file():
    _tree()
    try:
        got = manifest.sha256_of(ROOT + "firmware/link/b.mpy", bytearray(16))  # many chunks
        assert got == manifest.sha256_of(ROOT + "firmware/link/b.mpy", bytearray(4096))
        assert len(got) == 64
        assert manifest.sha256_of(ROOT + "nothere", bytearray(16)) is None
    finally:
        _rmtree(ROOT[:-1])


def test_a_changed_file_is_named():
    why = _damaged(_append("firmware/link/b.mpy", b"\x00"))
    assert why and "firmware/link/b.mpy" in why and "changed" in why, why


def test_a_missing_file_is_named():
    why = _damaged(_remove("engine_core/c.mpy"))
    assert why and "engine_core/c.mpy" in why and "missing" in why, why


def test_a_module_that_is_not_listed_is_refused():
    # A stray .py next to the .mpy could be imported instead of it.
    files = dict(FILES)
    files["firmware/link/b.py"] = b"print('not deployed')\n"
    why = _damaged(_nothing, files, listed=FILES)
    assert why and "firmware/link/b.py" in why and "not in the manifest" in why, why


def test_no_manifest_is_a_fault_on_a_board_and_a_development_run_elsewhere():
    why = _damaged(_remove("manifest.txt"), required=True)
    assert why and "make deploy" in why, why
    assert _damaged(_remove("manifest.txt"), required=False) is None


def test_a_damaged_manifest_line_is_refused_not_skipped():
    why = _damaged(_append("manifest.txt", b"deadbeef firmware/a.mpy\n"))
    assert why and "SHA256 PATH" in why, why
