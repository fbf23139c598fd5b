/* src/runtime/runtime.h: the GPU runtime's internal interface, one header per concern:
 * embedded templates, NVRTC JIT, the device context and CUDA error mapping, device memory,
 * the cubin memo, modules (module.h says why kernels go through the runtime's library API
 * rather than the driver), launch programs, measurement, validation of device outputs.
 * Rooms outside the runtime include this; files inside include the concern they use. The
 * cuSPARSE baseline and executor are the vendor room's (src/vendor/baseline.h, vendor.h). */
#ifndef SDI_RUNTIME_H
#define SDI_RUNTIME_H

#include "context.h"
#include "device_memory.h"
#include "jit.h"
#include "memo.h"
#include "module.h"
#include "program.h"
#include "templates.h"
#include "timing.h"
#include "validate_device.h"

#endif /* SDI_RUNTIME_H */
