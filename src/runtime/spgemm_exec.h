/* src/runtime/spgemm_exec.h: the device-side driver of SpGEMM programs. Operands (A and
 * B on the device, Bᵀ built there for A·Aᵀ, the upper-bound analysis u(i) and column
 * spans) are prepared once and shared by candidates; an executor holds one schedule
 * (runtime/sg_program.h), its compiled units and workspaces (allocated once) and runs
 * symbolic + scan + numeric + compaction per call. Files: spgemm_operands.c (operands,
 * compile requests), spgemm_exec.c (executor creation), spgemm_run.c (a call, graphs,
 * releasing: no JIT), spgemm_measure.c (validation and measurement). */
#ifndef SDI_SPGEMM_EXEC_H
#define SDI_SPGEMM_EXEC_H

#include <cuda_runtime_api.h>

#include "context.h"
#include "jit.h"
#include "sg_program.h"
#include "timing.h"
#include "validate_device.h"

typedef struct sdi_spgemm_operands sdi_spgemm_operands;
typedef struct sdi_spgemm_exec sdi_spgemm_exec;

/* C = A·B. b == NULL: C = A·A when aat = 0 (A square), C = A·Aᵀ when aat = 1 (Aᵀ is
 * built on the device), by shape when aat = −1 (square → A·A). The host matrices are
 * copied; the caller keeps them. Structures must satisfy sd_csr_check (not repeated). */
SDI_HIDDEN sd_status sdi_spgemm_operands_create(sd_context *ctx, const sd_csr *a, const sd_csr *b,
                                                int aat, sdi_spgemm_operands **out);
SDI_HIDDEN void sdi_spgemm_operands_destroy(sdi_spgemm_operands *op);
/* u(i), lo(i), hi(i) of C's rows, read back from the device analysis (host arrays owned
 * by op). */
SDI_HIDDEN const sdi_sg_rowinfo *sdi_spgemm_operands_rowinfo(const sdi_spgemm_operands *op);
/* 1 when B = Aᵀ (built here), 0 otherwise. */
SDI_HIDDEN int sdi_spgemm_operands_aat(const sdi_spgemm_operands *op);
/* New values (nnz floats each, host); b_vals only for a separate B (NULL otherwise). */
SDI_HIDDEN sd_status sdi_spgemm_operands_set_values(sdi_spgemm_operands *op, const float *a_vals,
                                                    const float *b_vals);
/* Device bytes the operands hold, and the host time their preparation took. */
SDI_HIDDEN int64_t sdi_spgemm_operands_bytes(const sdi_spgemm_operands *op);
/* Of those, the values: of A and of a separate B (Aᵀ's gathered copy counts as workspace). */
SDI_HIDDEN int64_t sdi_spgemm_operands_value_bytes(const sdi_spgemm_operands *op);
SDI_HIDDEN double sdi_spgemm_operands_setup_ms(const sdi_spgemm_operands *op);

typedef struct {
    double schedule_ms;   /* host binning */
    double compile_ms;    /* NVRTC of the units (and scan) this creation compiled: 0 when
                             every one was in the memo or the JIT cache */
    double setup_ms;      /* schedule + compile + load + workspace allocation */
    int64_t plan_bytes;   /* device bytes held between calls: operands + workspaces */
    int64_t call_bytes;   /* the largest output a call allocated (row pointers + entries) */
    int64_t peak_bytes;   /* plan_bytes + call_bytes */
    int64_t nnz_c;        /* of the last call */
    int launches_per_call; /* kernel launches of one call (scan included) */
    int side_streams;     /* streams beside the caller's that a stage's launches use */
    int64_t graph_launches; /* CUDA graphs launched by the calls so far (0: plain launches) */
    int nnz_mapped;         /* 1: the scan writes nnz(C) into mapped host memory (no copy) */
    int max_regs;         /* registers of the heaviest launch */
    int64_t spill_bytes;  /* local memory of the launches (0 for clean kernels) */
    char bins[640];       /* sdi_sg_schedule_describe */
    char config[320];     /* the schedule's config_text */
} sdi_spgemm_exec_info;

/* How a call allocates C. ASYNC: cudaMallocAsync on the call's stream from the device's
 * default pool (its release threshold is raised so that memory stays in the pool),
 * through the counted stream-ordered hooks; free with sdi_spgemm_output_free (stream
 * ordered) or sd_device_csr_free (cudaFree, waits for the device). HOOKS: the runtime's
 * device hooks (cudaMalloc, fault injection, counted); free with sd_device_csr_free. */
typedef enum { SDI_SG_ALLOC_ASYNC = 0, SDI_SG_ALLOC_HOOKS = 1 } sdi_sg_alloc;

/* Compiles (through the memo and the JIT cache) and loads the units of a schedule for op
 * (borrowed: it must outlive the executor) and allocates the workspaces. *sched moves into
 * the executor and is emptied, also when a later step fails; a schedule refused before the
 * move (none, no units, another product's) stays the caller's. units (its lowering: one per
 * distinct launch shape, src/lower/spgemm_units.c) are only read. On failure *out is NULL. */
SDI_HIDDEN sd_status sdi_spgemm_exec_adopt(sd_context *ctx, sdi_spgemm_operands *op,
                                           sdi_sg_schedule *sched, const sdi_sg_lowered *units,
                                           sdi_spgemm_exec **out);
SDI_HIDDEN void sdi_spgemm_exec_destroy(sdi_spgemm_exec *e);
/* One product on `stream`: allocates C (row pointers int64, columns sorted per row),
 * enqueues the kernels (as the executor's CUDA graphs unless SPARSEDITTO_SG_GRAPH=0 or the
 * stream is being captured) and waits once for nnz(C) (the host needs it for *c). On return
 * the last kernels may still run on `stream`. On failure *c is zeroed and nothing stays
 * allocated. */
SDI_HIDDEN sd_status sdi_spgemm_exec_run(sdi_spgemm_exec *e, cudaStream_t stream, sdi_sg_alloc alloc,
                                         sd_device_csr *c);
SDI_HIDDEN void sdi_spgemm_output_free(sd_device_csr *c, cudaStream_t stream);

/* JIT requests, for seeding the context's memo from a kernel-cache entry and for reading
 * back the cubins to store: the operand preparation module (spgemm_prep.cuh), the scan
 * (spgemm_scan.cuh, one module for every schedule) and unit u of a lowered schedule (one
 * launch shape's kernel; low must outlive req). */
SDI_HIDDEN void sdi_spgemm_prep_request(sdi_jit_request *req);
SDI_HIDDEN void sdi_spgemm_scan_request(sdi_jit_request *req);
SDI_HIDDEN void sdi_spgemm_unit_request(const sdi_sg_lowered *low, int u, sdi_jit_request *req);
SDI_HIDDEN const sdi_spgemm_exec_info *sdi_spgemm_exec_get_info(const sdi_spgemm_exec *e);
SDI_HIDDEN const sdi_sg_schedule *sdi_spgemm_exec_schedule(const sdi_spgemm_exec *e);

/* The SpGEMM validation rule (docs/ARCHITECTURE.md "Validation") for a C on the device
 * (64-bit row pointers), plus this
 * library's promise that columns strictly increase in every row. */
SDI_HIDDEN sd_status sdi_spgemm_check(sd_context *ctx, const sdi_reference *ref,
                                      const sd_device_csr *c, sdi_validation *val);
/* One product into *c on stream (allocated stream-ordered; the measurement frees it). */
typedef sd_status (*sdi_spgemm_produce_fn)(void *arg, cudaStream_t stream, sd_device_csr *c);
/* The measurement protocol (docs/ARCHITECTURE.md "Measurement") for a SpGEMM producer:
 * every execution frees the previous C
 * (stream-ordered) and produces a new one, so the time covers symbolic + numeric +
 * compaction and C's allocation; the first warm-up's C is checked with
 * sdi_spgemm_check against ref (NULL: unchecked) before anything is timed. *nnz_c (may
 * be NULL) receives nnz(C) of the last run. Nothing stays allocated. sc, how: a search's
 * shortcuts and which protocol ran (sdi_measure_screened; both may be NULL). */
SDI_HIDDEN sd_status sdi_spgemm_measure(sd_context *ctx, const char *name,
                                        sdi_spgemm_produce_fn fn, void *arg,
                                        const sdi_reference *ref, sdi_timing *t,
                                        sdi_validation *val, int64_t *nnz_c,
                                        const sdi_screen *sc, sdi_measured *how);

#endif /* SDI_SPGEMM_EXEC_H */
