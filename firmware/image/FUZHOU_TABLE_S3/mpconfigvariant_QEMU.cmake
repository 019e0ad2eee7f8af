# The board in QEMU (make qemu; docs/hardware.md, The firmware in QEMU):
# the same board, partition table and freeze, with the few differences
# an emulated S3 needs. The port's make is given BOARD_VARIANT=QEMU, and
# this file is read after mpconfigboard.cmake (so after kit/kit.cmake:
# QEMU has no Wi-Fi, and the image is built with the kit).
#
# - The console on UART0, where QEMU's first serial port is: QEMU has no
#   USB. The link runs on the console as it does on the board's USB.
# - No USB-Serial-JTAG (a stub in QEMU).
# - FreeRTOS on one core (sdkconfig.qemu says why), and the core left
#   over parked at start-up (qemu/park_core1.c says why); its tick at
#   1 kHz (sdkconfig.qemu).
# - The sim HAL frozen in beside the esp32 HAL (manifest_qemu.py): with
#   qemu.json on its flash the board drives the virtual table over UART1,
#   else it stops at the REPL, where the esp32 HAL's check runs.
list(APPEND MICROPY_DEF_BOARD
    MICROPY_HW_ENABLE_UART_REPL=1
    MICROPY_HW_ESP_USB_SERIAL_JTAG=0
    FUZHOU_TABLE_QEMU=1
)
list(APPEND MICROPY_SOURCE_BOARD ${MICROPY_BOARD_DIR}/qemu/park_core1.c)
list(APPEND SDKCONFIG_DEFAULTS ${MICROPY_BOARD_DIR}/sdkconfig.qemu)
set(MICROPY_FROZEN_MANIFEST ${MICROPY_BOARD_DIR}/manifest_qemu.py)
