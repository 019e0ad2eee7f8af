"""The fault codes compiled into each module that imports them, for the
image (manifest.py) and the .mpy files of `make mpy`.

`python inline_faults.py ROOT REL OUT`: the source of ROOT/REL as it is
compiled, written to OUT.
"""

import ast
import os
import sys

# firmware/faults.py names the codes, `NAME = const(n)`, and
# every other module imports them as private names, `from firmware.faults
# import NAME as _NAME`. Frozen as written, each would be a global of
# faults and of its importer (heap, docs/heap-idioms.md). So
# the image and `make mpy` compile a copy of each such module with the
# import line turned into `_NAME = const(n)` (compiled into the
# importer), and of faults.py with its codes private: no global, no heap,
# the same lines.

def fault_codes(root):
    with open(os.path.join(root, "firmware", "faults.py")) as f:
        text = f.read()
    codes = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and getattr(node.value.func, "id", None) == "const" \
                and isinstance(node.targets[0], ast.Name) and not node.targets[0].id.startswith("_"):
            codes[node.targets[0].id] = ast.get_source_segment(text, node.value.args[0])
    return codes


def with_codes_inlined(root, rel, codes):
    """The source of `rel` as the image freezes it, or None when it is frozen
    as it is."""
    with open(os.path.join(root, rel)) as f:
        text = f.read()
    lines = text.split("\n")
    changed = False
    for node in ast.parse(text).body:
        if rel == "firmware/faults.py" and isinstance(node, ast.Assign) \
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in codes:
            row = node.lineno - 1
            lines[row] = "_" + lines[row]
            changed = True
        elif isinstance(node, ast.ImportFrom) and node.module == "firmware.faults":
            consts = []
            for alias in node.names:
                if alias.name not in codes or not (alias.asname or "").startswith("_"):
                    raise ValueError("%s:%d: import a fault code as a private name"
                                     " (from firmware.faults import %s as _%s)"
                                     % (rel, node.lineno, alias.name, alias.name))
                consts.append("%s = const(%s)" % (alias.asname, codes[alias.name]))
            first, last = node.lineno - 1, node.end_lineno - 1
            lines[first:last + 1] = ["; ".join(consts)] + [""] * (last - first)
            changed = True
    for name in codes:
        if "faults." + name in text:
            raise ValueError("%s: faults.%s would be missing from the image: import it as _%s"
                             % (rel, name, name))
    return "\n".join(lines) if changed else None


if __name__ == "__main__":
    _root, _rel, _out = sys.argv[1:4]
    _text = with_codes_inlined(_root, _rel, fault_codes(_root))
    if _text is None:
        with open(os.path.join(_root, _rel)) as _f:
            _text = _f.read()
    with open(_out, "w") as _f:
        _f.write(_text)
