# The twin: the unix port built 32-bit with the firmware frozen in, as the
# board has it, and the sim HAL in place of the ESP32's (make image).
include("../manifest.py", hal="sim")
