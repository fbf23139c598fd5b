/* src/tune/candidate.h: one candidate of a search — a plan of ours, a cuSPARSE variant or
 * an agent-written kernel — and its executable once built. The search measures candidates
 * alike; the winner's executable moves into the sd_kernel, which runs it through the
 * runtime alone. */
#ifndef SDI_TUNE_CANDIDATE_H
#define SDI_TUNE_CANDIDATE_H

#include <stdbool.h>

#include "../plan/family.h"
#include "../runtime/executable.h"

typedef enum {
    SDI_CAND_NONE = 0,
    SDI_CAND_PLAN,   /* a plan of one of our families (plan) */
    SDI_CAND_VENDOR, /* a cuSPARSE variant by name (SpGEMM: "spgemm_alg1", …) */
    SDI_CAND_AGENT   /* an agent-written SpMV / SpMM kernel that validated and won in a
                        worker (only such a kernel is ever loaded into this process) */
} sdi_cand_kind;

typedef struct {
    int32_t kind; /* sdi_cand_kind */
    int32_t op;   /* sd_op */
    int32_t k;
    sdi_plan plan;
    char vendor_name[48];
    bool vendor_plain; /* SpMV / SpMM vendor: its calls run plainly, never as a graph */
    /* AGENT: the shared object (removed once mapped when agent_unlink) and its model */
    char agent_so[1024];
    char agent_model[96];
    int agent_unlink;
    /* SpGEMM: the product. sg_b: a general B (borrowed; NULL for A·A / A·Aᵀ); sg_aat 1
     * for A·Aᵀ; sg_ops: device operands lent by the search (shared by its candidates),
     * created (owned by the executable) when NULL. */
    const sd_csr *sg_b;
    int sg_aat;
    sdi_spgemm_operands *sg_ops;
    /* built state */
    int built;
    sdi_executable exe;
    double lower_ms, load_ms, compile_ms; /* host lowering, load + upload, NVRTC */
    int cubin_hit;
} sdi_candidate;

/* Labels: "<op>.<family>" / "cusparse.<variant>" / "agent.<op>", and the one-line
 * configuration; buffers of SDI_PLAN_TEXT hold any. */
SDI_HIDDEN void sdi_candidate_family(const sdi_candidate *c, char *buf, size_t cap);
SDI_HIDDEN void sdi_candidate_describe(const sdi_candidate *c, char *buf, size_t cap);
/* The V_o label the candidate instantiates (plans only; docs/ARCHITECTURE.md "Template
 * vocabulary V_o"); false and "" otherwise. */
SDI_HIDDEN bool sdi_candidate_vo_label(const sdi_candidate *c, char *buf, size_t cap);
/* Floating-point atomics (not bitwise reproducible): a plan's family says; cuSPARSE
 * variants by name; agent kernels always. */
SDI_HIDDEN bool sdi_candidate_uses_atomics(const sdi_candidate *c);
/* Whether two candidates are the same (kind, plan bytes or name). */
SDI_HIDDEN bool sdi_candidate_same(const sdi_candidate *a, const sdi_candidate *b);

/* Lowers (plans, through the family with the task's statistics — never recomputed),
 * compiles (memoised in ctx), loads and uploads; the task's matrix must outlive the
 * candidate. seed_cubin (may be NULL): the cubin a kernel-cache entry holds for a SpMV /
 * SpMM plan, put in the memo first so NVRTC does not run. On failure c is left unbuilt
 * and nothing stays allocated. */
SDI_HIDDEN sd_status sdi_candidate_build(sd_context *ctx, const sdi_task *t, sdi_candidate *c,
                                         const void *seed_cubin, size_t seed_size);
/* Frees the built state (the description stays). */
SDI_HIDDEN void sdi_candidate_release(sdi_candidate *c);

/* Compiles the kernels of n SpMV / SpMM plans (others are skipped) into ctx's memo, up to
 * `threads` at a time, each through its family's compile requests (`source`, else a
 * private lowering, freed again), so that their later sdi_candidate_build finds its cubin
 * in the memo. A plan that fails is skipped (its build reports the cause). SD_ERR_CUDA
 * only when the context broke. *wall_ms (may be NULL): the batch's wall time. The
 * search's switch: SPARSEDITTO_PARALLEL_JIT=1 (off by default: on the H200's quick set
 * searches with it compile no faster, 45.5 s vs 42.9 s for 42 tasks, median 0.81 vs
 * 0.61 s: `sparseditto bench --set quick --ops spmv,spmm8,spmm256` with
 * SPARSEDITTO_PARALLEL_JIT=1 and without: the memo already shares most kernels across
 * tasks, and the private lowerings repeat format building). */
SDI_HIDDEN sd_status sdi_candidate_precompile(sd_context *ctx, const sdi_task *t,
                                              const sdi_plan *plans, int n, int threads,
                                              double *wall_ms);

#endif /* SDI_TUNE_CANDIDATE_H */
