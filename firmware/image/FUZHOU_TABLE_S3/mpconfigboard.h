// The Fuzhou mahjong table's controller: an ESP32-S3-MINI-1-N8, its link to
// the host on native USB (docs/hardware.md).
#define MICROPY_HW_BOARD_NAME               "Fuzhou mahjong table (ESP32-S3)"
#define MICROPY_HW_MCU_NAME                 "ESP32S3"

// The name the host sees on the USB port (lsusb, /dev/serial/by-id/).
#define MICROPY_HW_USB_PRODUCT_FS_STRING    "Fuzhou mahjong table"

// No REPL on UART0: its pins, GPIO43-44, carry the display board (UART1).
// (The QEMU variant, which has no USB, turns it on: mpconfigvariant_QEMU.cmake.)
#ifndef MICROPY_HW_ENABLE_UART_REPL
#define MICROPY_HW_ENABLE_UART_REPL         (0)
#endif

// The QEMU variant parks the core FreeRTOS leaves unused (qemu/park_core1.c).
#ifdef FUZHOU_TABLE_QEMU
#define MICROPY_BOARD_STARTUP               qemu_board_startup
void qemu_board_startup(void);
#endif

// No Bluetooth (sdkconfig.board says why).
#define MICROPY_PY_BLUETOOTH                (0)
