/* src/runtime/runtime.h: the GPU runtime's internal interface, one header per concern:
 * embedded templates, NVRTC JIT, the device context and CUDA error mapping, device memory,
 * the cubin memo, modules (module.h says why kernels go through the runtime's library API
 * rather than the driver), launch programs, measurement, validation of device outputs;
 * and the one executor: lowered plans (lowered.h, SpGEMM's sg_program.h), executables
 * (executable.h: build and run), the SpGEMM driver (spgemm_exec.h), cuSPARSE's executors
 * and formats (vendor_exec.h, cs_format.h) and the agent-kernel harness (harness.h).
 * Rooms outside the runtime include this; files inside include the concern they use. The
 * cuSPARSE baseline is the vendor room's (src/vendor/baseline.h). */
#ifndef SDI_RUNTIME_H
#define SDI_RUNTIME_H

#include "context.h"
#include "cs_format.h"
#include "device_memory.h"
#include "executable.h"
#include "harness.h"
#include "jit.h"
#include "lowered.h"
#include "memo.h"
#include "module.h"
#include "program.h"
#include "sg_program.h"
#include "spgemm_exec.h"
#include "templates.h"
#include "timing.h"
#include "validate_device.h"
#include "vendor_exec.h"

#endif /* SDI_RUNTIME_H */
