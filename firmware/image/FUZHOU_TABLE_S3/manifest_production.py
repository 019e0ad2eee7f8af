# The production image's freeze (make firmware PRODUCTION=1; docs/security.md).
# Of the port's standard modules only its own folder (_boot.py mounts the
# filesystem, flashbdev.py finds it): not the micropython-lib packages that
# ports/esp32/boards/manifest.py adds (WebREPL, mip, upysh, asyncio, ...),
# none of which the table uses and some of which serve or fetch code.
freeze("$(PORT_DIR)/modules")

# What ships, with the ESP32 HAL, built for production: firmware/image_build.py
# says PRODUCTION = True, which the frozen main.py reads.
include("../manifest.py", hal="esp32", production=True)

# The entry points, frozen, as in manifest.py.
module("boot.py")
module("main.py")
