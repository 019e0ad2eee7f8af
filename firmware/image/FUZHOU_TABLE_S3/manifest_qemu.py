# The QEMU variant's freeze (make qemu): the board's, with the sim HAL
# beside the esp32 HAL (hal="qemu" in ../manifest.py) and the QEMU entry
# point as main.py (qemu/main.py).
include("$(PORT_DIR)/boards/manifest.py")
include("../manifest.py", hal="qemu")
module("boot.py")
module("main.py", base_path="qemu")
