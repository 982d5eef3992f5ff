/* A test double of libamd_smi exporting only the four calls the binding requires (one GPU, no
 * readings): proves that every other AMD SMI symbol is optional. Built without
 * amdsmi_get_processor_handles (NO_PROCESSOR_HANDLES) it proves a missing required symbol makes
 * the library unusable. */
#include <stdint.h>

static int fake_socket;

unsigned amdsmi_init(uint64_t flags) { return flags ? 0 : 1; }
unsigned amdsmi_shut_down(void) { return 0; }
unsigned amdsmi_get_socket_handles(uint32_t* count, void** sockets) {
    if (sockets && *count >= 1) sockets[0] = &fake_socket;
    *count = 1;
    return 0;
}
#ifndef NO_PROCESSOR_HANDLES
static int fake_gpu;

unsigned amdsmi_get_processor_handles(void* socket, uint32_t* count, void** gpus) {
    if (socket != &fake_socket) return 1; /* AMDSMI_STATUS_INVAL */
    if (gpus && *count >= 1) gpus[0] = &fake_gpu;
    *count = 1;
    return 0;
}
#endif
