"""CPython only: a fault's number is written in firmware/faults.py alone;
every other module of the firmware and the host tools takes it by name.
The sources are parsed, and a number that is a fault code fails the test
where it stands as one: a constant named after a fault, a comparison with
a code, a `code=`/`"code":` value, a table keyed by codes, a tuple of
codes. (Tests keep their expected values.)"""

import ast
import os

from firmware import faults

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CODES = {getattr(faults, n): n for n in dir(faults) if n.isupper() and type(getattr(faults, n)) is int}


def _sources():
    for top in ("firmware", "host_tools"):
        for folder, subs, files in os.walk(os.path.join(ROOT, top)):
            subs[:] = [s for s in subs if s not in ("tests", "__pycache__")]
            for name in files:
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                if name.endswith(".py") and rel != "firmware/faults.py":
                    yield rel, path


def _code(node):
    """The fault code a node writes as a literal, or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value in CODES:
        return node.value
    return None


def _names_a_code(node):
    text = ast.unparse(node).lower()
    return "code" in text or "fault" in text


def fault_numbers(tree):
    """(line, what) of each fault number written in a module's tree."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            value = node.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "const" and value.args:
                value = value.args[0]
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.lstrip("_") in faults.__dict__ \
                        and target.id.lstrip("_").isupper() and _code(value) is not None:
                    found.append((node.lineno, "%s = %d" % (target.id, value.value)))
        elif isinstance(node, ast.Compare):
            sides = [node.left] + node.comparators
            for k, side in enumerate(sides):
                items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                others = sides[:k] + sides[k + 1:]
                for item in items:
                    if _code(item) is not None and any(_names_a_code(o) for o in others):
                        found.append((node.lineno, "compared with %d" % item.value))
        elif isinstance(node, ast.keyword) and node.arg and "code" in node.arg and _code(node.value):
            found.append((node.value.lineno, "%s=%d" % (node.arg, node.value.value)))
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == "code" and _code(v) is not None:
                    found.append((v.lineno, '"code": %d' % v.value))
            if len(keys) >= 3 and all(_code(k) is not None for k in keys):
                found.append((node.lineno, "a table keyed by fault codes"))
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            if len(node.elts) >= 3 and all(_code(e) is not None for e in node.elts):
                found.append((node.lineno, "a tuple of fault codes"))
    return found


def test_no_fault_number_is_written_outside_faults_py():
    bad = []
    for rel, path in _sources():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), rel)
        bad += ["%s:%d: %s" % (rel, line, what) for line, what in fault_numbers(tree)]
    assert not bad, "write these by name (firmware/faults.py):\n" + "\n".join(bad)


def test_the_check_finds_the_forms_a_copy_takes():
    """Each form a fault number took before the names: found."""
    src = ("_SENSOR_STUCK = const(13)\n"
           "POWER_LOST = 41\n"
           "SUSPECTS = {10: 'a', 11: 'b', 12: 'c'}\n"
           "_AUDIT = const((20, 21, 22))\n"
           "if code == 30: pass\n"
           "if f['code'] in (20, 21): pass\n"
           "x = {'code': 43}\n"
           "boot_fault(code=40)\n")
    assert sorted({line for line, _ in fault_numbers(ast.parse(src))}) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_the_check_leaves_other_numbers_alone():
    src = ("_QUIET_MS = const(100)\n"
           "_RX = const(32)\n"
           "if width < wide + 40: pass\n"
           "last = (last + [ev])[-12:]\n"
           "if n == 20: pass\n")
    assert fault_numbers(ast.parse(src)) == []


def test_the_names_are_the_tables_codes():
    """faults.py's names and its table (which the host reads) agree."""
    from host_tools.texts import faults as fault_texts
    assert sorted(CODES) == sorted(fault_texts.codes())
    for code, name in CODES.items():
        assert faults.name_of(code) == name.lower()
    assert faults.AUDIT_FAULTS == (faults.MISSING_TILE, faults.EXTRA_TILE, faults.UNKNOWN_TAG)
