/* src/tune/search.h: the search loop's state and its operator hooks (inside src/tune).
 * One loop serves every operator (search.c: analysis → ranking → first round → sweeps →
 * diagnosis edits → refinement → winner edits → finalists → vendor round → winner); what
 * an operator does differently is a hook or a switch of sdi_search_op (op_dense.c for
 * SpMV and SpMM, op_spgemm.c for SpGEMM). Families are reached through the table alone. */
#ifndef SDI_TUNE_SEARCH_H
#define SDI_TUNE_SEARCH_H

#include "../analysis/analysis.h"
#include "../runtime/runtime.h"
#include "tune.h"

#define SDI_SEARCH_MAX_FAMILIES 32 /* entries of the family table */
#define SDI_SEARCH_SWEEP_CAP 64    /* plans of one family at one sweep level */
#define SDI_SEARCH_MAX_EDITS 4     /* edits of a winner */

typedef struct sdi_search sdi_search;

typedef struct {
    /* ---- switches of the loop's steps */
    bool all_branches;      /* first round: every ranked family's default, not B branches */
    bool interleave;        /* ranking: labels interleaved (else label after label, then
                               every family of the operator) */
    bool diagnose_families; /* the diagnosis after the first round adds families */
    bool coverage;          /* families never tried get their default while budget remains */
    bool refine_batch;      /* compile batches ahead: round 1's batch holds the iterations'
                               picks, the refinement's the winner's edits and full build
                               (speculative); refinement in one batch, where a lone family
                               takes all that is left */
    bool transfer_threads;  /* large products: the fastest family's CTA size on the others */
    bool winner_edits;      /* the winner's edits (family `edits`), slots kept from the
                               refinement and compiled ahead with it (speculative) */
    bool full_build;        /* candidates compiled fast; the winner rebuilt in full */
    bool finalists;         /* close finalists timed again side by side */
    bool launch_note;       /* "launch-bound" note after the edits (no family added) */
    bool dense;             /* dense output: roofline, plain / replayed vendor, agent round */
    const char *what;        /* "candidate" in "no … validated" */
    const char *vendor_none; /* appended to it when cuSPARSE may win */
    bool fail_diagnosis;     /* the diagnosis appended to it */

    /* ---- hooks */
    /* Before the analysis: the operands' consistency (SpGEMM: B, the output's size). */
    sd_status (*prepare)(sdi_search *s);
    /* The statistics the families read, in the analysis's time. */
    sd_status (*stats)(sdi_search *s);
    /* Operands on the device, the CPU reference, calibration (the measurement's time). */
    sd_status (*operands)(sdi_search *s);
    /* A plan the loop generated (default or sweep), before it is tried: the search's own
     * settings (SpGEMM: the NVRTC fast level). NULL = none. */
    void (*adjust)(const sdi_search *s, sdi_plan *p);
    /* Compiles n plans (and what their builds need) into the memo ahead of their tries. */
    void (*precompile)(sdi_search *s, const sdi_plan *v, int n);
    /* Validates and times a built candidate: the full protocol when sc is NULL. */
    sd_status (*measure)(sdi_search *s, sdi_candidate *c, const char *name, const sdi_screen *sc,
                         sdi_timing *t, sdi_measured *how, sdi_validation *val);
    /* Deterministic mode when it replaces the rounds (SpGEMM). NULL = the rounds run with
     * the atomic candidates skipped. */
    sd_status (*deterministic)(sdi_search *s);
    /* The best so far rebuilt at full optimisation (full_build). */
    bool (*full_plan)(const sdi_search *s, sdi_plan *out);
    /* transfer_threads: plans carrying the fastest family's CTA size to the others. */
    int (*transfer)(const sdi_search *s, int w, const int *fams, int nf, sdi_plan *out, int cap);
    /* cuSPARSE's variants measured (r->baseline, r->vendor_best, their diagnosis). */
    sd_status (*vendor_round)(sdi_search *s);
    /* The product's end: the winner keeps what the search lent it. NULL = nothing. */
    void (*finish)(sdi_search *s);
    void (*cleanup)(sdi_search *s);
} sdi_search_op;

extern const sdi_search_op sdi_search_op_dense;
extern const sdi_search_op sdi_search_op_spgemm;

struct sdi_search {
    sd_context *ctx;
    const sd_csr *a;
    const sd_csr *b;  /* SpGEMM: a general B, or NULL */
    const sd_csr *bb; /* SpGEMM: the second operand on the host (b, A or Aᵀ) */
    int aat;
    sd_op op;
    int k;
    const sdi_tune_options *opt;
    sdi_tune_result *r;
    const sdi_search_op *ops_of; /* the operator's hooks */
    /* the task every family hook reads (statistics computed once, below) */
    sdi_task task;
    sdi_spmv_stats spmv_st;
    sdi_spmm_stats spmm_st;
    sdi_sg_summary sm;
    sdi_sg_limits lim;
    int budget, used;
    double best_ours_us;
    int big; /* a product large enough that each candidate costs seconds */
    /* plans tried (to skip duplicates): tried[i] is trials[i]'s while the rounds run */
    int ntried;
    sdi_plan tried[SDI_TUNE_MAX_TRIALS];
    /* per family (by table index): best mean time (0 = none valid), its plan, and the
     * first round's time (0 = none) */
    double fam_best[SDI_SEARCH_MAX_FAMILIES];
    sdi_plan fam_plan[SDI_SEARCH_MAX_FAMILIES];
    double fam_preset[SDI_SEARCH_MAX_FAMILIES];
    /* dense operands */
    float *host_in, *d_in, *d_out;
    sdi_reference ref;
    /* SpGEMM */
    sdi_spgemm_operands *sg_ops;
    sd_csr at;
    int search_fast; /* NVRTC fast-compile level of the candidates */
};

/* search.c */
SDI_HIDDEN sd_status sdi_search_run(sdi_search *s);
/* Families of the operator in ranking order (table indices); their count. */
SDI_HIDDEN int sdi_search_ranked(const sdi_task *t, const sdi_ranking *rk, bool interleave,
                                 int *fams, int cap);
/* Plans of family `index` at a sweep level (0 = its defaults, which may consult the
 * task's preset; none when the family does not apply), the operator's `adjust` applied;
 * free with sdi_plan_list_free. */
SDI_HIDDEN sd_status sdi_search_plans(sdi_search *s, int index, int level, sdi_plan_list *out);
/* The branches of a budget (5 at the default of 25, ≈ the paper's 3 × 5 + 2 × 5 shape). */
SDI_HIDDEN int sdi_search_branches(int budget);

/* op_spgemm.c: the product as messages name it. */
SDI_HIDDEN const char *sdi_search_product_name(const sd_csr *b, int aat);

/* search_measure.c */
SDI_HIDDEN bool sdi_search_would_try(const sdi_search *s, const sdi_plan *p);
/* Builds, validates and times one plan; keeps it as the best when it is. edit (NULL but for
 * the winner's edits) names the trial it edits in the record. Errors only when the search
 * cannot go on (the CUDA context broke, host memory). */
SDI_HIDDEN sd_status sdi_search_try(sdi_search *s, int round, const sdi_plan *p,
                                    const sdi_plan_edit *edit, int edit_src);
SDI_HIDDEN void sdi_search_candidate(const sdi_search *s, const sdi_plan *p, sdi_candidate *c);
SDI_HIDDEN void sdi_search_order_by_time(sdi_search *s, int *list, int n);
SDI_HIDDEN sd_status sdi_search_winner_in_full(sdi_search *s);
SDI_HIDDEN sd_status sdi_search_finalists(sdi_search *s);
SDI_HIDDEN sd_status sdi_search_vendor_decision(sdi_search *s);
/* cuSPARSE's variants timed for the report and as the vendor candidate (bo: the operator's
 * options; the reference and the brief threshold are the search's), and the fastest valid
 * one picked: without float atomics in deterministic mode; a variant that failed is named
 * in r->vendor_failure when record_failures. The baseline's status is returned, with
 * r->baseline allocated whatever it is. */
SDI_HIDDEN sd_status sdi_search_vendor_baseline(sdi_search *s, const float *host_in,
                                               sdi_baseline_options *bo, bool record_failures);
/* The edits of the best so far (winner_edits); their count. */
SDI_HIDDEN int sdi_search_winner_edits(const sdi_search *s, sdi_plan_edit *out, int cap);

#endif /* SDI_TUNE_SEARCH_H */
