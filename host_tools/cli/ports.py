"""mjctl ports and --port auto: the serial ports of this PC, each asked
for a link handshake; the ones that answer are controllers (their table
id and build from the `hello` answer).

    mjctl ports [--json]
"""

import serial

from firmware.link.codec import LinkError
from host_tools.link.client import LinkClient
from host_tools.cli.common import command, console, emit, t

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


def cmd_ports(args):
    """Every serial port of this PC; those that answer the link's handshake
    are controllers, with their table id and build."""
    found = find_controllers()

    def human(o):
        c = console()
        if not o["ports"]:
            c.print(t("msg.ports_none"))
            return
        for p in o["ports"]:
            what = t("msg.port_controller", table=p["table"], build=p["build"], fw=p["fw"]) \
                if p["controller"] else t("msg.port_silent")
            c.print("%-16s %s%s" % (p["device"], what,
                                    "  (%s)" % p["description"] if p["description"] else ""))
    emit(args, {"ports": found}, human)
    return 0


def add_ports(sub):
    command(sub, "ports", cmd_ports, t("help.ports"), False, "mjctl ports", link=False)
