"""A table's service key on this PC (docs/deploy.md, The table's key).

A key is 32 random bytes in a file, owner-only. Each table has its own,
named by the board's unique id (`machine.unique_id()`, an ESP32's base MAC)
under keys/: `keys/table-<12 hex digits>.key`. A key is shown by its
fingerprint, the first 8 bytes of its SHA-256 in hex: the same on the PC
and on the board (the deploy reads the SHA-256 of the board's key file, not
the key).
"""

import hashlib
import os
from pathlib import Path

from host_tools.texts import t

KEY_BYTES = 32
KEYS_DIR = Path("keys")       # relative: where make runs, the project root


class KeyFileError(Exception):
    """A key file that cannot be used; the message is one line for the user."""


def fingerprint(key):
    """The fingerprint of a key (bytes)."""
    return fingerprint_of_sha256(hashlib.sha256(key).hexdigest())


def fingerprint_of_sha256(hexdigest):
    """The fingerprint from the key's SHA-256 in hex (what a board reports)."""
    return hexdigest[:16]


def default_path(uid_hex, keys_dir=KEYS_DIR):
    """The key file of the table whose board's unique id is `uid_hex`."""
    return Path(keys_dir) / ("table-%s.key" % uid_hex)


def read(path):
    """The key in `path` (bytes); KeyFileError when it is missing, a folder,
    unreadable or not 32 bytes."""
    path = Path(path)
    if path.is_dir():
        raise KeyFileError(t("key.is_folder", file=path))
    if not path.exists():
        raise KeyFileError(t("key.missing", file=path))
    try:
        key = path.read_bytes()
    except OSError as e:
        raise KeyFileError(t("key.unreadable", file=path, why=e.strerror or e))
    if len(key) != KEY_BYTES:
        raise KeyFileError(t("key.size", file=path, n=len(key), want=KEY_BYTES))
    return key


def make(path):
    """A new key written to `path` (which must not exist), owner-only."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = os.urandom(KEY_BYTES)
        fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise KeyFileError(t("key.unwritable", file=path, why=e.strerror or e))
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


def read_or_make(path):
    """(key, made): the key in `path`, or a new one made there when the
    file does not exist (the virtual table's practice key)."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return make(path), True
    return read(path), False
