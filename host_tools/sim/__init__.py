"""The virtual table: a physical model of the machine behind the sim bus.

    table.py           VirtualTable: the devices on one virtual clock, tile flow, power
    table_records.py   the table's log, counters and the lower bound of a build
    plate.py           tray + shuffle plate, rotation sensor
    lanes.py           the four lanes: pick-up gaps, chute, stacking, count sensor
    lifters.py         wall lifters and their limit switches
    rfid.py            the RFID reader (UART2)
    display.py         the display board (UART1)
    keys.py            seat keys and the virtual players
    hand_players.py    players who play one hand on the walls in play (attach())
    hand_plan.py       their plan: the §13 scenario and its timeline
    hand_power_cut.py  the players through a power cut
    faults.py          named fault injection and repair
    technician.py      what the technician does for a fault, and by hand at the table
    bound.py           the lower bound of a build from the model's physics
    bus.py             BusServer: the hardware bus over a serial port
    config.py, tileset.py, serialframes.py: config file, tiles and tags, UART framing

Every tunable is a class attribute of its device (e.g. Lane.mean_gap_ms,
Lifter.up_ms, Players.reaction_ms); set it on the class, or a subclass,
before building a table.
"""

from .bus import BusServer
from .table import VirtualTable

__all__ = ["BusServer", "VirtualTable"]
