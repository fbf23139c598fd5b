/* src/tune/tune_spgemm.c: the SpGEMM search and its offline half. The same rounds as
 * the SpMV / SpMM search (tune.c) over the SpGEMM plan families (plan/spgemm.h):
 *   1. branches: the preset θ_H of the families in ranking order;
 *   2. iterations: a level-1 sweep of every family, fastest first;
 *   3. refinement: a level-2 sweep of the two fastest families (large products: the
 *      fastest family's CTA-size edit, when it paid, on the other families' bests);
 * then cuSPARSE's SpGEMM algorithms (ALG1–3) as the vendor candidate. Every candidate's
 * first product is validated (sorted, coalesced structure exact, values within the
 * bound) before it is timed; a time covers symbolic + numeric + compaction and C's
 * allocation from the device inputs (docs/ARCHITECTURE.md "Measurement"). The device
 * operands (A, B or Aᵀ, the
 * u(i) / span analysis) are built once and lent to every candidate; the winner keeps
 * them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "../analysis/analysis.h"
#include "../plan/plan.h"
#include "tune.h"

#define NF SDI_SPGEMM_NFAMILIES

typedef struct {
    sd_context *ctx;
    const sd_csr *a, *b; /* b: a general B, or NULL */
    int aat;
    const sdi_tune_options *opt;
    sdi_tune_result *r;
    int budget, used;
    sdi_spgemm_operands *ops;
    sdi_reference ref;
    sdi_sg_summary sm;
    double best_ours_us;
    int ntried;
    sdi_spgemm_config tried[SDI_TUNE_MAX_TRIALS];
    double fam_best[NF];
    sdi_spgemm_config fam_cfg[NF]; /* the configuration behind fam_best */
    double fam_preset[NF];         /* the family's preset (branches round), 0 if none ran */
    int search_fast; /* NVRTC fast-compile level of the candidates (SPARSEDITTO_SEARCH_FAST) */
} sg_tuner;

/* ------------------------------------------------------------------ families */

static void push(int *list, int *n, int f)
{
    for (int i = 0; i < *n; i++)
        if (list[i] == f)
            return;
    list[(*n)++] = f;
}

/* Families in ranking order: csr_hash → hash tables; smem_tiled_hash → tiny lists and
 * tables, fused; hybrid → every accumulator. The dense-stripe family (no V_o label) is
 * synthesis's alternative, placed first among the rest when most rows have narrow
 * spans (banded / diagonal structure). */
static void ranked_families(const sdi_ranking *rk, const sdi_sg_summary *sm, int *fams, int *nf)
{
    *nf = 0;
    if (sm != NULL && sm->frac_narrow > 0.5)
        push(fams, nf, SDI_SPGEMM_DENSE);
    for (int i = 0; i < rk->n; i++) {
        int f = sdi_spgemm_family_from_name(rk->e[i].label);
        if (strcmp(rk->e[i].label, "csr_hash") == 0)
            f = SDI_SPGEMM_HASH;
        else if (strcmp(rk->e[i].label, "smem_tiled_hash") == 0)
            f = SDI_SPGEMM_TILED;
        else if (strcmp(rk->e[i].label, "hybrid") == 0)
            f = SDI_SPGEMM_HYBRID;
        if (f >= 0 && f < NF)
            push(fams, nf, f);
    }
    for (int f = 0; f < NF; f++)
        push(fams, nf, f);
}

/* Host u(i), lo(i), hi(i) of C = A·B (the offline path; the search reads them from the
 * device analysis). Arrays are allocated into *u, *lo, *hi. */
static sd_status host_rowinfo(const sd_csr *a, const sd_csr *b, sdi_sg_rowinfo *ri, int64_t **u,
                              int32_t **lo, int32_t **hi)
{
    size_t m = (size_t)(a->rows > 0 ? a->rows : 1);
    *u = sdi_malloc_array(m, sizeof **u);
    *lo = sdi_malloc_array(m, sizeof **lo);
    *hi = sdi_malloc_array(m, sizeof **hi);
    if (*u == NULL || *lo == NULL || *hi == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the SpGEMM row analysis");
    (void)sdi_spgemm_row_work(a, b->rowptr, *u);
    for (int32_t i = 0; i < a->rows; i++) {
        int32_t l = b->cols, h = -1;
        for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) {
            int32_t k = a->colind[p];
            if (b->rowptr[k + 1] > b->rowptr[k]) {
                if (b->colind[b->rowptr[k]] < l)
                    l = b->colind[b->rowptr[k]];
                if (b->colind[b->rowptr[k + 1] - 1] > h)
                    h = b->colind[b->rowptr[k + 1] - 1];
            }
        }
        (*lo)[i] = h >= 0 ? l : 0;
        (*hi)[i] = h >= 0 ? h : 0;
    }
    int64_t bmax = 0;
    for (int32_t k = 0; k < b->rows; k++)
        if (b->rowptr[k + 1] - b->rowptr[k] > bmax)
            bmax = b->rowptr[k + 1] - b->rowptr[k];
    memset(ri, 0, sizeof *ri);
    ri->m = a->rows;
    ri->n = b->cols;
    ri->u = *u;
    ri->lo = *lo;
    ri->hi = *hi;
    ri->b_row_max = bmax;
    return SD_OK;
}

/* The product as messages name it. */
static const char *product_name(const sd_csr *b, int aat)
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

/* Deterministic mode: the tiny accumulator is the only one without float atomics
 * (impl.c), so the candidates are every family's preset forced to it, which fits only
 * when no row has more than 32 products. */
static int deterministic_configs(const sg_tuner *t, sdi_spgemm_config *out, int cap)
{
    if (t->sm.u_max > 32)
        return 0;
    int n = 0;
    for (int f = 0; f < NF && n < cap; f++) {
        sdi_spgemm_config c;
        if (sdi_spgemm_config_default(f, &c) != SD_OK) {
            sdi_error_clear();
            continue;
        }
        c.force_kind = SDI_SG_TINY;
        c.force_p = t->sm.u_max <= 8 ? 8 : 32;
        c.force_g = 0;
        if (sdi_spgemm_config_check(&c) == SD_OK)
            out[n++] = c;
        sdi_error_clear();
    }
    return n;
}

/* Products of more than this many multiplications: each candidate costs seconds to run,
 * so the search sweeps one configuration per family and refines only by carrying a CTA
 * size that paid to the other families (transfer_threads), and (below) its
 * candidates are compiled at full optimisation. */
#define SG_BIG_PRODUCTS 5e8

/* SPARSEDITTO_SEARCH_FAST: the NVRTC --Ofast-compile level of a search's candidates (the
 * winner is built again with full optimisation). Unset: min, unless SPARSEDITTO_NVRTC_FAST
 * sets a level for every compile (then 0: that level, winner included, as before) or the
 * product is large (SG_BIG_PRODUCTS: 0). The H200's quick set side by side
 * (`sparseditto bench --set quick` with SPARSEDITTO_SEARCH_FAST unset and "0", clean of
 * NVRTC's own cache): kernels kept (1.54x vs 1.53x, 79 vs 75 tasks won), the SpGEMM
 * searches' NVRTC 94 -> 69 s, the set 208 -> 184 s. "0": every candidate at full
 * optimisation. */
static sd_status search_fast_level(const sdi_sg_summary *sm, int *level)
{
    *level = 0;
    /* a search without a context (the offline plans) reports a bad knob here */
    sd_status s = sdi_config_status();
    if (s != SD_OK)
        return s;
    if (!sdi_config_is_set("SPARSEDITTO_SEARCH_FAST")) {
        /* Large products: NVRTC is a small part of their search (af_shell10's twin: 2.4 s of
         * 113 s) and min-built candidates ran 24 % slower than the winner rebuilt at full
         * (380 vs 289 ms), so they are ranked as they will run. */
        *level = sdi_config_is_set("SPARSEDITTO_NVRTC_FAST") || sm->u_total > SG_BIG_PRODUCTS ? 0 : 1;
        return SD_OK;
    }
    *level = sdi_config_get()->search_fast;
    return SD_OK;
}

/* ------------------------------------------------------------------ candidates */

static sd_status produce(void *arg, cudaStream_t stream, sd_device_csr *c)
{
    sdi_impl *im = arg;
    return sdi_impl_run_spgemm(NULL, im, stream, c);
}

/* Which trial an edit came from (its index in trials) and the edit's mark (sdi_trial.edit). */
typedef struct {
    int src;
    char mark[16];
} sg_edit;

/* A candidate of cfg on the tuner's product, not yet built (the device operands lent: the
 * tuner owns them). */
static void candidate_of(const sg_tuner *t, const sdi_spgemm_config *cfg, sdi_impl *im)
{
    memset(im, 0, sizeof *im);
    im->kind = SDI_IMPL_SPGEMM;
    im->op = SD_OP_SPGEMM;
    im->k = 1;
    im->spgemm_cfg = *cfg;
    im->sg_b = t->b;
    im->sg_aat = t->aat;
    im->sg_ops = t->ops;
}

/* Builds, validates and times one configuration; keeps it as the best when it is. edit
 * (NULL for all but the winner's edits) names the trial it edits in the record. */
static sd_status try_one(sg_tuner *t, int round, const sdi_spgemm_config *cfg, const sg_edit *edit)
{
    sdi_tune_result *r = t->r;
    if (r->ntrials >= SDI_TUNE_MAX_TRIALS || t->used >= t->budget)
        return SD_OK;
    for (int i = 0; i < t->ntried; i++)
        if (memcmp(&t->tried[i], cfg, sizeof *cfg) == 0)
            return SD_OK;
    sdi_impl cand;
    candidate_of(t, cfg, &cand);
    if (t->opt->deterministic && sdi_impl_uses_atomics(&cand))
        return SD_OK;
    t->tried[t->ntried++] = *cfg;
    t->used++;
    sdi_trial *tr = &r->trials[r->ntrials++];
    memset(tr, 0, sizeof *tr);
    tr->round = round;
    if (edit != NULL) {
        tr->edit_src = edit->src + 1;
        snprintf(tr->edit, sizeof tr->edit, "%s", edit->mark);
    }
    sdi_impl_family(&cand, tr->family, sizeof tr->family);
    sdi_impl_describe(&cand, tr->config, sizeof tr->config);

    double t0 = sdi_now();
    sd_status s = sdi_impl_build(t->ctx, t->a, &cand, NULL, 0);
    r->ms_synthesis += cand.lower_ms;
    r->ms_compile += cand.compile_ms;
    tr->compile_ms = cand.compile_ms;
    if (s == SD_OK && t->opt->deterministic && sdi_impl_uses_atomics(&cand))
        s = SDI_ERR(SD_ERR_UNSUPPORTED, "uses floating-point atomics (deterministic mode)");
    sdi_validation val;
    memset(&val, 0, sizeof val);
    const sdi_screen sc = {
        .screen_us =
            t->best_ours_us > 0 ? sdi_tune_screen_factor(t->best_ours_us) * t->best_ours_us : 0,
        .brief_us = sdi_tune_brief_us(t->opt),
        .brief_long_us = SDI_TUNE_BRIEF_LONG_US};
    if (s == SD_OK)
        s = sdi_spgemm_measure(t->ctx, tr->config, produce, &cand, &t->ref, &tr->t, &val, NULL, &sc,
                               &tr->measured);
    if (s == SD_ERR_VALIDATION)
        snprintf(tr->detail, sizeof tr->detail, "%.190s", val.reason[0] ? val.reason : sd_last_error());
    r->ms_measure += (sdi_now() - t0) * 1e3 - cand.lower_ms - cand.compile_ms;
    tr->status = s;
    tr->peak_bytes = sdi_impl_peak_bytes(&cand);
    if (s != SD_OK && tr->detail[0] == '\0')
        snprintf(tr->detail, sizeof tr->detail, "%.190s", sd_last_error());
    if (s == SD_OK) {
        r->n_valid++;
        int f = cfg->family;
        if (t->fam_best[f] == 0 || tr->t.mean_us < t->fam_best[f]) {
            t->fam_best[f] = tr->t.mean_us;
            t->fam_cfg[f] = *cfg;
        }
        if (round == 1 && t->fam_preset[f] == 0)
            t->fam_preset[f] = tr->t.mean_us;
        if (r->ours_trial < 0 || tr->t.mean_us < t->best_ours_us) {
            sdi_impl_release(&r->best);
            r->best = cand; /* the built state moves to the result */
            memset(&cand, 0, sizeof cand);
            r->best_t = tr->t;
            r->best_peak_bytes = tr->peak_bytes;
            r->ours_trial = r->ntrials - 1;
            t->best_ours_us = tr->t.mean_us;
        }
    } else if (s == SD_ERR_VALIDATION) {
        r->n_invalid++;
    } else if (s == SD_ERR_UNSUPPORTED) {
        r->n_refused++;
    } else {
        r->n_failed++;
    }
    sdi_impl_release(&cand);
    sdi_error_clear();
    if (t->opt->progress)
        t->opt->progress(t->opt->progress_arg,
                         round == 1   ? "branches"
                         : round == 2 ? "iterations"
                         : round == 3 ? "refinement"
                                      : "full-opt",
                         tr,
                         t->best_ours_us);
    if (t->ctx->broken)
        return SDI_ERR(SD_ERR_CUDA, "%s", t->ctx->broken_reason);
    return SD_OK;
}

static sd_status try_config(sg_tuner *t, int round, const sdi_spgemm_config *cfg)
{
    return try_one(t, round, cfg, NULL);
}

/* Compiles a batch of configurations in parallel before they are tried (NVRTC is
 * thread-safe; the executors then find their modules in the memo). Its wall time is the
 * search's NVRTC stage: try_config only sees the memo hits. A failure is left to each
 * candidate, which reports its own. */
static void precompile_batch(sg_tuner *t, const sdi_spgemm_config *v, int n)
{
    if (n < 1)
        return; /* one configuration too: its units compile side by side */
    double t0 = sdi_now();
    if (sdi_spgemm_precompile(t->ctx, t->ops, v, n) != SD_OK)
        sdi_error_clear();
    t->r->ms_compile += (sdi_now() - t0) * 1e3;
}

/* A sweep level's picks: up to take[i] new configurations of family fams[i] (at most
 * `left` in all), none already tried nor among also[0 … nalso). Family i's picks are
 * (*all)[first[i] … first[i] + cnt[i]); *all is the caller's to free. */
static sd_status sweep_pick(const sg_tuner *t, const int *fams, int nfams, int level,
                            const int *take, int left, const sdi_spgemm_config *also, int nalso,
                            sdi_spgemm_config **all, int *first, int *cnt, int *total)
{
    enum { PER = 64 };
    *total = 0;
    *all = sdi_calloc((size_t)(nfams > 0 ? nfams : 1) * PER, sizeof **all);
    if (*all == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the SpGEMM sweep");
    for (int i = 0; i < nfams && i < NF; i++) {
        sdi_spgemm_config *v = NULL;
        int n = 0;
        sd_status s = sdi_spgemm_enumerate(&t->sm, 1u << fams[i], level, PER, &v, &n);
        if (s != SD_OK) {
            sdi_free(v);
            return s;
        }
        first[i] = *total;
        cnt[i] = 0;
        for (int j = 0; j < n && cnt[i] < take[i] && cnt[i] < PER && left > 0; j++) {
            v[j].fast_compile = t->search_fast;
            int dup = 0;
            for (int q = 0; q < t->ntried && !dup; q++)
                dup = memcmp(&t->tried[q], &v[j], sizeof v[j]) == 0;
            for (int q = 0; q < nalso && !dup; q++)
                dup = memcmp(&also[q], &v[j], sizeof v[j]) == 0;
            if (!dup) {
                (*all)[(*total)++] = v[j];
                cnt[i]++;
                left--;
            }
        }
        sdi_free(v);
    }
    return SD_OK;
}

/* Compiles v[0 … n) and extra[0 … nextra) in one parallel batch. */
static sd_status precompile_with(sg_tuner *t, const sdi_spgemm_config *v, int n,
                                 const sdi_spgemm_config *extra, int nextra)
{
    if (nextra <= 0) {
        precompile_batch(t, v, n);
        return SD_OK;
    }
    sdi_spgemm_config *all = sdi_calloc((size_t)(n + nextra), sizeof *all);
    if (all == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the SpGEMM batch");
    if (n > 0)
        memcpy(all, v, (size_t)n * sizeof *all);
    memcpy(all + n, extra, (size_t)nextra * sizeof *all);
    precompile_batch(t, all, n + nextra);
    sdi_free(all);
    return SD_OK;
}

/* One sweep level of several families (sweep_pick's picks), all compiled in one parallel
 * batch first together with extra[0 … nextra) (configurations a later step will try: see
 * sdi_tune_spgemm), then tried family by family. One batch instead of one per family: a
 * SpGEMM unit takes seconds to compile, and a family's few units alone leave most host
 * cores idle. */
static sd_status sweep_families(sg_tuner *t, int round, const int *fams, int nfams, int level,
                                const int *take, const sdi_spgemm_config *extra, int nextra)
{
    sdi_spgemm_config *all = NULL;
    int first[NF] = {0}, cnt[NF] = {0}, total = 0;
    sd_status s = sweep_pick(t, fams, nfams, level, take, t->budget - t->used, NULL, 0, &all,
                             first, cnt, &total);
    if (s == SD_OK)
        s = precompile_with(t, all, total, extra, nextra);
    for (int i = 0; i < nfams && i < NF && s == SD_OK; i++) {
        int before = t->used;
        for (int j = 0; j < cnt[i] && t->used - before < take[i] && s == SD_OK; j++)
            s = try_config(t, round, &all[first[i] + j]);
    }
    sdi_free(all);
    return s;
}

/* A winner ranked by the brief protocol is measured again with the full protocol
 * (docs/ARCHITECTURE.md "Measurement"; validated again too): only that time is compared
 * with cuSPARSE, reported and cached. */
static sd_status measure_winner_in_full(sg_tuner *t)
{
    sdi_tune_result *r = t->r;
    if (r->ours_trial < 0 || r->trials[r->ours_trial].measured != SDI_MEASURED_BRIEF)
        return SD_OK;
    sdi_trial *tr = &r->trials[r->ours_trial];
    sdi_validation val;
    memset(&val, 0, sizeof val);
    double t0 = sdi_now();
    sdi_timing full;
    sd_status s = sdi_spgemm_measure(t->ctx, tr->config, produce, &r->best, &t->ref, &full, &val,
                                     NULL, NULL, NULL);
    r->ms_measure += (sdi_now() - t0) * 1e3;
    if (s != SD_OK)
        return s; /* it validated a moment ago: a failure now is the device's */
    tr->t = full;
    tr->measured = SDI_MEASURED_FULL;
    r->best_t = full;
    t->best_ours_us = full.mean_us;
    return SD_OK;
}

/* Small products: the closest candidates timed again, side by side. A small product's
 * time is mostly launches and a host round trip, and one search's timings of two close
 * candidates differ by more than their kernels do (the same build picks G51's
 * dense_stripe at 55 us in one call and hybrid at 82 us in another: `sparseditto compile
 * G51.mtx.gz --op spgemm --no-cache --json`, twice). The winner and up to
 * SG_FINALISTS - 1 valid candidates within SG_FINAL_WITHIN of it, each measured with the
 * full protocol in SG_FINAL_ROUNDS interleaved rounds; the lowest sum of the rounds' means
 * wins, and its last round's timing is the one reported and compared with cuSPARSE.
 * It seldom finds a second finalist: the candidates are built at NVRTC's fast level and the
 * winner's full build runs 24-35 % faster, so few fall within SG_FINAL_WITHIN of it (H200:
 * 25 small products 5.32x with the rounds, 5.28x with SPARSEDITTO_SG_FINALISTS=0, by
 * `sparseditto bench --ops spgemm`; rebuilding the other families' best at full
 * optimisation as competitors changes nothing either). */
#define SG_FINAL_MAX_US 2000.0 /* winners up to 2 ms: the rounds cost ~0.1 s at most */
#define SG_FINAL_WITHIN 1.3
#define SG_FINALISTS 3
#define SG_FINAL_ROUNDS 2
_Static_assert(SG_FINAL_ROUNDS == sizeof ((sdi_trial *)0)->round_mean_us / sizeof(double),
               "sdi_trial.round_mean_us holds one mean a final round");
int sdi_tune_finalists(const sdi_trial *trials, int ntrials, int winner, double within, int cap,
                       int *out)
{
    if (winner < 0 || winner >= ntrials || cap < 1)
        return 0;
    const double limit = within * trials[winner].t.mean_us;
    int n = 0;
    out[n++] = winner;
    while (n < cap) {
        int pick = -1;
        for (int i = 0; i < ntrials; i++) {
            const sdi_trial *tr = &trials[i];
            bool taken = false;
            for (int k = 0; k < n; k++)
                taken |= out[k] == i;
            if (taken || tr->status != SD_OK || tr->measured != SDI_MEASURED_FULL ||
                !(tr->t.mean_us > 0) || tr->t.mean_us > limit)
                continue;
            if (pick < 0 || tr->t.mean_us < trials[pick].t.mean_us)
                pick = i;
        }
        if (pick < 0)
            break;
        out[n++] = pick;
    }
    return n;
}

static sd_status retime_finalists(sg_tuner *t)
{
    sdi_tune_result *r = t->r;
    if (r->ours_trial < 0 || !(t->best_ours_us > 0) || t->best_ours_us > SG_FINAL_MAX_US ||
        !sdi_config_get()->sg_finalists) /* =0: the search's own winner stands (measurements, tests) */
        return SD_OK;
    int fin[SG_FINALISTS];
    const int nfin = sdi_tune_finalists(r->trials, r->ntrials, r->ours_trial, SG_FINAL_WITHIN,
                                        SG_FINALISTS, fin);
    if (nfin < 2)
        return SD_OK;
    double t0 = sdi_now();
    sdi_impl cand[SG_FINALISTS];
    memset(cand, 0, sizeof cand);
    sdi_impl *im[SG_FINALISTS] = {&r->best};
    int n = 1;
    for (int k = 1; k < nfin; k++) {
        /* trials and tried are appended together (try_one): the same index */
        sdi_impl *c = &cand[n];
        candidate_of(t, &t->tried[fin[k]], c); /* a failed build's leftovers go */
        if (sdi_impl_build(t->ctx, t->a, c, NULL, 0) != SD_OK) {
            sdi_log(1, "finalist %s could not be built again: %s", r->trials[fin[k]].config,
                    sd_last_error());
            sdi_impl_release(c);
            sdi_error_clear();
            if (t->ctx->broken)
                return SDI_ERR(SD_ERR_CUDA, "%s", t->ctx->broken_reason);
            continue;
        }
        fin[n] = fin[k];
        im[n++] = c;
    }
    sdi_timing last[SG_FINALISTS];
    double sum[SG_FINALISTS] = {0};
    sd_status s = SD_OK;
    for (int q = 0; q < SG_FINAL_ROUNDS && s == SD_OK; q++)
        for (int k = 0; k < n && s == SD_OK; k++) {
            sdi_validation val;
            memset(&val, 0, sizeof val);
            s = sdi_spgemm_measure(t->ctx, r->trials[fin[k]].config, produce, im[k], &t->ref,
                                   &last[k], &val, NULL, NULL, NULL);
            if (s != SD_OK)
                break; /* last[k] holds no timing: the record keeps none of it */
            sum[k] += last[k].mean_us;
            r->trials[fin[k]].round_mean_us[q] = last[k].mean_us;
        }
    r->ms_measure += (sdi_now() - t0) * 1e3;
    if (s != SD_OK) { /* each validated a moment ago: a failure now is the device's */
        for (int k = 1; k < n; k++)
            sdi_impl_release(im[k]);
        return s;
    }
    int w = 0;
    for (int k = 1; k < n; k++)
        if (sum[k] < sum[w])
            w = k;
    for (int k = 0; k < n; k++) {
        sdi_trial *tr = &r->trials[fin[k]];
        tr->retimed = 1;
        tr->search_mean_us = tr->t.mean_us;
        tr->t = last[k];
    }
    if (w > 0) {
        sdi_impl_release(&r->best);
        r->best = *im[w]; /* the built state moves to the result */
        memset(im[w], 0, sizeof *im[w]);
        r->ours_trial = fin[w];
        r->best_peak_bytes = r->trials[fin[w]].peak_bytes;
    }
    r->best_t = last[w];
    t->best_ours_us = last[w].mean_us;
    for (int k = 1; k < n; k++)
        sdi_impl_release(im[k]);
    return SD_OK;
}

static void order_by_time(const sg_tuner *t, int *list, int n)
{
    for (int i = 1; i < n; i++) {
        int x = list[i], j = i - 1;
        double tx = t->fam_best[x] > 0 ? t->fam_best[x] : 1e300;
        while (j >= 0 && (t->fam_best[list[j]] > 0 ? t->fam_best[list[j]] : 1e300) > tx) {
            list[j + 1] = list[j];
            j--;
        }
        list[j + 1] = x;
    }
}

/* Large products: the fastest family's CTA-size edit, when it paid, tried on the other
 * families' bests (sdi_spgemm_transfer_threads), compiled in one batch, as refinement. */
static sd_status transfer_threads(sg_tuner *t, const int *fams, int nf)
{
    int w = -1;
    for (int i = 0; i < nf; i++)
        if (t->fam_best[fams[i]] > 0 && (w < 0 || t->fam_best[fams[i]] < t->fam_best[w]))
            w = fams[i];
    if (w < 0)
        return SD_OK;
    sdi_spgemm_config bests[NF], v[NF];
    int nb = 0;
    for (int i = 0; i < nf; i++)
        if (fams[i] != w && t->fam_best[fams[i]] > 0)
            bests[nb++] = t->fam_cfg[fams[i]];
    int n = sdi_spgemm_transfer_threads(&t->fam_cfg[w], t->fam_best[w], t->fam_preset[w],
                                        bests, nb, v);
    if (n > t->budget - t->used)
        n = t->budget - t->used;
    if (n <= 0)
        return SD_OK;
    precompile_batch(t, v, n);
    sd_status s = SD_OK;
    for (int i = 0; i < n && s == SD_OK; i++)
        s = try_config(t, 3, &v[i]);
    return s;
}

/* Whether a schedule has rows of any of the kinds in mask (bits 1 << sdi_sg_kind) with
 * a size code above p_min. */
static bool has_rows_of(const sdi_sg_schedule *s, unsigned mask, int p_min)
{
    for (int b = 0; b < s->nbins; b++)
        if ((mask & (1u << s->bins[b].kind)) && s->bins[b].p > p_min && s->bins[b].nrows > 0)
            return true;
    return false;
}

/* Edit i of trial src, when why is not NULL: its mark, as the configuration shows it
 * (sdi_spgemm_config_describe; "wb=on" removes " wb=off"). */
static void edit_mark(sg_edit *why, int i, int src, const char *fmt, ...) SDI_PRINTF(4, 5);
static void edit_mark(sg_edit *why, int i, int src, const char *fmt, ...)
{
    if (why == NULL)
        return;
    why[i].src = src;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why[i].mark, sizeof why[i].mark, fmt, ap);
    va_end(ap);
}

/* Group hash tables above 2^SG_EDIT_GH slots go to CTA tables in the edits below. */
#define SG_EDIT_GH 10
#define SG_MAX_EDITS 4

/* The winner's edits, measured after the sweeps (each one candidate; their slots kept from
 * the refinement when the budget allows, else past it, like the full-optimisation build):
 * - the warp per B row the other way, when the winner has CTA rows (CTA hash, CTA or
 *   global stripes: the kinds whose product rounds may take it). It pays on long, even B
 *   rows and costs on power-law rows (H200, `sparseditto bench --set quick,paper60 --ops
 *   spgemm` with SPARSEDITTO_SG_WARP_BROW=0 and without: Belcastro_human_gene1 465 -> 420 ms
 *   with it, powerlaw 3.45 -> 3.97 ms, wiki-Vote 246 -> 264 us), and no one threshold told
 *   them apart in the kernel. Not under SPARSEDITTO_SG_WARP_BROW=0, which compiles every
 *   unit without the path.
 * - smaller hash tables, when the winner has hash rows: load 100 and group tables at most
 *   2^SG_EDIT_GH slots (larger ones a CTA's). A table holds a row's upper bound (its
 *   products, or its span), but only its distinct columns fill it, so where products
 *   repeat columns load 50 leaves tables half empty; and a group table of 2^12 slots takes
 *   32 KB for one warp, where a CTA table of the same size serves eight. On the H200
 *   (`sparseditto profile --no-vendor --op spgemm` of the best plans without this edit):
 *   the Janna_CoupCons3D twin's main kernel runs at 37 % occupancy with CTA tables of 2^13
 *   slots for rows of ~2,900 products and ~1,900
 *   distinct columns (this edit: 2^12); the af_shell10 twin's 1.5 M rows sit in 2^12 group
 *   tables, one CTA of 7 warps per SM (this edit: CTA tables of 2^11). Capacity stays at
 *   the bound, so every row still fits. Large products never reach the sweeps that vary
 *   load and table kinds.
 * - group tables capped alone, at the winner's load, when it has group tables above
 *   2^SG_EDIT_GH slots (the same occupancy, tables half full at most).
 * - CTA teams for the longest rows (cta_u, sdi_sg_cta_threshold), when the winner leaves
 *   rows above the threshold to lane groups and those rows fit in one wave of CTAs. On
 *   small products each row is a chain of dependent loads: on the H200 USAir97's 302 rows
 *   of up to 3,395 products in one warp each take 64 us in the numeric kernel (39 CTAs on
 *   132 SMs), Si2's 769 rows 56 us (Nsight Compute: `sparseditto profile USAir97.mtx.gz
 *   --op spgemm --no-vendor`).
 * why (may be NULL) receives, for the record, each edit's source (the winner's trial) and
 * mark. */
static int winner_edits(const sg_tuner *t, sdi_spgemm_config *out, sg_edit *why)
{
    const sdi_tune_result *r = t->r;
    if (r->ours_trial < 0 || r->best.kind != SDI_IMPL_SPGEMM || r->best.sg_exec == NULL)
        return 0;
    const sdi_sg_schedule *s = sdi_spgemm_exec_schedule(r->best.sg_exec);
    if (s == NULL)
        return 0;
    int n = 0;
    const sdi_spgemm_config *w = &r->best.spgemm_cfg;
    if (sdi_config_get()->sg_warp_brow &&
        has_rows_of(s, 1u << SDI_SG_CHASH | 1u << SDI_SG_CDENSE | 1u << SDI_SG_GLOBAL, INT32_MIN)) {
        out[n] = *w;
        out[n].warp_brow = w->warp_brow < 0 ? 0 : -1;
        edit_mark(why, n++, r->ours_trial, w->warp_brow < 0 ? "wb=on" : "wb=off");
    }
    const bool big_groups = has_rows_of(s, 1u << SDI_SG_GHASH, SG_EDIT_GH);
    if (has_rows_of(s, 1u << SDI_SG_GHASH | 1u << SDI_SG_CHASH, INT32_MIN) &&
        (w->load_pct < 100 || big_groups)) {
        out[n] = *w;
        out[n].load_pct = 100;
        if (out[n].ghash_max_lcap > SG_EDIT_GH)
            out[n].ghash_max_lcap = SG_EDIT_GH;
        edit_mark(why, n++, r->ours_trial, "load=100");
    }
    if (big_groups && w->load_pct < 100) {
        out[n] = *w;
        out[n].ghash_max_lcap = SG_EDIT_GH;
        edit_mark(why, n++, r->ours_trial, "gh=%d", SG_EDIT_GH);
    }
    /* (the rows' scan only where a lane group holds a row above the smallest threshold) */
    int64_t group_umax = 0;
    for (int b = 0; b < s->nbins; b++)
        if ((s->bins[b].kind == SDI_SG_GHASH || s->bins[b].kind == SDI_SG_GDENSE) && s->bins[b].nrows > 0 &&
            s->bins[b].u_max > group_umax)
            group_umax = s->bins[b].u_max;
    if (w->cta_u == 0 && w->force_kind < 0 && group_umax > SDI_SG_CTA_MIN_U) {
        sdi_sg_limits lim;
        sdi_sg_limits_from_props(&t->ctx->props, &lim);
        const int64_t slots = (int64_t)lim.sm_count * sdi_sg_resident_ctas(&lim, w->threads, 0);
        const int32_t x = sdi_sg_cta_threshold(sdi_spgemm_operands_rowinfo(t->ops), slots);
        if (x > 0 && group_umax > x) {
            out[n] = *w;
            out[n].cta_u = x;
            edit_mark(why, n++, r->ours_trial, "cta>%d", (int)x);
        }
    }
    return n;
}

/* The iterations' share of each family: 3/5 of the budget left once `used` were tried,
 * split evenly (large products: one each). */
static void iteration_takes(const sg_tuner *t, int nf, int big, int used, int *take)
{
    int per = (t->budget - used) * 3 / 5 / (nf > 0 ? nf : 1);
    if (per < 1)
        per = 1;
    for (int i = 0; i < nf; i++)
        take[i] = big ? 1 : per;
}

/* Whether the host has cores to spare for compiling configurations that may never be
 * tried (the winner's edits and full build, ahead of knowing the winner): a batch of a
 * few candidates leaves most of a 16-core host idle while its longest unit compiles, but
 * on a host of 2 cores the guesses would queue before the candidates. */
#define SG_SPECULATE_THREADS 8
static bool speculative_ok(void)
{
    return omp_get_max_threads() >= SG_SPECULATE_THREADS;
}

/* The best so far rebuilt with full optimisation, when the candidates compile at a fast
 * level (what the search's last step measures). */
static bool full_build_of_best(const sg_tuner *t, sdi_spgemm_config *out)
{
    if (t->search_fast <= 0 || t->r->ours_trial < 0 || t->r->best.kind != SDI_IMPL_SPGEMM)
        return false;
    *out = t->r->best.spgemm_cfg;
    out->fast_compile = -1;
    return true;
}

static sd_status try_winner_edits(sg_tuner *t)
{
    sdi_spgemm_config v[SG_MAX_EDITS + 1];
    sg_edit why[SG_MAX_EDITS];
    const int n = winner_edits(t, v, why);
    if (n == 0)
        return SD_OK;
    if (t->budget < t->used + n)
        t->budget = t->used + n;
    /* The winner's full build joins the edits' batch (speculative_ok): when no edit wins,
     * the last step finds it in the memo (alone it takes 1.4-2.2 s a product on the H200's
     * host: the stage times of `sparseditto compile FILE --op spgemm`). Compiled only: the
     * same candidates run as without it. */
    int nc = n;
    if (speculative_ok() && full_build_of_best(t, &v[nc]))
        nc++;
    precompile_batch(t, v, nc);
    sd_status s = SD_OK;
    for (int i = 0; i < n && s == SD_OK; i++)
        s = try_one(t, 3, &v[i], &why[i]);
    return s;
}

/* cuSPARSE ALG1–3: measured for the report and as the vendor candidate. A variant that
 * fails for resources is recorded as such in the baseline (and counted here). */
static sd_status vendor_round(sg_tuner *t)
{
    sdi_tune_result *r = t->r;
    r->baseline = sdi_calloc(1, sizeof *r->baseline);
    if (r->baseline == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the baseline");
    sdi_baseline_options bo;
    memset(&bo, 0, sizeof bo);
    bo.aat = t->aat;
    bo.b = t->b;
    bo.brief_us = sdi_tune_brief_us(t->opt); /* as our candidates; its best is timed in full */
    bo.ref = &t->ref;                /* the one our candidates are validated against */
    double t0 = sdi_now();
    sd_status s = sdi_cusparse_baseline(t->ctx, t->a, SD_OP_SPGEMM, NULL, &bo, r->baseline);
    r->ms_baseline = (sdi_now() - t0) * 1e3;
    if (s == SD_ERR_UNSUPPORTED) {
        /* e.g. beyond 32-bit indices: cuSPARSE cannot do this product at all. */
        snprintf(r->vendor_failure, sizeof r->vendor_failure, "%.190s", sd_last_error());
        sdi_error_clear();
        sdi_free(r->baseline);
        r->baseline = NULL;
        return SD_OK;
    }
    if (s != SD_OK)
        return s;
    r->vendor_best = -1;
    size_t off = 0;
    for (int i = 0; i < r->baseline->nvariants; i++) {
        const sdi_variant_result *v = &r->baseline->v[i];
        if (v->status != SDI_VARIANT_OK) {
            if (off + 8 < sizeof r->vendor_failure)
                off += (size_t)snprintf(r->vendor_failure + off, sizeof r->vendor_failure - off,
                                        "%s%s: %s", off ? "; " : "", v->name,
                                        sdi_variant_status_name(v->status));
            continue;
        }
        /* cuSPARSE's SpGEMM algorithms are bitwise reproducible: no deterministic filter. */
        if (r->vendor_best < 0 || v->timing.mean_us < r->baseline->v[r->vendor_best].timing.mean_us)
            r->vendor_best = i;
    }
    if (r->vendor_best >= 0)
        r->vendor_failure[0] = '\0';
    return SD_OK;
}

sd_status sdi_tune_spgemm(sd_context *ctx, const sd_csr *a, const sd_csr *b, int aat,
                          const sdi_tune_options *opt, sdi_tune_result *out)
{
    sg_tuner *t = NULL;
    sd_csr at;
    memset(&at, 0, sizeof at);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        if (t != NULL) {                                                                   \
            sdi_reference_free(&t->ref);                                                   \
            if (t->ops != NULL) {                                                          \
                if (out->best.sg_ops == t->ops && !out->best.sg_owns_ops)                  \
                    sdi_impl_release(&out->best); /* it borrows the operands */            \
                sdi_spgemm_operands_destroy(t->ops);                                       \
            }                                                                              \
        }                                                                                  \
        sdi_free(t);                                                                       \
        sd_csr_free(&at);                                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    out->ours_trial = -1;
    out->vendor_best = -1;
    out->op = SD_OP_SPGEMM;
    out->k = 1;
    double t_start = sdi_now();
    t = sdi_calloc(1, sizeof *t);
    SD_CHECK_ALLOC(t, "the tuner");
    t->ctx = ctx;
    t->a = a;
    t->b = b;
    t->opt = opt;
    t->r = out;
    t->budget = opt->budget > 0 ? opt->budget : SDI_TUNE_DEFAULT_BUDGET;
    if (t->budget > SDI_TUNE_MAX_TRIALS)
        t->budget = SDI_TUNE_MAX_TRIALS;
    t->aat = aat;
    const sd_csr *bb = NULL;
    SD_TRY(sdi_spgemm_second_operand(a, b, &t->aat, &at, &bb));
    out->aat = t->aat;
    out->general_b = b != NULL;
    /* A product no device of this size can hold stops here, before any compilation. */
    SD_TRY(sdi_spgemm_output_check(a, bb, product_name(b, t->aat), &ctx->props));

    /* Analysis and ranking (the operator features describe A·A or A·Aᵀ). */
    double t0 = sdi_now();
    SD_TRY(sd_analyze(a, SD_OP_SPGEMM, &out->features));
    out->ms_analysis = (sdi_now() - t0) * 1e3;
    t0 = sdi_now();
    SD_TRY(sdi_rank(&out->features, SD_OP_SPGEMM, 1, &out->ranking));
    out->ms_rank = (sdi_now() - t0) * 1e3;

    /* Operands on the device, the row analysis, the CPU reference. */
    t0 = sdi_now();
    SD_TRY(sdi_spgemm_operands_create(ctx, a, b, t->aat, &t->ops));
    sdi_sg_summarize(sdi_spgemm_operands_rowinfo(t->ops), &t->sm);
    out->products = t->sm.u_total;
    const double t_ref = sdi_now();
    SD_TRY(sdi_reference_spgemm(a, bb, &t->ref));
    out->nnz_c = t->ref.c.nnz;
    sdi_log(1, "spgemm search: operands %.1f ms, CPU reference %.1f ms (%lld entries)",
            (t_ref - t0) * 1e3, (sdi_now() - t_ref) * 1e3, (long long)out->nnz_c);
    SD_TRY(sdi_device_calibrate(ctx));
    out->ms_measure += (sdi_now() - t0) * 1e3;

    SD_TRY(search_fast_level(&t->sm, &t->search_fast));
    int fams[NF], nf = 0;
    ranked_families(&out->ranking, &t->sm, fams, &nf);
    if (opt->deterministic) {
        sdi_spgemm_config dc[NF];
        int nd = deterministic_configs(t, dc, NF);
        for (int i = 0; i < nd; i++)
            dc[i].fast_compile = t->search_fast;
        precompile_batch(t, dc, nd);
        for (int i = 0; i < nd; i++)
            SD_TRY(try_config(t, 1, &dc[i]));
        if (nd == 0)
            snprintf(out->diagnosis, sizeof out->diagnosis,
                     "deterministic: a row has %lld products; only the tiny accumulator "
                     "(<= 32) sums without float atomics",
                     (long long)t->sm.u_max);
    } else {
        /* Round 1: every family's preset, in ranking order. The iterations' level-1 picks
         * compile in the same batch: which configurations they are does not depend on the
         * presets' times (only the order of families does), and one batch keeps the host's
         * cores busy where two in a row each wait for their longest unit. */
        sdi_spgemm_config pre[NF];
        int np = 0;
        for (int i = 0; i < nf; i++) {
            if (sdi_spgemm_config_default(fams[i], &pre[np]) == SD_OK)
                pre[np++].fast_compile = t->search_fast;
            sdi_error_clear();
        }
        /* Large products: each candidate costs seconds; the presets and a short sweep. */
        const int big = t->sm.u_total > SG_BIG_PRODUCTS;
        int take[NF] = {0};
        iteration_takes(t, nf, big, t->used + np, take);
        {
            sdi_spgemm_config *next = NULL;
            int first[NF], cnt[NF], nnext = 0;
            sd_status s = sweep_pick(t, fams, nf, 1, take, t->budget - t->used - np, pre, np,
                                     &next, first, cnt, &nnext);
            if (s == SD_OK)
                s = precompile_with(t, pre, np, next, nnext);
            sdi_free(next);
            SD_TRY(s);
        }
        for (int i = 0; i < np; i++)
            SD_TRY(try_config(t, 1, &pre[i]));
        int order[NF];
        memcpy(order, fams, sizeof order);
        order_by_time(t, order, nf);
        iteration_takes(t, nf, big, t->used, take);
        SD_TRY(sweep_families(t, 2, order, nf, 1, take, NULL, 0));
        if (big)
            SD_TRY(transfer_threads(t, fams, nf));
        /* Refinement: the two fastest families that produced a valid candidate, the first
         * with half of what is left, the second with the rest (the budget caps the sum),
         * less the slots of the winner's edits (as many as the best so far would take). The
         * edits of the best so far and its full-optimisation build compile in the
         * refinement's batch when the host has cores to spare (speculative_ok): when the
         * refinement keeps the winner, as it mostly does, the last two steps find their
         * units in the memo instead of compiling them one short batch at a time. */
        order_by_time(t, order, nf);
        sdi_spgemm_config edits[SG_MAX_EDITS + 1];
        const int nedits = winner_edits(t, edits, NULL);
        int edit_slots = nedits;
        if (edit_slots > t->budget - t->used - 1)
            edit_slots = t->budget - t->used - 1 > 0 ? t->budget - t->used - 1 : 0;
        t->budget -= edit_slots;
        int remaining = t->budget - t->used, nref = 0;
        while (nref < 2 && nref < nf && t->fam_best[order[nref]] > 0)
            nref++;
        if (remaining > 0 && !big && nref > 0) {
            take[0] = nref == 1 ? remaining : (remaining + 1) / 2;
            take[1] = remaining;
            int nspec = 0;
            if (speculative_ok()) {
                nspec = nedits;
                if (full_build_of_best(t, &edits[nspec]))
                    nspec++;
            }
            SD_TRY(sweep_families(t, 3, order, nref, 2, take, edits, nspec));
        }
        t->budget += edit_slots;
        SD_TRY(try_winner_edits(t));
        if (ctx->launch_us_mean > 0 && out->ours_trial >= 0 &&
            t->best_ours_us < 4 * ctx->launch_us_mean)
            snprintf(out->diagnosis, sizeof out->diagnosis,
                     "launch-bound (%.1f us vs %.1f us empty launch)", t->best_ours_us,
                     ctx->launch_us_mean);
    }

    /* Candidates compiled for speed of compilation: the winner is built again with full
     * optimisation and measured (validated like any candidate; the faster build stays). */
    sdi_spgemm_config full;
    if (full_build_of_best(t, &full)) {
        t->budget = t->used + 1;
        precompile_batch(t, &full, 1);
        SD_TRY(try_config(t, 4, &full));
    }
    SD_TRY(measure_winner_in_full(t));
    SD_TRY(retime_finalists(t));
    if (opt->allow_vendor || opt->measure_vendor)
        SD_TRY(vendor_round(t));
    if (out->vendor_failure[0]) {
        size_t len = strlen(out->diagnosis);
        snprintf(out->diagnosis + len, sizeof out->diagnosis - len, "%scuSPARSE failed (%s)",
                 len ? "; " : "", out->vendor_failure);
    }
    if (opt->allow_vendor && out->vendor_best >= 0) {
        const sdi_variant_result *v = &out->baseline->v[out->vendor_best];
        if (out->ours_trial < 0 || sdi_tune_vendor_wins(&out->best_t, &v->timing)) {
            sdi_impl vend;
            memset(&vend, 0, sizeof vend);
            vend.kind = SDI_IMPL_VENDOR;
            vend.op = SD_OP_SPGEMM;
            vend.k = 1;
            vend.sg_b = b;
            vend.sg_aat = t->aat;
            snprintf(vend.vendor_name, sizeof vend.vendor_name, "%s", v->name);
            sd_status s = sdi_impl_build(ctx, a, &vend, NULL, 0);
            if (s == SD_OK) {
                sdi_impl_release(&out->best);
                out->best = vend;
                out->best_t = v->timing;
                out->best_peak_bytes = sdi_impl_peak_bytes(&vend);
                out->winner_is_vendor = 1;
            } else if (out->ours_trial < 0) {
                SD_FREE_ALL;
                return s;
            } else {
                sdi_log(1, "cuSPARSE %s won but could not be instantiated: %s", v->name,
                        sd_last_error());
                sdi_error_clear();
            }
        }
    }
    if (out->ours_trial < 0 && !out->winner_is_vendor) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_VALIDATION,
                       "no SpGEMM candidate validated (%d tried: %d invalid, %d refused, %d "
                       "failed)%s%s%s",
                       out->ntrials, out->n_invalid, out->n_refused, out->n_failed,
                       opt->allow_vendor ? " and no cuSPARSE algorithm is usable" : "",
                       out->diagnosis[0] ? "; " : "", out->diagnosis);
    }
    if (!out->winner_is_vendor) {
        out->best.sg_owns_ops = 1; /* the winner keeps the operands */
        t->ops = NULL;
    }
    out->ms_total = (sdi_now() - t_start) * 1e3;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ offline */

/* The sources the offline path compiled so far: a search compiles a unit once (the memo),
 * whichever plans share it, and so does the offline path. */
typedef struct {
    char **src;
    int n, cap;
} offline_units;

static void offline_units_free(offline_units *d)
{
    for (int i = 0; i < d->n; i++)
        sdi_free(d->src[i]);
    sdi_free(d->src);
    memset(d, 0, sizeof *d);
}

static sd_status offline_compile_one(const sdi_jit_request *req, offline_units *done, double *ms,
                                     int *fresh, int *cached)
{
    const char *text = req->source != NULL ? req->source : req->template_name;
    for (int i = 0; i < done->n; i++)
        if (strcmp(done->src[i], text) == 0)
            return SD_OK;
    if (done->n == done->cap) {
        int cap = done->cap > 0 ? 2 * done->cap : 16;
        char **ns = sdi_realloc_array(done->src, (size_t)cap, sizeof *ns);
        if (ns == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the unit list");
        done->src = ns;
        done->cap = cap;
    }
    const size_t len = strlen(text) + 1;
    char *copy = sdi_malloc(len);
    if (copy == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the unit list");
    memcpy(copy, text, len);
    sdi_cubin cub;
    sd_status s = sdi_jit_compile(req, &cub);
    if (s != SD_OK) {
        sdi_free(copy);
        return s;
    }
    *ms += cub.compile_ms;
    *cached += cub.from_cache;
    sdi_cubin_free(&cub);
    done->src[done->n++] = copy;
    (*fresh)++;
    return SD_OK;
}

/* NVRTC for the units of low not compiled yet (and the scan, the first time), as
 * sdi_spgemm_exec_create would compile them: *ms sums their compile times, *fresh counts
 * the units new to this run (the scan aside), *cubins and *cached the cubins NVRTC
 * compiled and those read from the JIT cache (the scan included). */
static sd_status offline_compile(const sdi_sg_lowered *low, const char *arch, offline_units *done,
                                 double *ms, int *fresh, int *cubins, int *cached)
{
    sdi_jit_request req;
    sdi_spgemm_scan_request(&req);
    req.arch = arch;
    int scan_fresh = 0, unit_fresh = 0;
    *cached = 0;
    sd_status s = offline_compile_one(&req, done, ms, &scan_fresh, cached);
    for (int u = 0; s == SD_OK && u < low->nunits; u++) {
        sdi_spgemm_unit_request(low, u, &req);
        req.arch = arch;
        s = offline_compile_one(&req, done, ms, &unit_fresh, cached);
    }
    *fresh += unit_fresh;
    *cubins = scan_fresh + unit_fresh - *cached;
    return s;
}

sd_status sdi_tune_spgemm_offline(const sd_csr *a, const sd_csr *b, int aat,
                                  const sdi_gpu_props *gpu, int branches, int compile,
                                  sdi_tune_result *out, sdi_json *plans)
{
    sd_csr at;
    memset(&at, 0, sizeof at);
    int64_t *u = NULL;
    int32_t *lo = NULL, *hi = NULL;
    offline_units done = {0};
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sd_csr_free(&at);                                                                  \
        sdi_free(u);                                                                       \
        sdi_free(lo);                                                                      \
        sdi_free(hi);                                                                      \
        offline_units_free(&done);                                                         \
    } while (0)
    memset(out, 0, sizeof *out);
    out->ours_trial = -1;
    out->vendor_best = -1;
    out->op = SD_OP_SPGEMM;
    out->k = 1;
    out->offline_compiled = compile != 0;
    double t_start = sdi_now();
    const sd_csr *bb = NULL;
    SD_TRY(sdi_spgemm_second_operand(a, b, &aat, &at, &bb));
    out->aat = aat;
    out->general_b = b != NULL;
    SD_TRY(sdi_spgemm_output_check(a, bb, product_name(b, aat), gpu));
    double t0 = sdi_now();
    SD_TRY(sd_analyze(a, SD_OP_SPGEMM, &out->features));
    sdi_sg_rowinfo ri;
    SD_TRY(host_rowinfo(a, bb, &ri, &u, &lo, &hi));
    sdi_sg_summary sm;
    sdi_sg_summarize(&ri, &sm);
    out->products = sm.u_total;
    out->nnz_c = -1; /* not computed without a reference */
    out->ms_analysis = (sdi_now() - t0) * 1e3;
    t0 = sdi_now();
    SD_TRY(sdi_rank(&out->features, SD_OP_SPGEMM, 1, &out->ranking));
    out->ms_rank = (sdi_now() - t0) * 1e3;
    int fams[NF], nf = 0;
    ranked_families(&out->ranking, &sm, fams, &nf);
    if (branches <= 0)
        branches = 3;
    /* The candidates compiled as the search's first round would compile them. */
    int search_fast = 0;
    SD_TRY(search_fast_level(&sm, &search_fast));
    sdi_sg_limits lim;
    sdi_sg_limits_from_props(gpu, &lim);
    char arch[SDI_GPU_ARCH_TEXT];
    sdi_gpu_arch(gpu, arch);
    if (plans != NULL)
        sdi_json_begin_array(plans);
    for (int bi = 0; bi < nf && bi < branches && out->ntrials < SDI_TUNE_MAX_TRIALS; bi++) {
        sdi_impl im;
        memset(&im, 0, sizeof im);
        im.kind = SDI_IMPL_SPGEMM;
        im.op = SD_OP_SPGEMM;
        sd_status s = sdi_spgemm_config_default(fams[bi], &im.spgemm_cfg);
        im.spgemm_cfg.fast_compile = search_fast;
        sdi_trial *tr = &out->trials[out->ntrials++];
        memset(tr, 0, sizeof *tr);
        tr->round = 1;
        sdi_impl_family(&im, tr->family, sizeof tr->family);
        sdi_impl_describe(&im, tr->config, sizeof tr->config);
        double tl = sdi_now();
        sdi_sg_schedule sc;
        sdi_sg_lowered low;
        memset(&sc, 0, sizeof sc);
        memset(&low, 0, sizeof low);
        if (s == SD_OK)
            s = sdi_sg_schedule_build(&im.spgemm_cfg, &lim, &ri, &sc);
        if (s == SD_OK)
            s = sdi_spgemm_lower(&sc, &low);
        if (s == SD_OK && plans != NULL) {
            int64_t value = a->nnz * 4 + (b != NULL ? b->nnz * 4 : 0);
            int64_t meta = ((int64_t)a->rows + 1) * 8 + a->nnz * 4 +
                           (bb != a ? ((int64_t)bb->rows + 1) * 8 + bb->nnz * 4 : 0);
            sdi_plan_bounds pb;
            sdi_plan_bounds_compute(value, meta, sc.ws_bytes, SD_OP_SPGEMM, 1, a->rows, a->cols,
                                    a->nnz, gpu, &pb);
            sdi_json_begin_object(plans);
            sdi_json_key(plans, "family");
            sdi_json_string(plans, tr->family);
            sdi_json_key(plans, "config");
            sdi_json_string(plans, tr->config);
            sdi_json_key(plans, "lowering");
            sdi_sg_schedule_json(&sc, plans);
            sdi_json_key(plans, "bounds");
            sdi_plan_bounds_json(&pb, plans);
            sdi_json_end_object(plans);
        }
        double compile_ms = 0;
        int fresh = 0;
        if (s == SD_OK && compile)
            s = offline_compile(&low, arch, &done, &compile_ms, &fresh, &tr->cubins_compiled,
                                &tr->cubins_cached);
        out->cubins_compiled += tr->cubins_compiled;
        out->cubins_cached += tr->cubins_cached;
        const int nlaunch = low.nkernels, nunits = low.nunits;
        sdi_sg_lowered_free(&low);
        sdi_sg_schedule_free(&sc);
        tr->compile_ms = compile_ms;
        out->ms_synthesis += (sdi_now() - tl) * 1e3 - compile_ms;
        out->ms_compile += compile_ms;
        tr->status = s == SD_OK ? SD_ERR_NO_DEVICE : s;
        if (s != SD_OK) {
            snprintf(tr->detail, sizeof tr->detail, "%.190s", sd_last_error());
            out->n_refused += s == SD_ERR_UNSUPPORTED;
            out->n_failed += s != SD_ERR_UNSUPPORTED;
        } else {
            if (compile)
                snprintf(tr->detail, sizeof tr->detail,
                         "lowered and compiled: %d launches in %d units, %d new to this plan "
                         "(the others shared with earlier plans); not measured (no GPU)",
                         nlaunch, nunits, fresh);
            else
                snprintf(tr->detail, sizeof tr->detail,
                         "lowered: %d launches in %d units; not measured (no GPU)", nlaunch, nunits);
        }
        sdi_error_clear();
    }
    if (plans != NULL)
        sdi_json_end_array(plans);
    out->ms_total = (sdi_now() - t_start) * 1e3;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}
