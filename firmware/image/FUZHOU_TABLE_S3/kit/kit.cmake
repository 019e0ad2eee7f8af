# The image built with the vendored ESP32-S3 kit (a GCC 14.2 toolchain,
# ESP-IDF v5.3.1 trimmed, no component registry): mpconfigboard.cmake
# includes this file when host_tools/image/espkit.py sets
# FUZHOU_TABLE_KIT. What the kit lacks, and so what this image lacks:
#
# - Wi-Fi: the kit's esp_wifi libraries do not link with v5.3.1, so no
#   network.WLAN and no ESP-NOW. The HAL seeds its DRBG without the radio
#   and says so (firmware/hal/esp32.py); the telemetry has no network.
# - TinyUSB: it is a registry component. The link runs on the S3's
#   USB-Serial-JTAG controller instead, on the same USB pins: the host
#   sees a CDC port all the same ("USB JTAG/serial debug unit").
# - mDNS: a registry component too (kit/mdns.h says why an empty header).
list(APPEND SDKCONFIG_DEFAULTS ${MICROPY_BOARD_DIR}/kit/sdkconfig.kit)
set(MICROPY_PY_TINYUSB OFF)
list(APPEND MICROPY_DEF_BOARD
    MICROPY_HW_ENABLE_USBDEV=0
    MICROPY_PY_NETWORK_WLAN=0
    MICROPY_PY_ESPNOW=0
    MICROPY_HW_ENABLE_MDNS_QUERIES=0
    MICROPY_HW_ENABLE_MDNS_RESPONDER=0
)
include_directories(${MICROPY_BOARD_DIR}/kit)

# The kit's ESP-IDF has no cJSON, spiffs, protobuf-c, unity, cmock or
# openthread: build the main component and what it requires, nothing more;
# and nvs_sec_provider, which nothing requires but the production image's
# NVS encryption needs (it registers the scheme that keeps NVS's keys in
# nvs_keys under flash encryption: sdkconfig.production).
set(COMPONENTS main nvs_sec_provider)
