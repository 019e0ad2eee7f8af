"""mjctl ports and --port auto: the serial ports of this PC, each asked
for a link handshake; the ones that answer are controllers (their table
id and build from the `hello` answer)."""

import serial

from firmware.link.codec import LinkError
from host_tools.link.client import LinkClient

PROBE_S = 0.3          # per attempt (two attempts): a controller answers in milliseconds


def probe(device, timeout=PROBE_S):
    """The controller's hello answer on `device`, or None (no answer, not
    a serial port, busy or not ours to open)."""
    from host_tools.link import mux as linkmux
    try:
        # Through the port's sharer when one holds it (the port is its alone).
        with LinkClient(linkmux.running(device) or device, timeout=timeout) as link:
            return link.hello()
    except (LinkError, serial.SerialException, OSError, ValueError):
        return None


def find_controllers(ports=None):
    """[{"device", "description", "controller", "table", "build", "fw"}] for
    every serial port (pyserial's list), each probed once."""
    if ports is None:
        from serial.tools import list_ports
        ports = list_ports.comports()
    out = []
    for p in sorted(ports, key=lambda p: p.device):
        info = probe(p.device)
        desc = p.description if p.description and p.description != "n/a" else ""
        out.append({"device": p.device, "description": desc, "controller": info is not None,
                    "table": info.get("table") if info else None,
                    "build": info.get("build") if info else None,
                    "fw": info.get("fw") if info else None})
    return out
