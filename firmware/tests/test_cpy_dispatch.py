"""CPython only (the codec's table is a private constant, compiled away on
the controller): each request is declared once, on its line of the
codec's table, with one permission and one home, and has exactly one
handler, the function named after it there."""

import inspect

from firmware.link import codec, commands, protocol, readouts, service
from firmware.link.server import LinkServer
from firmware.tests import test_dispatch

# Where each home's handlers are; `server`: LinkServer's methods.
HOMES = {"server": LinkServer, "commands": commands, "readouts": readouts, "service": service}
# service.py's functions that are not requests: the gate, the sessions, the log.
SERVICE_HELPERS = {"answer", "challenge", "authenticate", "check", "close"}


def lines():
    return codec.REQUESTS.splitlines()


def test_each_line_is_op_who_home_arguments_and_answer():
    for line in lines():
        request, sep, answer = line.partition(" > ")
        assert sep and ">" not in request and ">" not in answer, line
        op, who, home, *args = request.split(" ")
        assert who in protocol.WHO and home in protocol.HOMES, line
        assert codec.route(op) == (who, home), line
        assert all(":" in a for a in args) and all(":" in f for f in answer.split(" ")), line
    assert codec.route("reboot") == (None, None)


def test_every_request_has_exactly_one_handler():
    for line in lines():
        op = line.split(" ")[0]
        who, home = codec.route(op)
        found = [h for h, where in HOMES.items() if callable(getattr(where, op, None))]
        assert found == [home], (op, found)
        handler = getattr(HOMES[home], op)
        params = list(inspect.signature(handler).parameters)
        assert params == (["self", "ctl", "now", "args"] if home == "server"
                          else ["link", "ctl", "now", "args"]), (op, params)


def test_every_handler_answers_a_request_of_its_home():
    """No handler is left over from a request no longer in the table."""
    declared = {line.split(" ")[0]: codec.route(line.split(" ")[0])[1] for line in lines()}
    for home in ("commands", "readouts", "service"):
        module = HOMES[home]
        public = {name for name, fn in vars(module).items()
                  if inspect.isfunction(fn) and fn.__module__ == module.__name__
                  and not name.startswith("_") and name != "const"}   # CPython's stand-in
        if home == "service":
            public -= SERVICE_HELPERS
        assert {name: declared.get(name) for name in public} == {name: home for name in public}


def test_a_request_not_for_anyone_lives_in_service_which_checks_who_sent_it():
    for line in lines():
        op = line.split(" ")[0]
        who, home = codec.route(op)
        assert who == "anyone" or home == "service", line


def test_every_permission_has_a_request():
    assert {codec.route(line.split(" ")[0])[0] for line in lines()} == set(protocol.WHO)


def test_the_dispatch_tests_ask_every_request():
    from firmware.controller import table
    assert test_dispatch.OPS == tuple(line.split(" ")[0] for line in lines())
    assert table.NAMES[test_dispatch._IN_HAND] == "in_hand"
    assert table.NAMES[test_dispatch._IDLE] == "idle"
    assert test_dispatch._EVENT == codec.EVENT
