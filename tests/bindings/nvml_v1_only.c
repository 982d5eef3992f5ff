/* A test double of libnvidia-ml exporting only old (v1) names and one device getter: proves that the
 * symbol table falls back to nvmlInit when nvmlInit_v2 is absent and that missing optional
 * symbols only make their facts absent. Built without nvmlShutdown (NO_SHUTDOWN) it proves
 * a missing required symbol makes the library unusable. */
#include <string.h>

static int fake_device;

int nvmlInit(void) { return 0; }
#ifndef NO_SHUTDOWN
int nvmlShutdown(void) { return 0; }
#endif
int nvmlDeviceGetCount(unsigned int* n) { *n = 1; return 0; }
int nvmlDeviceGetHandleByIndex(unsigned int i, void** dev) {
    if (i != 0) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = &fake_device;
    return 0;
}
int nvmlDeviceGetName(void* dev, char* name, unsigned int len) {
    (void)dev;
    strncpy(name, "V1-only GPU", len);
    return 0;
}
/* Always lost: the collector must mark the GPU lost and stop calling it. */
int nvmlDeviceGetUUID(void* dev, char* uuid, unsigned int len) {
    (void)dev; (void)uuid; (void)len;
    return 15; /* NVML_ERROR_GPU_IS_LOST */
}
