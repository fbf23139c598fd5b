/* src/runtime/vendor_exec.h: the cuSPARSE executors: one variant of the baseline (same
 * names as cs_format.c: SpMV csr_alg1, csr_alg2, coo_alg1, coo_alg2, sell32; SpMM
 * csr_alg1..3, coo_alg1..4, bell16, bell32) built once for a matrix and then run on the
 * caller's device pointers, asynchronously, allocating and synchronising nothing per
 * call: what a compiled sd_kernel runs when cuSPARSE's best variant wins.
 *
 * Preprocessing: where the baseline preprocesses (every SpMV variant, SpMM csr_alg1 and
 * csr_alg3), the executor preprocesses once at creation, with dense descriptors over
 * scratch buffers that are freed right after. cuSPARSE documents a preprocessed
 * ("active") buffer as valid for later calls that change only alpha, beta, the dense
 * operands and the values (not the indices) of A, which is exactly what sdi_vendor_run
 * and sdi_vendor_update_values change; tests/gpu/test_vendor.c checks it (two runs on
 * different pointers, a value update, a graph replay) with and without preprocessing.
 * sdi_vendor_options.no_preprocess turns it off. */
#ifndef SDI_VENDOR_EXEC_H
#define SDI_VENDOR_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "../core/sdi.h"
#include "context.h"

typedef struct sdi_vendor sdi_vendor;

typedef struct {
    /* true: never call cusparseSpMV_preprocess / cusparseSpMM_preprocess (diagnosis, or
     * a cuSPARSE release whose preprocess binds the dense pointers). Zero = defaults. */
    bool no_preprocess;
    /* true: never replay runs through a CUDA graph (see sdi_vendor_run). */
    bool no_graph;
} sdi_vendor_options;

/* Builds variant `variant` for A (host CSR, canonical) and op (SD_OP_SPMV, or SD_OP_SPMM
 * with 1 <= k <= 65536; k is ignored for SpMV): a cuSPARSE handle of its own, A uploaded
 * in the variant's format with 32-bit indices (CSR, COO, SELL-32, Blocked-ELL 16/32),
 * the sparse descriptor, the workspace sized and allocated once, preprocessing where the
 * variant has it, and for Blocked-ELL (whose rows and columns are padded to the block
 * size) zeroed staging operands when A's shape is not a multiple of the block.
 * Statuses: SD_ERR_INVALID_ARG (NULL, bad op or k, broken CSR), SD_ERR_UNSUPPORTED (an
 * unknown variant name; nnz beyond 32-bit indices; cuSPARSE refuses the configuration;
 * the SELL / Blocked-ELL arrays exceed the baseline's limits: 50% / 40% of the free
 * device memory, 32-bit offsets; A without entries for Blocked-ELL),
 * SD_ERR_OUT_OF_MEMORY, SD_ERR_CUDA, SD_ERR_NO_DEVICE. Every message names the variant.
 * Device memory goes through sdi_device_malloc. Synchronises ctx->stream. On failure
 * *out is NULL and nothing is left allocated. */
SDI_HIDDEN sd_status sdi_vendor_create(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                                       const char *variant, sdi_vendor **out);
/* As sdi_vendor_create, with options (NULL = defaults). */
SDI_HIDDEN sd_status sdi_vendor_create_ex(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                                          const char *variant, const sdi_vendor_options *opt,
                                          sdi_vendor **out);

/* y = A·x (SpMV: in = x, cols floats; out = y, rows floats) or C = A·B (SpMM, row-major:
 * in = B, cols × k; out = C, rows × k), alpha = 1, beta = 0, FP32 compute, enqueued on
 * `stream` (NULL = the legacy default stream). Allocates nothing and synchronises
 * nothing: safe inside CUDA graph capture. in and out must be 16-byte aligned (cuSPARSE's
 * rule; cudaMalloc gives 256): SD_ERR_INVALID_ARG otherwise. Thread-safe on the host (a
 * lock serialises the enqueueing), but the workspace and Blocked-ELL staging operands
 * belong to the executor: executions on different streams must be ordered by the caller,
 * as with any cuSPARSE external buffer.
 * Graph replay (unless SPARSEDITTO_GRAPHS=0 or no_graph): the second consecutive run on the
 * same (in, out) captures the run into a CUDA graph on a private stream and every later
 * run on those pointers replays it (one graph launch instead of cuSPARSE's launches: about
 * 2 µs less host issue per call). Pointers that move every call always run plainly and
 * never pay a capture; a stream the caller is capturing gets the calls themselves; a run
 * that cannot be captured makes the executor run plainly from then on. The graph reads A
 * in place, so sdi_vendor_update_values needs no recapture. */
SDI_HIDDEN sd_status sdi_vendor_run(sdi_vendor *v, const float *in, float *out,
                                    cudaStream_t stream);
/* How many runs replayed the executor's graph (tests, reports). */
SDI_HIDDEN long sdi_vendor_graph_runs(const sdi_vendor *v);

/* Replaces A's values (same pattern; vals_host = nnz floats in CSR order), re-laid out
 * in the variant's format (SELL / Blocked-ELL gather them into their slots; padding
 * stays zero). Copies on ctx->stream and waits for it; the caller makes sure no
 * execution reading the old values is still in flight. The preprocessed workspace stays
 * valid (cuSPARSE lets the values of A change). */
SDI_HIDDEN sd_status sdi_vendor_update_values(sdi_vendor *v, const float *vals_host);

/* The variant's name ("csr_alg1", ...); "" for NULL. */
SDI_HIDDEN const char *sdi_vendor_name(const sdi_vendor *v);
/* Whether preprocessing was done (and accepted by cuSPARSE) at creation. */
SDI_HIDDEN bool sdi_vendor_preprocessed(const sdi_vendor *v);
/* Device bytes the executor holds through sdi_device_malloc (format, workspace, staging;
 * cuSPARSE's handle holds a little more of its own). */
SDI_HIDDEN size_t sdi_vendor_device_bytes(const sdi_vendor *v);
/* Frees everything (waits for ctx->stream; the caller makes sure no execution is in
 * flight on other streams). Accepts NULL. */
SDI_HIDDEN void sdi_vendor_destroy(sdi_vendor *v);

/* The i-th variant name for op (SD_OP_SPMV or SD_OP_SPMM) in the baseline's order, from
 * i = 0; NULL past the end or for another op. */
SDI_HIDDEN const char *sdi_vendor_variant(sd_op op, int i);

/* ------------------------------------------------------------------ SpGEMM
 * A cuSPARSE SpGEMM variant of the baseline (spgemm_alg1, spgemm_alg2, spgemm_alg3_c0.2,
 * spgemm_alg3_c1.0) as an executor: C = A·B with B = A (b NULL, aat 0), B = Aᵀ (b NULL,
 * aat 1; built on the host and uploaded once; -1 = by shape) or a general b. A run does
 * what the baseline times (work estimation, memory estimation, compute, copy: symbolic +
 * numeric + compaction) into buffers kept between runs, then hands C to the caller in
 * fresh stream-ordered memory (sdi_device_malloc_async) with 64-bit row pointers. It
 * waits for nnz(C) (as cuSPARSE does). cuSPARSE documents its SpGEMM algorithms as
 * bitwise reproducible run to run. Failures: SD_ERR_OUT_OF_MEMORY for cuSPARSE's
 * resource failures, SD_ERR_CUDA / SD_ERR_UNSUPPORTED otherwise. */
typedef struct sdi_vendor_spgemm sdi_vendor_spgemm;
SDI_HIDDEN sd_status sdi_vendor_spgemm_create(sd_context *ctx, const sd_csr *a, const sd_csr *b,
                                              int aat, const char *variant,
                                              sdi_vendor_spgemm **out);
SDI_HIDDEN sd_status sdi_vendor_spgemm_run(sdi_vendor_spgemm *v, cudaStream_t stream,
                                           sd_device_csr *c);
/* New values of A (and of a general B), host, same pattern. */
SDI_HIDDEN sd_status sdi_vendor_spgemm_update_values(sdi_vendor_spgemm *v, const float *a_vals,
                                                     const float *b_vals);
SDI_HIDDEN void sdi_vendor_spgemm_destroy(sdi_vendor_spgemm *v);
SDI_HIDDEN const char *sdi_vendor_spgemm_name(const sdi_vendor_spgemm *v);
/* Device bytes held: operands, buffers, C's staging. */
SDI_HIDDEN int64_t sdi_vendor_spgemm_bytes(const sdi_vendor_spgemm *v);
/* The i-th SpGEMM variant name from 0; NULL past the end. */
SDI_HIDDEN const char *sdi_vendor_spgemm_variant(int i);

#endif /* SDI_VENDOR_EXEC_H */
