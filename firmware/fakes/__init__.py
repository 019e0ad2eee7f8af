"""Stand-ins for the table's hardware, on CPython and MicroPython alike:
the firmware's tests and the bench's MicroPython scripts build the real
drivers and controller on them. Neither frozen into the image nor
deployed (firmware/image/manifest.py, host_tools/image/deploy_build.py)."""
