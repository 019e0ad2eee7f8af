"""CPython only: private constants (`_NAME = const(...)`) are compiled away
on the board, so where a module keeps its own constant copy of another's
table (no module global, no interned name), the copy is checked here."""

from firmware.controller import builder
from firmware.link import server


def test_the_link_servers_audit_faults_are_the_builders():
    """Which faults may name tiles (walls not in play)."""
    assert tuple(server._AUDIT_FAULTS) == tuple(builder.AUDIT_FAULTS)


def test_the_link_servers_technician_requests_include_the_readouts():
    assert set(server._READOUTS) <= set(server._TECHNICIAN)
