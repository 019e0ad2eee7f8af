"""The technician's operations and `mjctl`, the command line on top
(docs/technician.md):
    ops.py       the operations other tools use: a cycle, a hand, a fault described
    common.py    what every command shares: exit codes, output, texts, the table it reaches
    mjctl.py     the command line: its parser and `main`
    play.py      the cycle and the hand (cycle, hand, serve, start, clear)
    watch.py     the table as it is now (status, sensors, live, monitor)
    logs.py      what the controller keeps (log, counters)
    service.py   the service-session commands (jog, config, rfid, selftest, dice-test,
                 new-game)
    ports.py     which serial ports a controller answers on (ports, --port auto)
    fleet.py     the parlour's tables (fleet)
    selftest.py  the self-test's steps and verdict
"""
