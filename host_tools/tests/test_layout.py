"""host_tools by role: the import graph of its packages (link, sim, cli,
qa, bench, view, image, texts, fleet, parlour) has no cycle, no module imports a module
that imports it back, and no tool imports a test or another module's
private name (`_X`). Every import counts, those inside functions too.

    .venv/bin/python -m host_tools.tests.test_layout     # the package graph
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "host_tools"

# Imports of a test a tool may make: none (the firmware's stand-ins for
# the hardware are firmware/fakes/, not tests).
ALLOWED_TEST_IMPORTS = {}


# The firmware's private names the host reads: none. A host_tools
# module's private name is never read by another.
FIRMWARE_PRIVATE = {}

# The standard library's private names a tool sets, each for a reason.
# argparse looks its own words up through its module's `_` at the moment
# it prints them and CPython ships no catalogue for them: texts points
# that name at the chosen language's table.
STDLIB_PRIVATE = {"argparse": {"_"}}


def allowed_private(module):
    return FIRMWARE_PRIVATE.get(module, set()) | STDLIB_PRIVATE.get(module, set())


def module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def tool_files():
    """Every module of host_tools but its tests."""
    return sorted(p for p in TOOLS.rglob("*.py") if "tests" not in p.relative_to(TOOLS).parts)


def imports(path):
    """(line, module imported, names taken from it) of every import in the
    file; relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path) if path.is_relative_to(ROOT) else path.stem
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            out.append((node.lineno, base, tuple(a.name for a in node.names)))
    return out


def private_attributes(path):
    """(line, module, attribute) of every `alias._x` where alias names a
    module bound by an import (the module of another file)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                aliases[a.asname or a.name] = "%s.%s" % (node.module, a.name)
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            out.append((node.lineno, aliases[node.value.id], node.attr))
    return out


def package_of(module):
    """host_tools.<package> of a host_tools module ("host_tools" for the
    package's own __init__), else None."""
    parts = module.split(".")
    if parts[0] != "host_tools":
        return None
    return ".".join(parts[:2])


def modules():
    return {module_name(p) for p in TOOLS.rglob("*.py")}


def module_graph():
    known = modules()
    graph = {}
    for path in tool_files():
        me = module_name(path)
        edges = graph.setdefault(me, set())
        for _line, target, names in imports(path):
            # `from pkg import mod` is an edge to pkg.mod, and to pkg's
            # __init__ only when a name of its own is taken from it.
            subs = [t for t in ("%s.%s" % (target, n) for n in names) if t in known]
            hits = subs if subs and len(subs) == len(names) else (
                [target] if target in known else []) + subs
            edges |= {t for t in hits if t != me}
    return graph


def package_graph():
    graph = {}
    for me, targets in module_graph().items():
        mine = package_of(me)
        for t in targets:
            theirs = package_of(t)
            if theirs != mine and mine != "host_tools" and theirs != "host_tools":
                graph.setdefault(mine, set()).add(theirs)
        graph.setdefault(mine, set())
    return graph


def find_cycle(graph):
    """A cycle as a list of nodes (first == last), or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_the_packages_are_the_roles():
    found = {p.name for p in TOOLS.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert found == {"link", "sim", "cli", "qa", "bench", "view", "image", "texts", "tests",
                     "fleet", "parlour"}, found
    loose = sorted(p.name for p in TOOLS.glob("*.py") if p.name != "__init__.py")
    assert not loose, "modules outside a package: %s" % loose


def test_no_cycle_between_packages():
    graph = package_graph()
    assert find_cycle(graph) is None, "a cycle between packages: %s" % " -> ".join(
        find_cycle(graph))


def test_no_cycle_between_modules():
    graph = module_graph()
    assert find_cycle(graph) is None, "a cycle between modules: %s" % " -> ".join(
        find_cycle(graph))


def test_no_tool_imports_a_test():
    bad = []
    for path in tool_files():
        me = module_name(path)
        for line, target, names in imports(path):
            for t in [target] + ["%s.%s" % (target, n) for n in names]:
                parts = t.split(".")
                if ("tests" in parts or any(p.startswith("test_") for p in parts)) \
                        and t not in ALLOWED_TEST_IMPORTS.get(me, ()) \
                        and target not in ALLOWED_TEST_IMPORTS.get(me, ()):
                    bad.append("%s:%d imports %s" % (path.relative_to(ROOT), line, t))
    assert not bad, "\n".join(bad)


def test_no_tool_imports_a_private_name():
    bad = []
    for path in tool_files():
        me = module_name(path)
        for line, target, names in imports(path):
            if target in ALLOWED_TEST_IMPORTS.get(me, ()):
                continue
            for n in names:
                if n.startswith("_") and not n.startswith("__") \
                        and n not in allowed_private(target):
                    bad.append("%s:%d takes %s from %s" % (path.relative_to(ROOT), line, n, target))
        for line, module, attr in private_attributes(path):
            if attr not in allowed_private(module):
                bad.append("%s:%d reads %s.%s" % (path.relative_to(ROOT), line, module, attr))
    assert not bad, "\n".join(bad)


def test_the_checks_see_what_they_look_for(tmp_path):
    f = tmp_path / "tool.py"
    f.write_text("from firmware.tests.test_link_server import opened\nfrom firmware import faults\n"
                 "def f():\n    from host_tools.cli.common import _x\n    return faults._TABLE\n")
    assert [(t, n) for _, t, n in imports(f)] == [
        ("firmware.tests.test_link_server", ("opened",)), ("firmware", ("faults",)),
        ("host_tools.cli.common", ("_x",))]
    assert private_attributes(f) == [(5, "firmware.faults", "_TABLE")]


def test_the_checks_see_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def main():
    for pkg, targets in sorted(package_graph().items()):
        print("%-18s -> %s" % (pkg, ", ".join(sorted(targets)) or "-"))
    cycle = find_cycle(package_graph())
    print("no cycle" if cycle is None else "CYCLE: " + " -> ".join(cycle))
    return 0 if cycle is None else 1


if __name__ == "__main__":
    sys.exit(main())
