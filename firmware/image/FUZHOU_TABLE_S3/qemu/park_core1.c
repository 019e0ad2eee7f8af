// The QEMU variant's start-up (mpconfigvariant_QEMU.cmake): the second
// core parked, then the port's own start-up.
//
// With FreeRTOS on one core, ESP-IDF gates the second core's clock and the
// chip's core 1 stops. QEMU's esp32s3 machine models no clock gate: its
// core 1 runs from reset in the ROM's wait for a start address, a loop
// that reads SYSTEM_CORE_1_CONTROL_1 without end. Each read takes QEMU's
// global lock, so the idle core costs a host core and holds back the
// UARTs' I/O. Given a start address, core 1 leaves the ROM and waits for
// an interrupt with every level masked, where QEMU's thread for it sleeps
// (docs/hardware.md, How long the suite takes in QEMU).

#include <stdint.h>

#include "esp_attr.h"
#include "soc/soc.h"
#include "soc/system_reg.h"

void boardctrl_startup(void);

static void IRAM_ATTR park_core1(void) {
    for (;;) {
        __asm__ volatile ("waiti 15");
    }
}

void qemu_board_startup(void) {
    REG_WRITE(SYSTEM_CORE_1_CONTROL_1_REG, (uint32_t)park_core1);
    boardctrl_startup();
}
