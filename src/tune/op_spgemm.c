/* src/tune/op_spgemm.c: the search's hooks for SpGEMM: the product's second operand and
 * its size check, the device operands (A, B or Aᵀ, the u(i) / span analysis: built once,
 * lent to every candidate, kept by the winner), the CPU reference, measurement of C
 * (symbolic + numeric + compaction and C's allocation from the device inputs, the first
 * product validated: sorted, coalesced structure exact, values within the bound;
 * docs/ARCHITECTURE.md "Measurement"), the NVRTC fast level of the candidates and the
 * winner's full build, deterministic mode, the CTA-size transfer of large products and
 * cuSPARSE's algorithms (ALG1–3) as the vendor round. */
#include <stdio.h>
#include <string.h>

#include "../lower/spgemm_units.h"
#include "search.h"

#define SD_FREE_ALL ((void)0)

/* The product as messages name it. */
const char *sdi_search_product_name(const sd_csr *b, int aat)
{
    return b != NULL ? "A·B" : aat ? "A·Aᵀ" : "A·A";
}

sd_status sdi_spgemm_second_operand(const sd_csr *a, const sd_csr *b, int *aat, sd_csr *at,
                                    const sd_csr **out)
{
    if (b != NULL) {
        if (b->rows != a->cols)
            return SDI_ERR(SD_ERR_INVALID_ARG, "A·B: A is %dx%d and B is %dx%d", a->rows, a->cols,
                           b->rows, b->cols);
        *aat = 0;
        *out = b;
        return SD_OK;
    }
    if (*aat < 0)
        *aat = a->rows != a->cols;
    if (!*aat) {
        *out = a;
        return SD_OK;
    }
    sd_status s = sdi_csr_transpose(a, at);
    *out = at;
    return s;
}

static sd_status sg_prepare(sdi_search *s)
{
    SD_TRY(sdi_spgemm_second_operand(s->a, s->b, &s->aat, &s->at, &s->bb));
    s->r->aat = s->aat;
    s->r->general_b = s->b != NULL;
    /* A product no device of this size can hold stops here, before any compilation. */
    return sdi_spgemm_output_check(s->a, s->bb, sdi_search_product_name(s->b, s->aat), &s->ctx->props);
}

/* Operands on the device, the row analysis, the CPU reference. */
static sd_status sg_operands(sdi_search *s)
{
    sdi_tune_result *out = s->r;
    const double t0 = sdi_now();
    SD_TRY(sdi_spgemm_operands_create(s->ctx, s->a, s->b, s->aat, &s->sg_ops));
    s->task.sg_rows = sdi_spgemm_operands_rowinfo(s->sg_ops);
    sdi_sg_summarize(s->task.sg_rows, &s->sm);
    s->task.sg = &s->sm;
    sdi_sg_limits_from_props(&s->ctx->props, &s->lim);
    s->task.sg_lim = &s->lim;
    out->products = s->sm.u_total;
    s->big = s->sm.u_total > SDI_SG_BIG_PRODUCTS;
    const double t_ref = sdi_now();
    SD_TRY(sdi_reference_spgemm(s->a, s->bb, &s->ref));
    out->nnz_c = s->ref.c.nnz;
    sdi_log(1, "spgemm search: operands %.1f ms, CPU reference %.1f ms (%lld entries)",
            (t_ref - t0) * 1e3, (sdi_now() - t_ref) * 1e3, (long long)out->nnz_c);
    SD_TRY(sdi_device_calibrate(s->ctx));
    return sdi_spgemm_search_fast_level(&s->sm, &s->search_fast);
}

static void sg_adjust(const sdi_search *s, sdi_plan *p)
{
    p->p.spgemm.fast_compile = s->search_fast;
}

/* Compiles a batch of plans in parallel before they are tried (NVRTC is thread-safe; the
 * executables then find their modules in the memo). Its wall time is the search's NVRTC
 * stage: the tries only see the memo hits. A failure is left to each candidate, which
 * reports its own. One plan too: its units compile side by side. */
static void sg_precompile(sdi_search *s, const sdi_plan *v, int n)
{
    if (n < 1)
        return;
    double t0 = sdi_now();
    if (sdi_spgemm_precompile_plans(s->ctx, s->task.sg_rows, v, n) != SD_OK)
        sdi_error_clear();
    s->r->ms_compile += (sdi_now() - t0) * 1e3;
}

typedef struct {
    sd_context *ctx;
    sdi_candidate *c;
} produce_arg;

static sd_status produce(void *arg, cudaStream_t stream, sd_device_csr *c)
{
    produce_arg *pa = arg;
    return sdi_exe_run_spgemm(pa->ctx, &pa->c->exe, stream, c);
}

static sd_status sg_measure(sdi_search *s, sdi_candidate *c, const char *name, const sdi_screen *sc,
                            sdi_timing *t, sdi_measured *how, sdi_validation *val)
{
    produce_arg pa = {s->ctx, c};
    return sdi_spgemm_measure(s->ctx, name, produce, &pa, &s->ref, t, val, NULL, sc, how);
}

/* Deterministic mode: the tiny accumulator is the only one without float atomics
 * (sdi_spgemm_deterministic_configs), so the candidates are every family's preset forced to
 * it, which fits only when no row has more than 32 products. */
static sd_status sg_deterministic(sdi_search *s)
{
    sdi_spgemm_config dc[SDI_SEARCH_MAX_FAMILIES];
    sdi_plan v[SDI_SEARCH_MAX_FAMILIES];
    const int nd = sdi_spgemm_deterministic_configs(&s->sm, dc, SDI_SEARCH_MAX_FAMILIES);
    for (int i = 0; i < nd; i++) {
        SD_TRY(sdi_spgemm_plan_of(&dc[i], &v[i]));
        v[i].p.spgemm.fast_compile = s->search_fast;
    }
    sg_precompile(s, v, nd);
    for (int i = 0; i < nd; i++)
        SD_TRY(sdi_search_try(s, 1, &v[i], NULL, 0));
    if (nd == 0)
        snprintf(s->r->diagnosis, sizeof s->r->diagnosis,
                 "deterministic: a row has %lld products; only the tiny accumulator "
                 "(<= 32) sums without float atomics",
                 (long long)s->sm.u_max);
    return SD_OK;
}

/* The best so far rebuilt with full optimisation, when the candidates compile at a fast
 * level (what the search's last step measures). */
static bool sg_full_plan(const sdi_search *s, sdi_plan *out)
{
    if (s->search_fast <= 0 || s->r->ours_trial < 0 || s->r->best.kind != SDI_CAND_PLAN)
        return false;
    *out = s->r->best.plan;
    out->p.spgemm.fast_compile = -1;
    return true;
}

/* The fastest family w's CTA-size edit, when it paid, on the other families' bests
 * (sdi_spgemm_transfer_threads). */
static int sg_transfer(const sdi_search *s, int w, const int *fams, int nf, sdi_plan *out, int cap)
{
    sdi_spgemm_config bests[SDI_SEARCH_MAX_FAMILIES], v[SDI_SEARCH_MAX_FAMILIES];
    int nb = 0;
    for (int i = 0; i < nf && nb < SDI_SEARCH_MAX_FAMILIES; i++)
        if (fams[i] != w && s->fam_best[fams[i]] > 0)
            bests[nb++] = s->fam_plan[fams[i]].p.spgemm;
    int n = sdi_spgemm_transfer_threads(&s->fam_plan[w].p.spgemm, s->fam_best[w], s->fam_preset[w],
                                        bests, nb, v);
    if (n > cap)
        n = cap;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (sdi_spgemm_plan_of(&v[i], &out[m]) == SD_OK) /* the families' own configurations */
            m++;
    return m;
}

/* cuSPARSE ALG1–3: measured for the report and as the vendor candidate. A variant that
 * fails for resources is recorded as such in the baseline (and counted here); why none
 * completed joins the diagnosis. */
static sd_status vendor_round(sdi_search *s)
{
    sdi_tune_result *r = s->r;
    sdi_baseline_options bo;
    memset(&bo, 0, sizeof bo);
    bo.aat = s->aat;
    bo.b = s->b;
    sd_status st = sdi_search_vendor_baseline(s, NULL, &bo, true);
    if (st == SD_ERR_UNSUPPORTED) {
        /* e.g. beyond 32-bit indices: cuSPARSE cannot do this product at all. */
        snprintf(r->vendor_failure, sizeof r->vendor_failure, "%.190s", sd_last_error());
        sdi_error_clear();
        sdi_free(r->baseline);
        r->baseline = NULL;
        return SD_OK;
    }
    return st;
}

static sd_status sg_vendor_round(sdi_search *s)
{
    SD_TRY(vendor_round(s));
    sdi_tune_result *out = s->r;
    if (out->vendor_failure[0]) {
        size_t len = strlen(out->diagnosis);
        snprintf(out->diagnosis + len, sizeof out->diagnosis - len, "%scuSPARSE failed (%s)",
                 len ? "; " : "", out->vendor_failure);
    }
    return SD_OK;
}

/* The winner keeps the operands. */
static void sg_finish(sdi_search *s)
{
    if (s->r->winner_is_vendor)
        return;
    s->r->best.exe.sg_owns_ops = 1;
    s->sg_ops = NULL;
}

static void sg_cleanup(sdi_search *s)
{
    sdi_reference_free(&s->ref);
    if (s->sg_ops != NULL) {
        sdi_candidate *best = &s->r->best;
        if (best->exe.sg_ops == s->sg_ops && !best->exe.sg_owns_ops)
            sdi_candidate_release(best); /* it borrows the operands */
        sdi_spgemm_operands_destroy(s->sg_ops);
        s->sg_ops = NULL;
    }
    sd_csr_free(&s->at);
}

const sdi_search_op sdi_search_op_spgemm = {
    .all_branches = true,
    .refine_batch = true,
    .transfer_threads = true,
    .winner_edits = true,
    .full_build = true,
    .finalists = true,
    .launch_note = true,
    .what = "SpGEMM candidate",
    .vendor_none = " and no cuSPARSE algorithm is usable",
    .fail_diagnosis = true,
    .prepare = sg_prepare,
    .operands = sg_operands,
    .adjust = sg_adjust,
    .precompile = sg_precompile,
    .measure = sg_measure,
    .deterministic = sg_deterministic,
    .full_plan = sg_full_plan,
    .transfer = sg_transfer,
    .vendor_round = sg_vendor_round,
    .finish = sg_finish,
    .cleanup = sg_cleanup,
};
