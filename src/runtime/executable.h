/* src/runtime/executable.h: a compiled kernel, ready to run — what sd_kernel holds and what
 * the search measures. Made from a lowered plan (a launch program with its device formats,
 * or SpGEMM's schedule and units over its device operands), from a cuSPARSE variant, or
 * from an agent-written kernel that won in a worker. Running one needs the runtime, the
 * core and the formats alone (tests/cpu/cli_exec_link.sh links the execution path so). */
#ifndef SDI_RUNTIME_EXECUTABLE_H
#define SDI_RUNTIME_EXECUTABLE_H

#include <stdbool.h>

#include <cuda_runtime_api.h>

#include "context.h"
#include "harness.h"
#include "lowered.h"
#include "module.h"
#include "program.h"
#include "spgemm_exec.h"
#include "timing.h"
#include "validate_device.h"
#include "vendor_exec.h"

typedef enum {
    SDI_EXE_NONE = 0,
    SDI_EXE_PROGRAM,       /* our SpMV / SpMM program: module + launch program + formats */
    SDI_EXE_SPGEMM,        /* our SpGEMM program: operands + schedule + units */
    SDI_EXE_VENDOR,        /* cuSPARSE's SpMV / SpMM variant through its executor */
    SDI_EXE_VENDOR_SPGEMM, /* cuSPARSE's SpGEMM algorithm */
    SDI_EXE_AGENT          /* an agent-written SpMV / SpMM kernel (a shared object with the
                              harness ABI that validated and won in a worker) */
} sdi_exe_kind;

typedef struct sdi_executable {
    int32_t kind; /* sdi_exe_kind */
    int32_t op;   /* sd_op */
    int32_t k;
    int32_t rows, cols;
    /* PROGRAM: the lowering is kept (its host value arrays are refreshed and uploaded by
     * sdi_exe_update_values; the kernel cache reads its compile request) */
    sdi_lowered low;
    sdi_module mod;
    sdi_program prog;
    int in_buf, out_buf;
    size_t in_bytes, out_bytes;
    /* SPGEMM */
    sdi_spgemm_operands *sg_ops;
    int sg_owns_ops;
    sdi_spgemm_exec *sg;
    /* VENDOR / VENDOR_SPGEMM */
    sdi_vendor *vendor;
    sdi_vendor_spgemm *vendor_sg;
    /* AGENT */
    sdi_harness agent;
    /* costs of the build */
    double load_ms, compile_ms; /* module load + uploads; NVRTC (0 on a memo hit) */
    int cubin_hit;
    int num_regs[SDI_LOW_MAX_KERNELS];
    size_t local_bytes[SDI_LOW_MAX_KERNELS];
} sdi_executable;

/* The architecture a program's compile request names: SpMV's name the context's own, SpMM's
 * leave it to the JIT (the same kernels; the memo and the JIT cache key on the request as
 * it is, so every request of a program must name the same). */
SDI_HIDDEN const char *sdi_exe_arch(const sd_context *ctx, int op);

/* ------------------------------------------------------------------ building
 * (src/runtime/exe_build.c: compiles through the memo and the JIT cache) On failure *out
 * is zeroed and nothing stays allocated; inputs moved in are then freed. */
/* A SpMV / SpMM program from *low (moved in: *low is zeroed). use_graph: replay the
 * launches as a CUDA graph (sdi_program). */
SDI_HIDDEN sd_status sdi_exe_create_program(sd_context *ctx, sdi_lowered *low, bool use_graph,
                                            sdi_executable *out);
/* A SpGEMM program from *low (its schedule and units, moved in) over ops (owned by the
 * executable when owns_ops). */
SDI_HIDDEN sd_status sdi_exe_create_spgemm(sd_context *ctx, sdi_spgemm_operands *ops, bool owns_ops,
                                           sdi_lowered *low, sdi_executable *out);
/* cuSPARSE's variant `name` for op (k for SpMM); plain: its calls are never replayed as
 * a graph. */
SDI_HIDDEN sd_status sdi_exe_create_vendor(sd_context *ctx, const sd_csr *a, int op, int k,
                                           const char *name, bool plain, sdi_executable *out);
/* cuSPARSE's SpGEMM algorithm `name` for A·B (b NULL: A·A for aat 0, A·Aᵀ for aat 1). */
SDI_HIDDEN sd_status sdi_exe_create_vendor_spgemm(sd_context *ctx, const sd_csr *a, const sd_csr *b,
                                                  int aat, const char *name, sdi_executable *out);
/* The agent kernel in shared object so_path (removed once mapped when unlink_after). */
SDI_HIDDEN sd_status sdi_exe_create_agent(sd_context *ctx, const char *so_path, bool unlink_after,
                                          const sd_csr *a, int op, int k, sdi_executable *out);

/* ------------------------------------------------------------------ running
 * (src/runtime/executable.c: allocates nothing, compiles nothing) */
/* y = A·x or C = A·B on stream (device pointers; asynchronous). */
SDI_HIDDEN sd_status sdi_exe_run(sd_context *ctx, sdi_executable *e, const float *in, float *out,
                                 cudaStream_t stream);
/* C = A·B into fresh stream-ordered memory (free with sdi_spgemm_output_free or
 * sd_device_csr_free); waits once for nnz(C). */
SDI_HIDDEN sd_status sdi_exe_run_spgemm(sd_context *ctx, sdi_executable *e, cudaStream_t stream,
                                        sd_device_csr *c);
/* The values of a (and of a general B) changed, same pattern: the device copies follow. */
SDI_HIDDEN sd_status sdi_exe_update_values(sd_context *ctx, sdi_executable *e, const sd_csr *a,
                                           const sd_csr *b);
/* Device bytes of the representation (value, metadata, workspace) and, for SpGEMM, the
 * bytes held plus the largest output so far (0 when unknown). */
SDI_HIDDEN void sdi_exe_bytes(const sdi_executable *e, int64_t *value, int64_t *meta, int64_t *work);
SDI_HIDDEN int64_t sdi_exe_peak_bytes(const sdi_executable *e);
/* The measurement protocol (sdi_measure) on a SpMV / SpMM executable: y = A·x or C = A·B
 * timed on device pointers, the first warm-up's output checked against ref (NULL:
 * unchecked; val receives the details) before anything is timed (src/runtime/exe_measure.c:
 * the checker compiles its kernel, which the run path must not pull in). */
SDI_HIDDEN sd_status sdi_exe_measure(sd_context *ctx, sdi_executable *e, const float *in, float *out,
                                     const sdi_reference *ref, sdi_validation *val, const char *name,
                                     sdi_timing *t);
/* Compiles the kernels of list[0..n) (SpMV / SpMM lowerings) into ctx's memo in parallel,
 * so that the executables made from them next find them there; *nfailed counts the
 * lowerings that did not compile (their build reports the log), *wall_s the batch's time. */
SDI_HIDDEN sd_status sdi_lowered_precompile(sd_context *ctx, const sdi_lowered *const *list, int n,
                                            int *nfailed, double *wall_s);
/* Frees everything the executable holds; accepts a zeroed one. */
SDI_HIDDEN void sdi_exe_free(sdi_executable *e);

#endif /* SDI_RUNTIME_EXECUTABLE_H */
