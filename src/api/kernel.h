/* src/api/kernel.h: the kernel object behind the public sd_kernel handle — the compiled
 * executable that won (runtime/executable.h), the JSON of its plan and of the search that
 * found it, and owned copies of the operands it borrows from. compile.c makes one (cache →
 * search → store); execute.c runs it, through the runtime alone.
 *
 * Concurrency: a kernel's launch program binds the caller's pointers at each call, so
 * calls on one kernel are serialised by the kernel's mutex (calls on distinct kernels
 * run concurrently). On the device, calls on one kernel run in call order whatever their
 * streams: they share workspaces, counters and value arrays (see `done`). */
#ifndef SDI_API_KERNEL_H
#define SDI_API_KERNEL_H

#include <pthread.h>
#include <stdbool.h>

#include "core/core.h"
#include "runtime/executable.h"

#define SDI_KERNEL_MAGIC 0x53444b524e4cull /* "SDKRNL" */

struct sd_kernel {
    uint64_t magic;
    sd_context *ctx;
    sd_op op;
    int k;
    sd_csr a; /* owned copy: the executable borrows its arrays */
    sd_csr b; /* SpGEMM A·B: owned copy of a general B (zeroed otherwise) */
    int has_b;
    sdi_executable exe;
    pthread_mutex_t lock;
    char *plan_json;   /* the winner's plan (family, configuration, lowering, bounds, the
                          record the cache rebuilds it from) */
    char *record_json; /* the search record (from the search or the cache) */
    int from_cache;
    double ready_ms; /* wall time of sd_compile */
    /* Call order on the device. `done` is recorded on the caller's stream after each
     * call's work (done_stream_id: that stream's cudaStreamGetId; done_live); a call on
     * another stream waits for it there, and update_values and destroy wait for it on the
     * host. Without it a call on a second
     * stream could overlap the first one's work (plain launches share the workspaces and
     * the split kernels' counters; cuSPARSE's plain calls their buffer; SpGEMM's numeric
     * stage still runs when sd_spgemm returns), and an update's copy, made on the
     * context's stream, could overtake a call still queued on the caller's. */
    cudaEvent_t done;
    unsigned long long done_stream_id;
    bool done_live;
};

/* Waits for the kernel's last call, frees everything it holds and the kernel itself
 * (execute.c; compile.c on a failed compile). Accepts NULL. */
SDI_HIDDEN void sdi_kernel_free(sd_kernel *kern);

#endif /* SDI_API_KERNEL_H */
