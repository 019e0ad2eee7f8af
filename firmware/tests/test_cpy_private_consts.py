"""CPython only: private constants (`_NAME = const(...)`) are compiled away
on the board, so where a module keeps its own constant copy of another's
table (no module global, no interned name), the copy is checked here."""

from firmware.link import server


def test_the_link_server_tests_request_kind_is_the_codecs():
    from firmware.link import codec
    from firmware.tests import test_link_server
    assert test_link_server.REQUEST == codec.REQUEST


def test_the_words_the_dispatch_compares_are_the_codecs():
    """The server routes by the home, service.py checks by the permission,
    each a word of a request's line in the codec's table, compared as a
    literal (test_cpy_dispatch.py checks every line)."""
    import ast
    import inspect
    from firmware.link import protocol, service
    for module, name, words in ((server, "home", protocol.HOMES), (service, "who", protocol.WHO)):
        compared = set()
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)
                    and node.left.id == name):
                compared |= {c.value for c in node.comparators if isinstance(c, ast.Constant)}
        assert compared and compared <= set(words), (name, compared)


def test_the_hidden_driver_states_are_where_their_names_say():
    from firmware.drivers import motion, panel
    assert motion.NAMES[motion._RISING] == "rising"
    assert motion.NAMES[motion._LOWERING] == "lowering"
    assert panel._NONE == 0
