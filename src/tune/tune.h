/* src/tune/tune.h: the search: analysis → ranking → synthesis of branches → compile,
 * validate and measure each candidate → diagnosis-driven refinement, with cuSPARSE's
 * best variant as a candidate of its own. */
#ifndef SDI_TUNE_H
#define SDI_TUNE_H

#include "../model/rank.h"
#include "../vendor/baseline.h"
#include "candidate.h"

#define SDI_TUNE_MAX_TRIALS 128
#define SDI_TUNE_DEFAULT_BUDGET 25 /* the paper's 3 branches × 5 iterations + 2 × 5 */

typedef struct {
    int round; /* 1 branches, 2 iterations, 3 refinement */
    char family[32];
    char config[SDI_PLAN_TEXT];
    sd_status status; /* SD_OK: validated and timed */
    char detail[200]; /* failure cause */
    sdi_timing t;
    double roofline_frac;
    double compile_ms;
    /* Offline (sdi_tune_offline with compile): cubins this trial compiled with NVRTC and
     * cubins it read from the JIT cache (0 and 0: none new, or nothing compiled). */
    int cubins_compiled, cubins_cached;
    int64_t peak_bytes; /* SpGEMM: device bytes held + the largest output (0 = unknown) */
    /* How t was measured (sdi_measure_screened): SCREENED, one execution > SDI_TUNE_SCREEN
     * (from 1 ms: SDI_TUNE_SCREEN_LONG) × the best so far; BRIEF, SDI_BRIEF_RUNS executions
     * (two from SDI_TUNE_BRIEF_LONG_US) from SDI_TUNE_BRIEF_US (the winner is measured
     * again in full, its trial then FULL). */
    sdi_measured measured;
    /* An edit of another trial (the winner's edits, the search's `winner_edits` step): that trial's
     * index in trials plus one, and which edit. Stored plus one so that 0 means none: the
     * five places that make trials all memset them, and a forgotten −1 would name trial 0
     * as a source without anything noticing. The record writes the index itself. */
    int edit_src;
    char edit[16]; /* its mark in the configuration: "wb=off", "load=100", "gh=10",
                      "cta>512"; "wb=on" takes " wb=off" out */
    /* A finalist timed again side by side with the others (SpGEMM, search_measure.c): t is
     * then its last round's timing; the search's own mean and each round's stay here. */
    int retimed;
    double search_mean_us;
    double round_mean_us[2];
} sdi_trial;

/* A candidate whose first timed execution is this many times slower than the search's best
 * so far is screened out after that execution (sdi_measure_screened). */
#define SDI_TUNE_SCREEN 8.0
/* Executions of a millisecond or more: 1.5× (one execution that long is timed within a
 * few per cent, and each of the 25 executions of a full measurement costs as much: on the
 * quick set's R-MAT SpGEMM, 23 ms, timing every candidate in full is most of a 36 s
 * measurement stage: `sparseditto compile --gen rmat:scale=16,ef=16 --op spgemm`). */
#define SDI_TUNE_SCREEN_LONG 1.5
#define SDI_TUNE_SCREEN_LONG_US 1000.0
static inline double sdi_tune_screen_factor(double best_us)
{
    return best_us >= SDI_TUNE_SCREEN_LONG_US ? SDI_TUNE_SCREEN_LONG : SDI_TUNE_SCREEN;
}
/* Candidates whose timed warm-up takes 5 ms or more are ranked by SDI_BRIEF_RUNS timed
 * executions instead of 25 (sdi_measure_screened's brief protocol), and so are a search's
 * cuSPARSE variants (sdi_baseline_options.brief_us); the winner and cuSPARSE's fastest are
 * measured again with the full protocol (docs/ARCHITECTURE.md "Measurement") before
 * anything is compared, reported or cached. On a 290 ms product (the af_shell10 twin's
 * SpGEMM) the full protocol costs 7 s a candidate, most of a 181 s compile when every
 * candidate gets it; the delaunay_n24 twin's SpMM at K = 256 (18-50 ms an execution) then
 * spends 35 s timing 13 candidates and 28 s timing cuSPARSE's variants, most of an 88 s
 * compile (H200; `sparseditto compile --gen twin:name=DIMACS10_delaunay_n24 --op spmm
 * -K 256` prints the stages). */
#define SDI_TUNE_BRIEF_US 5000.0
/* ... and from 100 ms by two (sdi_screen.brief_long_us). */
#define SDI_TUNE_BRIEF_LONG_US 100000.0

/* Whether cuSPARSE's best variant runs instead of our winner: when it is faster per
 * execution or pipelined. Both times are reported and no task may be slower than cuSPARSE
 * in either (docs/ARCHITECTURE.md "The cuSPARSE baseline and the fallback"); deciding on
 * the per-execution mean alone leaves 17 paper-60 and 31 real tasks below 1.0x pipelined
 * (ours a little faster per execution, a little slower back to back: H200, `sparseditto
 * bench --set paper60,real`). Our plan runs only when it is at least as fast in both.
 * A time of 0 (not measured) decides nothing. */
static inline bool sdi_tune_vendor_wins(const sdi_timing *ours, const sdi_timing *vendor)
{
    if (vendor->mean_us > 0 && vendor->mean_us < ours->mean_us)
        return true;
    return vendor->pipelined_us > 0 && ours->pipelined_us > 0 &&
           vendor->pipelined_us < ours->pipelined_us;
}

/* Whether cuSPARSE's fallback runs replayed as a graph (graph = the replay's timing, mean
 * 0 when not measured; plain = its own calls'): only when the replay is no slower in
 * either time. Plain calls are the baseline itself, so a fallback chosen this way, and
 * any plan of ours that beats it (sdi_tune_vendor_wins), is below 1.0x in neither. */
static inline bool sdi_tune_vendor_replays(const sdi_timing *graph, const sdi_timing *plain)
{
    return graph->mean_us > 0 && !sdi_tune_vendor_wins(graph, plain);
}

/* The finalists of a search (SpGEMM's final rounds, search_measure.c): the winner's index
 * first, then up to cap - 1 other valid trials timed in full (neither brief nor screened)
 * within `within` × the winner's time, fastest first; their count. */
SDI_HIDDEN int sdi_tune_finalists(const sdi_trial *trials, int ntrials, int winner, double within,
                                  int cap, int *out);

/* Called after each trial (progress on a TTY); may be NULL. */
typedef void (*sdi_tune_progress_fn)(void *arg, const char *stage, const sdi_trial *trial,
                                     double best_us);

typedef struct {
    int budget;        /* candidates of ours to measure (0 = SDI_TUNE_DEFAULT_BUDGET) */
    int allow_vendor;  /* cuSPARSE's best variant may win */
    int deterministic; /* only plans without floating-point atomics */
    int measure_vendor; /* run the cuSPARSE baseline even when it may not win (reports) */
    double brief_us;    /* the brief protocol's threshold (0 = SDI_TUNE_BRIEF_US, < 0 = none):
                           tests set a tiny one to brief every candidate */
    sdi_tune_progress_fn progress;
    void *progress_arg;
} sdi_tune_options;

/* The brief protocol's threshold of a search (0 = none). */
static inline double sdi_tune_brief_us(const sdi_tune_options *o)
{
    return o->brief_us > 0 ? o->brief_us : o->brief_us < 0 ? 0 : SDI_TUNE_BRIEF_US;
}

typedef struct {
    sd_op op;
    int k;
    sd_features features;
    sdi_ranking ranking;
    /* the winner, built and ready to run (its executable moves into the sd_kernel) */
    sdi_candidate best;
    sdi_timing best_t;
    double best_roofline;
    int winner_is_vendor;
    int winner_vendor_graph; /* the vendor winner is timed (and runs) replayed as a graph */
    int winner_is_agent; /* an agent kernel (agent_round.c) beat ours and cuSPARSE's best */
    /* our best candidate (whether or not it won) */
    int ours_trial; /* index into trials; -1 when none validated */
    sdi_plan ours_plan; /* its plan (the record prints it) */
    /* cuSPARSE: every variant, and the best valid one allowed by the options */
    sdi_baseline *baseline; /* owned; NULL when not measured */
    int vendor_best;        /* index into baseline->v; -1 when none */
    /* SpMV/SpMM: that variant through its executor, replaying one run captured into a
     * CUDA graph (sdi_vendor_run), validated and timed: the fallback's time and the
     * report's second baseline; mean 0 when not measured or not captured */
    sdi_timing vendor_graph_t;
    double roofline_us;
    int ntrials;
    sdi_trial trials[SDI_TUNE_MAX_TRIALS];
    int n_valid, n_invalid, n_refused, n_failed;
    char diagnosis[512];
    /* SpGEMM: the product, its size and the winner's peak device memory */
    int aat, general_b;
    double products;       /* Σ u(i) */
    int64_t nnz_c;         /* from the reference; -1 offline */
    int64_t best_peak_bytes;
    char vendor_failure[256]; /* why no cuSPARSE algorithm completed ("" when one did) */
    /* Offline: 1 when NVRTC compiled the plans' cubins (`compile` without a GPU), 0 when
     * planning stopped after lowering (`plan`); the trials' cubin counts summed. */
    int offline_compiled;
    int cubins_compiled, cubins_cached;
    double ms_analysis, ms_rank, ms_synthesis, ms_compile, ms_measure, ms_baseline, ms_total;
} sdi_tune_result;

/* Tunes op (SD_OP_SPMV, SD_OP_SPMM with k, or SD_OP_SPGEMM: A·A for square A, A·Aᵀ
 * otherwise) for a (which must outlive the result: the winner borrows its arrays). On
 * success out->best is built. */
SDI_HIDDEN sd_status sdi_tune(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                              const sdi_tune_options *opt, sdi_tune_result *out);
SDI_HIDDEN void sdi_tune_result_free(sdi_tune_result *r);
/* The SpGEMM search (the same loop, src/tune/search.c): C = A·B for a general b, else A·A (aat 0), A·Aᵀ
 * (aat 1) or by shape (aat −1). a and b must outlive the result. */
SDI_HIDDEN sd_status sdi_tune_spgemm(sd_context *ctx, const sd_csr *a, const sd_csr *b, int aat,
                                     const sdi_tune_options *opt, sdi_tune_result *out);
/* The product's second operand on the host: b itself (aat set to 0), else A (aat 0) or
 * Aᵀ built into *at (aat 1; aat −1 chooses by shape and is set). *at is the caller's. */
SDI_HIDDEN sd_status sdi_spgemm_second_operand(const sd_csr *a, const sd_csr *b, int *aat, sd_csr *at,
                                               const sd_csr **out);
/* Its offline half: as sdi_tune_offline, for the SpGEMM families. */
SDI_HIDDEN sd_status sdi_tune_spgemm_offline(const sd_csr *a, const sd_csr *b, int aat,
                                             const sdi_gpu_props *gpu, int branches, int compile,
                                             sdi_tune_result *out, sdi_json *plans);

/* Without a GPU: analysis, ranking, synthesis of the first-round branches (the default
 * θ_H of the first `branches` families, 0 = 3), lowering and NVRTC compilation for
 * gpu's architecture — everything up to measurement. Each trial records its lowering
 * (or refusal) and compile time; none is validated or timed (status SD_ERR_NO_DEVICE
 * marks "stopped before measurement"). `plans` (may be NULL) receives each lowered
 * plan's bounds as JSON objects in an array. */
SDI_HIDDEN sd_status sdi_tune_offline(const sd_csr *a, sd_op op, int k, const sdi_gpu_props *gpu,
                                      int branches, int compile, sdi_tune_result *out,
                                      sdi_json *plans);
/* The search record: ranking, trials, baseline, winner, times by stage. */
SDI_HIDDEN void sdi_tune_result_json(const sdi_tune_result *r, sdi_json *j);

#endif /* SDI_TUNE_H */
