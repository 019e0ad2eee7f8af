"""The host's reader of the firmware's fault table (firmware/faults.py,
_TABLE: the one source). The controller itself only ever names a fault
(`name_of`); cause, fix and the list of codes are read here, on the PC, so
that their code does not take the controller's heap."""

from firmware.faults import _TABLE as TABLE, _block_at, name_of

__all__ = ["name_of", "describe", "codes", "code_of"]


def describe(code):
    """(name, cause, fix) for a code; an unknown code says so."""
    i = _block_at(code)
    if i < 0:
        from host_tools.texts import en
        return (en.TEXTS["fault.unknown.name"],
                en.TEXTS["fault.unknown.cause"].format(code=code), en.TEXTS["fault.unknown.fix"])
    end = TABLE.find("\n\n", i)
    head, cause, fix = TABLE[i:end if end >= 0 else len(TABLE)].split("\n")
    return head.split(" ")[1], cause, fix


def codes():
    out = []
    i = 0
    while i >= 0:
        out.append(int(TABLE[i:TABLE.find(" ", i)]))
        i = TABLE.find("\n\n", i)
        if i >= 0:
            i += 2
    return out


def code_of(name):
    for code in codes():
        if name_of(code) == name:
            return code
    raise KeyError(name)
