# The board's image: MicroPython's ESP32 port with what ships frozen in
# (docs/deploy.md, The board's image). `make firmware` builds it.

# The port's standard frozen modules: _boot.py mounts the vfs partition at
# /, where config.json, tags.txt, service.key and the counters live.
include("$(PORT_DIR)/boards/manifest.py")

# What ships, with the ESP32 HAL: the one list, ../manifest.py.
include("../manifest.py", hal="esp32")

# The entry points, frozen: the port runs a frozen boot.py and main.py
# before any file of those names (boot.py here says where), so no file on
# the board's flash can take their place.
module("boot.py")
module("main.py")
