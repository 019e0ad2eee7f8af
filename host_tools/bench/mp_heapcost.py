# MicroPython only: run by host_tools/bench/heapcost.py on the twin (the
# firmware frozen in), in a directory holding CONFIG, TAGS and a scratch STORE:
#     mp_heapcost BUS_FILE CONFIG TAGS STORE
# The boot of firmware/main.py, step by step: after each step a collection,
# then one line "STEP name bytes" and MicroPython's qstr_info line; at the
# end "LIVE bytes" (absolute). The sim
# HAL gets a plain file for its bus: nothing is sent that needs an answer.
import gc
import sys

import micropython

gc.collect()
_base = gc.mem_alloc()


def mark(name):
    gc.collect()
    print("STEP %s %d" % (name, gc.mem_alloc() - _base))
    micropython.qstr_info()


bus_file, config_path, tags_path, store = sys.argv[1:5]
from firmware.hal.sim import SimHal  # noqa: E402
mark("hal.sim")
from firmware import main  # noqa: E402
mark("main+link")
bus = open(bus_file, "w+b")
hal = SimHal(bus.fileno(), -1, store, None)
mark("SimHal()")
from firmware import config  # noqa: E402
cfg = config.load(config_path)
mark("config")
from firmware import tags as _tags  # noqa: E402
tags = _tags.load(tags_path)
mark("tags")
from firmware.link.server import LinkServer  # noqa: E402
link = LinkServer(hal, "0", "b", "sim", None)
mark("LinkServer()")
from firmware.devices import Devices  # noqa: E402
mark("import_devices")
dev = Devices(hal, cfg, tags)
mark("Devices()")
from firmware.controller.table import TableController  # noqa: E402
mark("import_controller")
from firmware.link.handlers import HANDLERS  # noqa: E402
mark("import_handlers")
ctl = TableController(hal, cfg, dev, link.emit)
link.attach(ctl, HANDLERS)
mark("TableController()")

gc.collect()
print("LIVE %d" % gc.mem_alloc())          # absolute, the interpreter's own included
