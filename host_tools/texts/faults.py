"""The host's reader of the firmware's fault table (firmware/faults.py: the
one source). The controller itself only ever names a fault (`name_of`);
cause, fix and the list of codes are read here, on the PC, so that their
code does not take the controller's heap.

The firmware keeps the table a private constant (on a board a private
`const` is no global and no interned name), so the host reads it as the
data it is: the string constant of firmware/faults.py's source, as the
docs test reads docs/faults.md. A block is "code name", the cause, the
fix, then a blank line."""

import ast
from pathlib import Path

import firmware.faults
from firmware.faults import name_of

__all__ = ["name_of", "describe", "codes", "code_of"]


def _table_text():
    """The one multi-line string constant assigned at the top of
    firmware/faults.py (wrapped in const())."""
    tree = ast.parse(Path(firmware.faults.__file__).read_text(encoding="utf-8"))
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign) else None
        if isinstance(value, ast.Call) and value.args:
            value = value.args[0]
        if isinstance(value, ast.Constant) and isinstance(value.value, str) and "\n\n" in value.value:
            return value.value
    raise RuntimeError("no fault table in %s" % firmware.faults.__file__)


def _blocks(text):
    out = {}
    for block in text.split("\n\n"):
        head, cause, fix = block.strip("\n").split("\n")
        code, name = head.split(" ")
        out[int(code)] = (name, cause, fix)
    return out


TABLE = _blocks(_table_text())     # code -> (name, cause, fix), in the table's order


def describe(code):
    """(name, cause, fix) for a code; an unknown code says so."""
    if code not in TABLE:
        from host_tools.texts import en
        return (en.TEXTS["fault.unknown.name"],
                en.TEXTS["fault.unknown.cause"].format(code=code), en.TEXTS["fault.unknown.fix"])
    return TABLE[code]


def codes():
    return list(TABLE)


def code_of(name):
    for code in codes():
        if name_of(code) == name:
            return code
    raise KeyError(name)
