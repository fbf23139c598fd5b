/* src/tune/search_measure.c: the search's measurement side: trying one plan (build,
 * validate, time, keep the best), the winner measured again in full, the finalists timed
 * side by side, the winner's edits, and the choice between our winner and cuSPARSE's. */
#include <stdio.h>
#include <string.h>

#include "search.h"

#define SD_FREE_ALL ((void)0)

void sdi_search_candidate(const sdi_search *s, const sdi_plan *p, sdi_candidate *c)
{
    memset(c, 0, sizeof *c);
    c->kind = SDI_CAND_PLAN;
    c->op = s->op;
    c->k = s->k;
    c->plan = *p;
    /* SpGEMM: the product, and the device operands lent (the search owns them) */
    c->sg_b = s->b;
    c->sg_aat = s->aat;
    c->sg_ops = s->sg_ops;
}

/* Whether sdi_search_try would measure p now (not tried, allowed in this mode). */
bool sdi_search_would_try(const sdi_search *s, const sdi_plan *p)
{
    for (int i = 0; i < s->ntried; i++)
        if (sdi_plan_equal(&s->tried[i], p))
            return false;
    if (!s->opt->deterministic)
        return true;
    sdi_candidate c;
    sdi_search_candidate(s, p, &c);
    return !sdi_candidate_uses_atomics(&c);
}

static const char *stage_name(int round)
{
    return round == 1 ? "branches" : round == 2 ? "iterations" : round == 3 ? "refinement" : "full-opt";
}

sd_status sdi_search_try(sdi_search *s, int round, const sdi_plan *p, const sdi_plan_edit *edit,
                         int edit_src)
{
    sdi_tune_result *r = s->r;
    if (r->ntrials >= SDI_TUNE_MAX_TRIALS || s->used >= s->budget || !sdi_search_would_try(s, p))
        return SD_OK;
    sdi_candidate cand;
    sdi_search_candidate(s, p, &cand);
    s->tried[s->ntried++] = *p;
    s->used++;
    sdi_trial *tr = &r->trials[r->ntrials++];
    memset(tr, 0, sizeof *tr);
    tr->round = round;
    if (edit != NULL) {
        tr->edit_src = edit_src + 1;
        snprintf(tr->edit, sizeof tr->edit, "%s", edit->mark);
    }
    sdi_candidate_family(&cand, tr->family, sizeof tr->family);
    sdi_candidate_describe(&cand, tr->config, sizeof tr->config);

    double t0 = sdi_now();
    sd_status st = sdi_candidate_build(s->ctx, &s->task, &cand, NULL, 0);
    r->ms_synthesis += cand.lower_ms;
    r->ms_compile += cand.compile_ms;
    tr->compile_ms = cand.compile_ms;
    if (st == SD_OK && s->opt->deterministic && sdi_candidate_uses_atomics(&cand))
        st = SDI_ERR(SD_ERR_UNSUPPORTED, "uses floating-point atomics (deterministic mode)");
    sdi_validation val;
    memset(&val, 0, sizeof val);
    if (st == SD_OK) {
        const sdi_screen sc = {
            .screen_us =
                s->best_ours_us > 0 ? sdi_tune_screen_factor(s->best_ours_us) * s->best_ours_us : 0,
            .brief_us = sdi_tune_brief_us(s->opt),
            .brief_long_us = SDI_TUNE_BRIEF_LONG_US};
        st = s->ops_of->measure(s, &cand, tr->config, &sc, &tr->t, &tr->measured, &val);
        if (st == SD_ERR_VALIDATION)
            snprintf(tr->detail, sizeof tr->detail, "%.190s",
                     val.reason[0] ? val.reason : sd_last_error());
    }
    r->ms_measure += (sdi_now() - t0) * 1e3 - cand.lower_ms - cand.compile_ms;
    tr->status = st;
    if (!s->ops_of->dense && cand.built)
        tr->peak_bytes = sdi_exe_peak_bytes(&cand.exe);
    if (st != SD_OK && tr->detail[0] == '\0')
        snprintf(tr->detail, sizeof tr->detail, "%.190s", sd_last_error());
    if (st == SD_OK) {
        r->n_valid++;
        if (r->roofline_us > 0)
            tr->roofline_frac = r->roofline_us / tr->t.mean_us;
        const int f = p->family;
        if (f >= 0 && f < SDI_SEARCH_MAX_FAMILIES) {
            if (s->fam_best[f] == 0 || tr->t.mean_us < s->fam_best[f]) {
                s->fam_best[f] = tr->t.mean_us;
                s->fam_plan[f] = *p;
            }
            if (round == 1 && s->fam_preset[f] == 0)
                s->fam_preset[f] = tr->t.mean_us;
        }
        if (r->ours_trial < 0 || tr->t.mean_us < s->best_ours_us) {
            sdi_candidate_release(&r->best);
            r->best = cand; /* the built state moves to the result */
            memset(&cand, 0, sizeof cand);
            r->best_t = tr->t;
            r->best_roofline = tr->roofline_frac;
            r->best_peak_bytes = tr->peak_bytes;
            r->ours_trial = r->ntrials - 1;
            r->ours_plan = *p;
            s->best_ours_us = tr->t.mean_us;
        }
    } else if (st == SD_ERR_VALIDATION) {
        r->n_invalid++;
    } else if (st == SD_ERR_UNSUPPORTED) {
        r->n_refused++;
    } else {
        r->n_failed++;
    }
    sdi_candidate_release(&cand);
    sdi_error_clear();
    if (s->opt->progress)
        s->opt->progress(s->opt->progress_arg, stage_name(round), tr, s->best_ours_us);
    if (s->ctx->broken)
        return SDI_ERR(SD_ERR_CUDA, "%s", s->ctx->broken_reason);
    return SD_OK;
}

/* Families ordered by their best measured time (unmeasured last, in list order). */
void sdi_search_order_by_time(sdi_search *s, int *list, int n)
{
    for (int i = 1; i < n; i++) {
        int x = list[i], j = i - 1;
        double tx = s->fam_best[x] > 0 ? s->fam_best[x] : 1e300;
        while (j >= 0 && (s->fam_best[list[j]] > 0 ? s->fam_best[list[j]] : 1e300) > tx) {
            list[j + 1] = list[j];
            j--;
        }
        list[j + 1] = x;
    }
}

/* A winner ranked by the brief protocol is measured again with the full protocol
 * (docs/ARCHITECTURE.md "Measurement"; validated again too): only that time is compared
 * with cuSPARSE, reported and cached. */
sd_status sdi_search_winner_in_full(sdi_search *s)
{
    sdi_tune_result *r = s->r;
    if (r->ours_trial < 0 || r->trials[r->ours_trial].measured != SDI_MEASURED_BRIEF)
        return SD_OK;
    sdi_trial *tr = &r->trials[r->ours_trial];
    sdi_validation val;
    memset(&val, 0, sizeof val);
    double t0 = sdi_now();
    sdi_timing full;
    sd_status st = s->ops_of->measure(s, &r->best, tr->config, NULL, &full, NULL, &val);
    r->ms_measure += (sdi_now() - t0) * 1e3;
    if (st != SD_OK)
        return st; /* it validated a moment ago: a failure now is the device's */
    tr->t = full;
    tr->measured = SDI_MEASURED_FULL;
    if (r->roofline_us > 0)
        tr->roofline_frac = r->roofline_us / full.mean_us;
    r->best_t = full;
    r->best_roofline = tr->roofline_frac;
    s->best_ours_us = full.mean_us;
    return SD_OK;
}

/* Small products: the closest candidates timed again, side by side. A small product's
 * time is mostly launches and a host round trip, and one search's timings of two close
 * candidates differ by more than their kernels do (the same build picks G51's
 * dense_stripe at 55 us in one call and hybrid at 82 us in another: `sparseditto compile
 * G51.mtx.gz --op spgemm --no-cache --json`, twice). The winner and up to
 * FINALISTS - 1 valid candidates within FINAL_WITHIN of it, each measured with the
 * full protocol in FINAL_ROUNDS interleaved rounds; the lowest sum of the rounds' means
 * wins, and its last round's timing is the one reported and compared with cuSPARSE.
 * It seldom finds a second finalist: the candidates are built at NVRTC's fast level and the
 * winner's full build runs 24-35 % faster, so few fall within FINAL_WITHIN of it (H200:
 * 25 small products 5.32x with the rounds, 5.28x with SPARSEDITTO_SG_FINALISTS=0, by
 * `sparseditto bench --ops spgemm`; rebuilding the other families' best at full
 * optimisation as competitors changes nothing either). */
#define FINAL_MAX_US 2000.0 /* winners up to 2 ms: the rounds cost ~0.1 s at most */
#define FINAL_WITHIN 1.3
#define FINALISTS 3
#define FINAL_ROUNDS 2
_Static_assert(FINAL_ROUNDS == sizeof((sdi_trial *)0)->round_mean_us / sizeof(double),
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

sd_status sdi_search_finalists(sdi_search *s)
{
    sdi_tune_result *r = s->r;
    if (r->ours_trial < 0 || !(s->best_ours_us > 0) || s->best_ours_us > FINAL_MAX_US ||
        !sdi_config_get()->sg_finalists) /* =0: the search's own winner stands (measurements, tests) */
        return SD_OK;
    int fin[FINALISTS];
    const int nfin = sdi_tune_finalists(r->trials, r->ntrials, r->ours_trial, FINAL_WITHIN, FINALISTS, fin);
    if (nfin < 2)
        return SD_OK;
    double t0 = sdi_now();
    sdi_candidate cand[FINALISTS];
    memset(cand, 0, sizeof cand);
    sdi_candidate *c[FINALISTS] = {&r->best};
    int n = 1;
    for (int k = 1; k < nfin; k++) {
        /* trials and tried are appended together (sdi_search_try): the same index */
        sdi_candidate *x = &cand[n];
        sdi_search_candidate(s, &s->tried[fin[k]], x);
        if (sdi_candidate_build(s->ctx, &s->task, x, NULL, 0) != SD_OK) {
            sdi_log(1, "finalist %s could not be built again: %s", r->trials[fin[k]].config,
                    sd_last_error());
            sdi_candidate_release(x);
            sdi_error_clear();
            if (s->ctx->broken)
                return SDI_ERR(SD_ERR_CUDA, "%s", s->ctx->broken_reason);
            continue;
        }
        fin[n] = fin[k];
        c[n++] = x;
    }
    sdi_timing last[FINALISTS];
    double sum[FINALISTS] = {0};
    sd_status st = SD_OK;
    for (int q = 0; q < FINAL_ROUNDS && st == SD_OK; q++)
        for (int k = 0; k < n && st == SD_OK; k++) {
            sdi_validation val;
            memset(&val, 0, sizeof val);
            st = s->ops_of->measure(s, c[k], r->trials[fin[k]].config, NULL, &last[k], NULL, &val);
            if (st != SD_OK)
                break; /* last[k] holds no timing: the record keeps none of it */
            sum[k] += last[k].mean_us;
            r->trials[fin[k]].round_mean_us[q] = last[k].mean_us;
        }
    r->ms_measure += (sdi_now() - t0) * 1e3;
    if (st != SD_OK) { /* each validated a moment ago: a failure now is the device's */
        for (int k = 1; k < n; k++)
            sdi_candidate_release(c[k]);
        return st;
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
        sdi_candidate_release(&r->best);
        r->best = *c[w]; /* the built state moves to the result */
        memset(c[w], 0, sizeof *c[w]);
        r->ours_trial = fin[w];
        r->ours_plan = s->tried[fin[w]];
        r->best_peak_bytes = r->trials[fin[w]].peak_bytes;
    }
    r->best_t = last[w];
    s->best_ours_us = last[w].mean_us;
    for (int k = 1; k < n; k++)
        sdi_candidate_release(c[k]);
    return SD_OK;
}

int sdi_search_winner_edits(const sdi_search *s, sdi_plan_edit *out, int cap)
{
    const sdi_tune_result *r = s->r;
    if (r->ours_trial < 0 || r->best.kind != SDI_CAND_PLAN || !r->best.built)
        return 0;
    const sdi_family *f = sdi_plan_family(&r->best.plan);
    if (f == NULL || f->edits == NULL)
        return 0;
    int n = f->edits(&s->task, &r->best.plan, out, cap);
    return n < 0 ? 0 : n > cap ? cap : n;
}

/* Whether cuSPARSE's best variant runs instead of our winner (sdi_tune_vendor_wins): the
 * fallback runs as it was timed, replayed as a graph (SpMV / SpMM, the vendor round's
 * measure_vendor_graph) only where that is no slower than cuSPARSE's own calls in either
 * time, plainly otherwise. A replay can cost more back to back than the calls it replaces
 * (GD06_Java SpMM K = 8 on the H200: 1.42x per execution, 0.94x pipelined; `sparseditto
 * compile GD06_Java.mtx.gz --op spmm -K 8 --json`), and the plain calls are the baseline
 * itself: then no task is below 1.0x in either. An adopted agent kernel already beat
 * cuSPARSE's best (its target was the faster). */
sd_status sdi_search_vendor_decision(sdi_search *s)
{
    sdi_tune_result *out = s->r;
    if (!s->opt->allow_vendor || out->vendor_best < 0 || out->winner_is_agent)
        return SD_OK;
    const sdi_variant_result *v = &out->baseline->v[out->vendor_best];
    const bool graphed = sdi_tune_vendor_replays(&out->vendor_graph_t, &v->timing);
    const sdi_timing *vt = graphed ? &out->vendor_graph_t : &v->timing;
    if (out->ours_trial >= 0 && !sdi_tune_vendor_wins(&out->best_t, vt))
        return SD_OK;
    sdi_candidate vend;
    memset(&vend, 0, sizeof vend);
    vend.kind = SDI_CAND_VENDOR;
    vend.op = s->op;
    vend.k = s->k;
    snprintf(vend.vendor_name, sizeof vend.vendor_name, "%s", v->name);
    if (s->ops_of->dense) {
        vend.vendor_plain = !graphed;
    } else {
        vend.sg_b = s->b;
        vend.sg_aat = s->aat;
    }
    sd_status st = sdi_candidate_build(s->ctx, &s->task, &vend, NULL, 0);
    if (st == SD_OK) {
        sdi_candidate_release(&out->best);
        out->best = vend;
        out->best_t = *vt;
        if (s->ops_of->dense)
            out->best_roofline = v->roofline_frac * v->timing.mean_us / vt->mean_us;
        else
            out->best_peak_bytes = sdi_exe_peak_bytes(&vend.exe);
        out->winner_is_vendor = 1;
        out->winner_vendor_graph = graphed;
    } else if (out->ours_trial < 0) {
        return st;
    } else {
        sdi_log(1, "cuSPARSE %s won but could not be instantiated: %s", v->name, sd_last_error());
        sdi_error_clear();
    }
    return SD_OK;
}

sd_status sdi_search_vendor_baseline(sdi_search *s, const float *host_in, sdi_baseline_options *bo,
                                     bool record_failures)
{
    sdi_tune_result *r = s->r;
    r->baseline = sdi_calloc(1, sizeof *r->baseline);
    if (r->baseline == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the baseline");
    bo->ref = &s->ref; /* the reference our candidates are validated against */
    bo->brief_us = sdi_tune_brief_us(s->opt); /* as our candidates; its best is timed in full */
    const double t0 = sdi_now();
    sd_status st = sdi_cusparse_baseline(s->ctx, s->a, s->op, host_in, bo, r->baseline);
    r->ms_baseline = (sdi_now() - t0) * 1e3;
    if (st != SD_OK)
        return st;
    r->vendor_best = -1;
    size_t off = 0;
    for (int i = 0; i < r->baseline->nvariants; i++) {
        const sdi_variant_result *v = &r->baseline->v[i];
        if (v->status != SDI_VARIANT_OK) {
            if (record_failures && off + 8 < sizeof r->vendor_failure)
                off += (size_t)snprintf(r->vendor_failure + off, sizeof r->vendor_failure - off,
                                        "%s%s: %s", off ? "; " : "", v->name,
                                        sdi_variant_status_name(v->status));
            continue;
        }
        if (s->opt->deterministic) {
            sdi_candidate probe;
            memset(&probe, 0, sizeof probe);
            probe.kind = SDI_CAND_VENDOR;
            probe.op = s->op;
            snprintf(probe.vendor_name, sizeof probe.vendor_name, "%s", v->name);
            if (sdi_candidate_uses_atomics(&probe))
                continue;
        }
        if (r->vendor_best < 0 || v->timing.mean_us < r->baseline->v[r->vendor_best].timing.mean_us)
            r->vendor_best = i;
    }
    if (r->vendor_best >= 0)
        r->vendor_failure[0] = '\0';
    return SD_OK;
}
