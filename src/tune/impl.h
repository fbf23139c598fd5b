/* src/tune/impl.h: one executable implementation of a task — a generated SpMV, SpMM or
 * SpGEMM program of our mechanism library, or cuSPARSE's variant — behind one interface,
 * so the tuner measures them alike and the public sd_kernel runs whichever won. */
#ifndef SDI_IMPL_H
#define SDI_IMPL_H

#include "../lower/spmm_lower.h"
#include "../lower/spmv_lower.h"
#include "../lower/spgemm_exec.h"
#include "../runtime/runtime.h"
#include "../isolate/worker.h"
#include "../vendor/vendor.h"

typedef enum {
    SDI_IMPL_NONE = 0,
    SDI_IMPL_SPMV, /* our SpMV family (sdi_spmv_config) */
    SDI_IMPL_SPMM, /* our SpMM template (sdi_spmm_config) */
    SDI_IMPL_VENDOR, /* a cuSPARSE variant by name (SpGEMM: "spgemm_alg1", ...) */
    SDI_IMPL_SPGEMM, /* our SpGEMM plan (sdi_spgemm_config) */
    SDI_IMPL_AGENT   /* an LLM-written SpMV/SpMM kernel (a shared object with the harness ABI,
                        lower/agent/agent.h) that compiled, validated and won in a worker:
                        only such a kernel is ever loaded into this process */
} sdi_impl_kind;

typedef struct {
    sdi_impl_kind kind;
    sd_op op;
    int k;
    sdi_spmv_config spmv_cfg;
    /* The tuner's statistics of the matrix, borrowed by the next build's lowering (which
     * clears it; NULL: the lowering computes them, a full pass over the matrix per call). */
    const sdi_spmv_stats *spmv_st;
    sdi_spmm_config spmm_cfg;
    char vendor_name[48];
    /* SpMV/SpMM vendor: cuSPARSE's calls run plainly, never replayed as a graph (the
     * search found the replay slower in one of the two times) */
    bool vendor_plain;
    /* SpGEMM: the product. sg_b is a general B (borrowed; NULL for A·A / A·Aᵀ); sg_aat
     * 1 for A·Aᵀ. sg_ops (device operands) may be lent by the tuner, which shares them
     * between candidates; sdi_impl_build creates them (owned) when NULL. */
    sdi_spgemm_config spgemm_cfg;
    const sd_csr *sg_b;
    int sg_aat;
    sdi_spgemm_operands *sg_ops;
    int sg_owns_ops;
    /* built state (after sdi_impl_build) */
    int built;
    sdi_spmv_plan spmv_plan;
    sdi_spmv_exec spmv_exec;
    sdi_spmm_lowered spmm_low;
    sdi_spmm_loaded spmm_ld;
    sdi_vendor *vendor;
    sdi_spgemm_exec *sg_exec;
    sdi_sg_lowered sg_low; /* the units sg_exec was compiled from (cache store) */
    int64_t sg_value_bytes; /* values of A (and of a general B) on the device */
    sdi_vendor_spgemm *sg_vendor;
    /* Agent kernel: the .so to load (agent_unlink: remove the file once it is mapped),
     * the model that wrote it (for descriptions), the loaded harness. */
    char agent_so[1024];
    char agent_model[96];
    int agent_unlink;
    sdi_harness agent_h;
    double lower_ms, load_ms, compile_ms; /* host format build, upload+load, NVRTC */
    int cubin_hit;
} sdi_impl;

/* Short family label ("spmv.merge", "spmm.pcsr", "cusparse.csr_alg2"). */
SDI_HIDDEN void sdi_impl_family(const sdi_impl *im, char *buf, size_t cap);
/* One-line description of the configuration. A buffer of SDI_IMPL_CONFIG_TEXT holds any:
 * the longest of the three operators' (cuSPARSE's and the agent's are shorter). */
#define SDI_IMPL_CONFIG_TEXT SDI_SPMV_CONFIG_TEXT
SDI_HIDDEN void sdi_impl_describe(const sdi_impl *im, char *buf, size_t cap);
/* The V_o label (docs/ARCHITECTURE.md "Template vocabulary V_o") the plan instantiates as
 * it stands: the label's representation with its plain schedule. False (buf "") for a plan that
 * combines mechanisms no label names — another representation (DIA, ELL, PCSR, SELL or
 * BSR of another size), a balanced decomposition (merge path, row bins, split rows, row
 * or column windows), index compression — the paper's "outside V_o"; also false for
 * cuSPARSE and agent kernels, which are not plans of ours. */
SDI_HIDDEN bool sdi_impl_vo_label(const sdi_impl *im, char *buf, size_t cap);
/* True when the implementation uses floating-point atomics (not bitwise reproducible). */
SDI_HIDDEN bool sdi_impl_uses_atomics(const sdi_impl *im);
/* Lowers (host formats), compiles (memoised in ctx), loads and uploads for a, which must
 * outlive the implementation (CSR arrays may be borrowed). seed_cubin (may be NULL) is
 * the cubin a kernel-cache entry holds for this SpMV / SpMM plan: it seeds the memo so
 * NVRTC does not run (a SpGEMM entry seeds the memo with its units itself). On failure im is left unbuilt and nothing stays allocated. */
SDI_HIDDEN sd_status sdi_impl_build(sd_context *ctx, const sd_csr *a, sdi_impl *im,
                                    const void *seed_cubin, size_t seed_size);
/* Compiles the kernels of the SpMV/SpMM candidates of list (others are skipped) into ctx's
 * memo, up to `threads` at a time: NVRTC is most of a search's compile time when the
 * candidates compile one after the other. Each is lowered on the host into a private copy
 * (freed again: the candidates are untouched), so their later sdi_impl_build finds its
 * cubin in the memo. A candidate that fails is skipped (its build reports the cause).
 * SD_ERR_CUDA only when the context broke. *wall_ms (may be NULL): the batch's wall time.
 * The switch: SPARSEDITTO_PARALLEL_JIT=1. Off by default:
 * on the H200's quick set searches with it compile no faster (45.5 s vs 42.9 s for 42
 * tasks, median 0.81 vs 0.61 s: `sparseditto bench --set quick --ops spmv,spmm8,spmm256`
 * with SPARSEDITTO_PARALLEL_JIT=1 and without): the memo already
 * shares most kernels across tasks, and the private lowerings repeat format building. */
SDI_HIDDEN sd_status sdi_impl_precompile(sd_context *ctx, const sd_csr *a, const sdi_impl *const *list, int n,
                                         int threads, double *wall_ms);
/* y = A·x or C = A·B on stream: asynchronous, allocates nothing. */
SDI_HIDDEN sd_status sdi_impl_run(sd_context *ctx, sdi_impl *im, const float *in, float *out,
                                  cudaStream_t stream);
/* SpGEMM: one product on stream into fresh stream-ordered memory (the counted hooks;
 * free with sdi_spgemm_output_free or sd_device_csr_free); waits once for nnz(C). */
SDI_HIDDEN sd_status sdi_impl_run_spgemm(sd_context *ctx, sdi_impl *im, cudaStream_t stream,
                                         sd_device_csr *c);
/* True when a SpGEMM implementation is a product this kind can run (kind is SpGEMM or
 * a cuSPARSE SpGEMM variant). */
SDI_HIDDEN bool sdi_impl_is_spgemm(const sdi_impl *im);
/* Device bytes a built implementation holds between calls plus its largest output so
 * far (SpGEMM; 0 when unknown). */
SDI_HIDDEN int64_t sdi_impl_peak_bytes(const sdi_impl *im);
/* a's values changed (same pattern): refresh the device values (SpGEMM: also those of
 * a general B, read from im->sg_b). */
SDI_HIDDEN sd_status sdi_impl_update_values(sd_context *ctx, sdi_impl *im, const sd_csr *a);
/* The JIT request of a built SpMV / SpMM implementation (SD_ERR_UNSUPPORTED for vendor,
 * agent and SpGEMM, whose launch units are im->sg_low's: sdi_spgemm_unit_request). */
SDI_HIDDEN sd_status sdi_impl_jit_request(const sdi_impl *im, sd_context *ctx,
                                          sdi_macro *macros, sdi_jit_request *req);
/* Device bytes of the representation: value, metadata, workspace. */
SDI_HIDDEN void sdi_impl_bytes(const sdi_impl *im, int64_t *value, int64_t *meta, int64_t *work);
/* Frees the built state (the configuration stays). */
SDI_HIDDEN void sdi_impl_release(sdi_impl *im);

#endif /* SDI_IMPL_H */
