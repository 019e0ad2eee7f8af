# The Fuzhou mahjong table's board: an ESP32-S3-MINI-1-N8 (8 MB flash, no
# PSRAM) on native USB (docs/hardware.md). `make firmware` builds it with
# ports/esp32's Makefile, BOARD_DIR naming this folder (README.md here).
set(IDF_TARGET esp32s3)

# ESP-IDF reads a relative CONFIG_PARTITION_TABLE_CUSTOM_FILENAME from
# ports/esp32, and this folder lies outside the MicroPython tree: the build
# reads a copy of sdkconfig.board whose @MICROPY_BOARD_DIR@ is this
# folder's absolute path. configure_file also makes an edit of
# sdkconfig.board rerun CMake.
configure_file(${MICROPY_BOARD_DIR}/sdkconfig.board ${CMAKE_BINARY_DIR}/sdkconfig.board @ONLY)

# Not the ESP32_GENERIC_S3 set: no sdkconfig.ble (no Bluetooth, see
# sdkconfig.board) and no sdkconfig.spiram_sx (the N8 has no PSRAM).
# Native USB needs no file of its own in MicroPython 1.28: the ESP32-S3's
# USB runs TinyUSB's CDC by default (mpconfigport.h, MICROPY_HW_USB_CDC).
set(SDKCONFIG_DEFAULTS
    boards/sdkconfig.base
    ${CMAKE_BINARY_DIR}/sdkconfig.board
)

# The table keeps no btree database; without btree the build needs no
# berkeley-db submodule either.
set(MICROPY_PY_BTREE OFF)

set(MICROPY_FROZEN_MANIFEST ${MICROPY_BOARD_DIR}/manifest.py)

# Built with the vendored ESP32-S3 kit (make firmware ESP_VENDOR=...):
# what that ESP-IDF tree lacks, left out (kit/kit.cmake says what).
if(DEFINED ENV{FUZHOU_TABLE_KIT})
    include(${MICROPY_BOARD_DIR}/kit/kit.cmake)
endif()
