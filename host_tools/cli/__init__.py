"""The technician's operations and `mjctl`, the command line on top
(docs/technician.md):
    ops.py       the operations other tools use: a cycle, a hand, a fault described
    common.py    what every command shares: exit codes, output, texts
    mjctl.py     the command line: its parser, `main`, the play commands
    service.py   the service commands (log, live, config, jog, rfid, ...)
    ports.py     which serial ports a controller answers on
    selftest.py  the self-test's steps and verdict
"""
