"""CPython only (it reads the sources): the firmware's import graph, every
import counted (those inside functions too), has no cycle and no upward
arrow. The layers, top down (docs/firmware.md, Layers): entry, link,
controller, drivers, HAL, then the modules beside them and the rules core;
a module may import its own layer and those below."""

from host_tools.tests.test_layout import ROOT, imports, module_name

# (layer, its modules by prefix), top down; "beside" and the rules core
# may import only each other.
LAYERS = (
    ("entry", ("firmware.main", "firmware.sim_main", "firmware.entry")),
    ("link", ("firmware.link",)),
    ("controller", ("firmware.controller",)),
    ("drivers", ("firmware.drivers", "firmware.devices")),
    ("hal", ("firmware.hal",)),
    ("beside", ("firmware.config", "firmware.tags", "firmware.faults", "firmware.frame",
                "firmware.persist", "firmware.manifest", "firmware.image_build", "firmware")),
    ("beside", ("engine_core",)),
)


def layer_of(module):
    """The index in LAYERS of the longest prefix naming `module`."""
    best, rank = -1, None
    for i, (_name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    if LAYERS[rank][0] == "beside":
        rank = len(LAYERS) - 2             # the two beside rows are one layer
    return rank


def device_files():
    for top in ("firmware", "engine_core"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).parts
            if "tests" not in rel and rel[1:2] not in (("image",), ("fakes",)):
                yield path


def graph():
    """{module: {imported firmware or engine_core module}}"""
    known = {module_name(p) for p in device_files()}
    out = {}
    for path in device_files():
        me = module_name(path)
        edges = out.setdefault(me, set())
        for _line, module, names in imports(path):
            # `from pkg import mod` is an edge to pkg.mod, else to the module.
            targets = [t for t in ("%s.%s" % (module, n) for n in names) if t in known]
            edges |= {t for t in targets or [module]
                      if t.split(".")[0] in ("firmware", "engine_core") and t != me}
    return out


def test_no_module_imports_one_above_it():
    upward = []
    for me, targets in graph().items():
        for t in targets:
            if layer_of(t) < layer_of(me):
                upward.append("%s -> %s" % (me, t))
    assert upward == [], upward


def test_the_import_graph_has_no_cycle():
    g = graph()
    done, path = set(), []

    def visit(m):
        if m in path:
            raise AssertionError("a cycle: " + " -> ".join(path[path.index(m):] + [m]))
        if m in done:
            return
        path.append(m)
        for t in sorted(g.get(m, ())):
            visit(t)
        path.pop()
        done.add(m)
    for m in sorted(g):
        visit(m)


def test_the_hal_and_persist_stand_below_the_link():
    g = graph()
    for me in ("firmware.hal.sim", "firmware.persist"):
        assert not any(t.startswith("firmware.link") for t in g[me]), (me, g[me])
