# The unfrozen build: the unix port built 32-bit with its own frozen
# modules and what the firmware takes from micropython-lib, none of the
# firmware: a stock board that make deploy gave those libraries (in lib/).
# The rules and firmware tests and the development forms run on it.
include("$(PORT_DIR)/variants/standard/manifest.py")
include("../manifest.py", firmware=False)
