# The production image: `make firmware PRODUCTION=1 SIGNING_KEY=...` builds
# this variant (the port's make with BOARD_VARIANT=PRODUCTION, read after
# mpconfigboard.cmake). docs/security.md says what it turns on.
#
# host_tools/image/board_image.py has checked the signing key (a file
# outside the project) and passes its absolute path in the environment;
# ESP-IDF reads it from sdkconfig.production's CONFIG_SECURE_BOOT_SIGNING_KEY.
if("$ENV{FUZHOU_TABLE_SIGNING_KEY}" STREQUAL "")
    message(FATAL_ERROR "the production image is signed: build it with"
                        " make firmware PRODUCTION=1 SIGNING_KEY=<key file outside the project>")
endif()
set(FUZHOU_TABLE_SIGNING_KEY $ENV{FUZHOU_TABLE_SIGNING_KEY})

# As sdkconfig.board: a copy whose @...@ are filled in (the key, this
# folder for the partition table), after the board's own settings.
configure_file(${MICROPY_BOARD_DIR}/sdkconfig.production ${CMAKE_BINARY_DIR}/sdkconfig.production @ONLY)
list(APPEND SDKCONFIG_DEFAULTS ${CMAKE_BINARY_DIR}/sdkconfig.production)

# What the production image freezes: the firmware with PRODUCTION = True in
# firmware/image_build.py, and none of the port's network and shell packages.
set(MICROPY_FROZEN_MANIFEST ${MICROPY_BOARD_DIR}/manifest_production.py)
