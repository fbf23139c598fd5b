/* src/tune/search.c: the search loop, one for every operator. Rounds (docs/ARCHITECTURE.md
 * "The search"):
 *   1. branches: the default θ_H of the first B families in ranking order (SpGEMM: of
 *      every family);
 *   2. iterations: a small θ_H sweep of every branch, fastest branch first;
 *   3. refinement: a wide sweep of the two fastest families (large products: the fastest
 *      family's CTA-size edit, when it paid, on the other families' bests);
 * between rounds, diagnosis rules read the measurements and edit the family list through
 * the families' diag flags:
 *   launch-bound (best time < 2 × empty launch)       → add the single-launch path;
 *   imbalance (row_cv > 1 and a row-per-group winner) → add balanced schedules;
 *   padding (a padded winner with ρ > 1.3)            → add an unpadded representation;
 *   bandwidth (working set > 4 × L2, < 60 % roofline) → the wide sweep includes the
 *     streaming hints and narrow index variants of the enumerators;
 * then the winner's edits, its full-optimisation build, the finalists timed side by side
 * (each an operator's switch, sdi_search_op), cuSPARSE's variants as a candidate of their
 * own, and the winner. Every candidate is validated (check-then-time) before its time
 * counts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>

#include "agent_round.h"
#include "search.h"

#define SD_FREE_ALL ((void)0)

/* ------------------------------------------------------------------ ranking */

static void push_family(int *list, int *n, int cap, int f)
{
    for (int i = 0; i < *n; i++)
        if (list[i] == f)
            return;
    if (*n < cap)
        list[(*n)++] = f;
}

/* The operator's families serving a V_o label, by their rank key (ties in table order). */
static int label_families(const sdi_task *t, const char *label, int *list)
{
    int n = 0, key[SDI_SEARCH_MAX_FAMILIES];
    for (int i = 0; i < sdi_family_count() && n < SDI_SEARCH_MAX_FAMILIES; i++) {
        const sdi_family *f = sdi_family_at(i);
        if (f == NULL || f->op != t->op || f->rank == NULL)
            continue;
        const int k = f->rank(t, label);
        if (k < 0)
            continue;
        int j = n++;
        while (j > 0 && key[j - 1] > k) {
            key[j] = key[j - 1];
            list[j] = list[j - 1];
            j--;
        }
        key[j] = k;
        list[j] = i;
    }
    return n;
}

/* Families that lead whatever the ranking says (a synthesis alternative the structure calls
 * for) first; then, interleaved, the families of the ranked labels (the top label's first
 * two, then the first of each label, the second of each, ...), so the first branches cover
 * several representations rather than the variants of one; or, not interleaved, label after
 * label and then every family of the operator. */
int sdi_search_ranked(const sdi_task *t, const sdi_ranking *rk, bool interleave, int *fams, int cap)
{
    int per[SDI_RANK_MAX_TEMPLATES][SDI_SEARCH_MAX_FAMILIES], nper[SDI_RANK_MAX_TEMPLATES];
    const int nl = rk->n < SDI_RANK_MAX_TEMPLATES ? rk->n : SDI_RANK_MAX_TEMPLATES;
    for (int i = 0; i < nl; i++)
        nper[i] = label_families(t, rk->e[i].label, per[i]);
    int nf = 0;
    for (int i = 0; i < sdi_family_count(); i++) {
        const sdi_family *f = sdi_family_at(i);
        if (f != NULL && f->op == t->op && f->leads != NULL && f->leads(t))
            push_family(fams, &nf, cap, i);
    }
    if (interleave) {
        /* The top label is the ranking's best guess: its first two families lead. */
        for (int j = 0; nl > 0 && j < 2 && j < nper[0]; j++)
            push_family(fams, &nf, cap, per[0][j]);
        for (int round = 0; round < SDI_SEARCH_MAX_FAMILIES; round++)
            for (int i = 0; i < nl; i++)
                if (round < nper[i])
                    push_family(fams, &nf, cap, per[i][round]);
        return nf;
    }
    for (int i = 0; i < nl; i++)
        for (int j = 0; j < nper[i]; j++)
            push_family(fams, &nf, cap, per[i][j]);
    for (int i = 0; i < sdi_family_count(); i++) {
        const sdi_family *f = sdi_family_at(i);
        if (f != NULL && f->op == t->op)
            push_family(fams, &nf, cap, i);
    }
    return nf;
}

int sdi_search_branches(int budget)
{
    return budget >= 10 ? 5 + (budget > 25 ? (budget - 25) / 10 : 0) : 3;
}

/* ------------------------------------------------------------------ plans of a round */

/* Plans of family `index` at a sweep level (0 = its defaults, which may consult the task's
 * preset; a family that does not apply gives none). */
sd_status sdi_search_plans(sdi_search *s, int index, int level, sdi_plan_list *out)
{
    memset(out, 0, sizeof *out);
    const sdi_family *f = sdi_family_at(index);
    if (f == NULL)
        return SD_OK;
    if (level == 0) {
        sdi_plan p;
        sd_status st = sdi_plan_default(&s->task, index, &p);
        if (st != SD_OK) {
            if (st == SD_ERR_OUT_OF_MEMORY)
                return st;
            sdi_error_clear();
            return SD_OK;
        }
        if (s->ops_of->adjust != NULL)
            s->ops_of->adjust(s, &p);
        return sdi_plan_list_push(out, &p);
    }
    if (f->sweep == NULL)
        return SD_OK;
    sd_status st = f->sweep(&s->task, level, out);
    if (st != SD_OK) {
        sdi_plan_list_free(out);
        return st;
    }
    if (out->n > SDI_SEARCH_SWEEP_CAP)
        out->n = SDI_SEARCH_SWEEP_CAP;
    for (int i = 0; i < out->n; i++) {
        out->v[i].op = s->op;
        out->v[i].k = s->k;
        out->v[i].family = index;
        if (s->ops_of->adjust != NULL)
            s->ops_of->adjust(s, &out->v[i]);
    }
    return SD_OK;
}

/* A round's picks: up to take[i] new plans of lists[i] (at most `left` in all), none
 * already tried nor among also[0 … nalso), appended to out. */
static sd_status pick(const sdi_search *s, const sdi_plan_list *lists, int n, const int *take, int left,
                      const sdi_plan *also, int nalso, sdi_plan_list *out)
{
    for (int i = 0; i < n; i++)
        for (int j = 0, cnt = 0; j < lists[i].n && cnt < take[i] && left > 0; j++) {
            const sdi_plan *p = &lists[i].v[j];
            bool dup = !sdi_search_would_try(s, p);
            for (int q = 0; q < nalso && !dup; q++)
                dup = sdi_plan_equal(&also[q], p);
            if (dup)
                continue;
            SD_TRY(sdi_plan_list_push(out, p));
            cnt++;
            left--;
        }
    return SD_OK;
}

/* The iterations' share of each of n families: 3/5 of the budget left once `used` were
 * tried, split evenly (large products: one each). */
static void iteration_takes(const sdi_search *s, int n, int used, int *take)
{
    int per = (s->budget - used) * 3 / 5 / (n > 0 ? n : 1);
    if (per < 1)
        per = 1;
    for (int i = 0; i < n; i++)
        take[i] = s->big ? 1 : per;
}

/* Whether the host has cores to spare for compiling plans that may never be tried (the
 * winner's edits and full build, ahead of knowing the winner): a batch of a few
 * candidates leaves most of a 16-core host idle while its longest unit compiles, but on a
 * host of 2 cores the guesses would queue before the candidates. */
#define SEARCH_SPECULATE_THREADS 8
static bool speculative_ok(void)
{
    return omp_get_max_threads() >= SEARCH_SPECULATE_THREADS;
}

/* One sweep level of several families: their picks compiled in one batch first, together
 * with extra[0 … nextra) (plans a later step will try) and, when ahead > 0, the picks of
 * the next level's iterations (which plans they are does not depend on this round's
 * times, only the order of the families does), then tried family by family. One batch
 * instead of one per family: a SpGEMM unit takes seconds to compile, and a family's few
 * units alone leave most host cores idle. */
static sd_status sweep(sdi_search *s, int round, const int *fams, int n, int level, const int *take,
                       const sdi_plan *extra, int nextra, int ahead)
{
    sdi_plan_list lists[SDI_SEARCH_MAX_FAMILIES], next[SDI_SEARCH_MAX_FAMILIES], batch;
    memset(lists, 0, sizeof lists);
    memset(next, 0, sizeof next);
    memset(&batch, 0, sizeof batch);
    if (n > SDI_SEARCH_MAX_FAMILIES)
        n = SDI_SEARCH_MAX_FAMILIES;
#undef SD_FREE_ALL
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        for (int i_ = 0; i_ < n; i_++) {                                                   \
            sdi_plan_list_free(&lists[i_]);                                                \
            sdi_plan_list_free(&next[i_]);                                                 \
        }                                                                                  \
        sdi_plan_list_free(&batch);                                                        \
    } while (0)
    for (int i = 0; i < n; i++)
        SD_TRY(sdi_search_plans(s, fams[i], level, &lists[i]));
    SD_TRY(pick(s, lists, n, take, s->budget - s->used, NULL, 0, &batch));
    const int npicked = batch.n;
    if (ahead > 0) {
        int nt[SDI_SEARCH_MAX_FAMILIES];
        iteration_takes(s, n, s->used + npicked, nt);
        for (int i = 0; i < n; i++)
            SD_TRY(sdi_search_plans(s, fams[i], ahead, &next[i]));
        sdi_plan_list mine = batch; /* the picks so far are the `also` of the next ones */
        sdi_plan_list more;
        memset(&more, 0, sizeof more);
        sd_status st = pick(s, next, n, nt, s->budget - s->used - npicked, mine.v, mine.n, &more);
        for (int i = 0; st == SD_OK && i < more.n; i++)
            st = sdi_plan_list_push(&batch, &more.v[i]);
        sdi_plan_list_free(&more);
        SD_TRY(st);
    }
    for (int i = 0; i < nextra; i++)
        SD_TRY(sdi_plan_list_push(&batch, &extra[i]));
    s->ops_of->precompile(s, batch.v, batch.n);
    for (int i = 0; i < n; i++) {
        const int before = s->used;
        for (int j = 0; j < lists[i].n && s->used - before < take[i]; j++)
            SD_TRY(sdi_search_try(s, round, &lists[i].v[j], NULL, 0));
    }
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
#define SD_FREE_ALL ((void)0)
}

/* ------------------------------------------------------------------ diagnosis */

static double feature(const sd_features *f, const char *name)
{
    int i = sdi_feature_index(name);
    return i >= 0 ? f->values[i] : 0;
}

/* Appends the operator's families with diag bit `bit`: in ranking order, then table order. */
static void push_diag(const sdi_search *s, const int *fams, int nf, uint32_t bit, int *list, int *n)
{
    for (int i = 0; i < nf; i++) {
        const sdi_family *f = sdi_family_at(fams[i]);
        if (f != NULL && (f->diag & bit))
            push_family(list, n, SDI_SEARCH_MAX_FAMILIES, fams[i]);
    }
    for (int i = 0; i < sdi_family_count(); i++) {
        const sdi_family *f = sdi_family_at(i);
        if (f != NULL && f->op == (int32_t)s->op && (f->diag & bit))
            push_family(list, n, SDI_SEARCH_MAX_FAMILIES, i);
    }
}

/* Appends to list the families the measurements call for; writes the diagnosis text. */
static void diagnose(sdi_search *s, const int *fams, int nf, int *list, int *n)
{
    sdi_tune_result *r = s->r;
    if (r->ours_trial < 0)
        return;
    char *d = r->diagnosis;
    size_t cap = sizeof r->diagnosis, len = strlen(d);
    const sdi_family *best = r->best.kind == SDI_CAND_PLAN ? sdi_plan_family(&r->best.plan) : NULL;
    double cv = feature(&r->features, "row_cv");
    double launch = s->ctx->launch_us_mean;
    if (launch > 0 && s->best_ours_us < 2 * launch) {
        len += (size_t)snprintf(d + len, len < cap ? cap - len : 0,
                                "%slaunch-bound (%.1f us vs %.1f us empty launch)", len ? "; " : "",
                                s->best_ours_us, launch);
        push_diag(s, fams, nf, SDI_DIAG_FOR_LAUNCH, list, n);
    }
    if (cv > 1.0 && best != NULL && (best->diag & SDI_DIAG_ROW_GROUPS)) {
        len += (size_t)snprintf(d + len, len < cap ? cap - len : 0, "%simbalance (row_cv %.2f)",
                                len ? "; " : "", cv);
        push_diag(s, fams, nf, SDI_DIAG_FOR_IMBALANCE, list, n);
    }
    int64_t value = 0, meta = 0, work = 0;
    sdi_exe_bytes(&r->best.exe, &value, &meta, &work);
    double rho = s->a->nnz > 0 ? (double)value / (4.0 * (double)s->a->nnz) : 1.0;
    if (rho > 1.3) {
        len += (size_t)snprintf(d + len, len < cap ? cap - len : 0, "%spadding (value slots %.2f x nnz)",
                                len ? "; " : "", rho);
        push_diag(s, fams, nf, SDI_DIAG_FOR_PADDING, list, n);
    }
    double ws = (double)(value + meta + work) + 4.0 * (double)s->a->cols * s->k;
    if (ws > 4.0 * (double)s->ctx->props.l2_bytes && r->best_roofline < 0.6)
        len += (size_t)snprintf(d + len, len < cap ? cap - len : 0,
                                "%sbandwidth (%.0f %% of the streaming limit)", len ? "; " : "",
                                100 * r->best_roofline);
    (void)len;
}

/* ------------------------------------------------------------------ the rounds */

/* The winner's edits (family `edits`), measured after the sweeps (each one candidate;
 * their slots kept from the refinement when the budget allows, else past it, like the
 * full-optimisation build). */
static sd_status try_winner_edits(sdi_search *s)
{
    sdi_plan_edit e[SDI_SEARCH_MAX_EDITS];
    const int src = s->r->ours_trial;
    const int n = sdi_search_winner_edits(s, e, SDI_SEARCH_MAX_EDITS);
    if (n == 0)
        return SD_OK;
    if (s->budget < s->used + n)
        s->budget = s->used + n;
    /* The winner's full build joins the edits' batch (speculative_ok): when no edit wins,
     * the last step finds it in the memo (alone it takes 1.4-2.2 s a product on the H200's
     * host: the stage times of `sparseditto compile FILE --op spgemm`). Compiled only: the
     * same candidates run as without it. */
    sdi_plan v[SDI_SEARCH_MAX_EDITS + 1];
    for (int i = 0; i < n; i++)
        v[i] = e[i].plan;
    int nc = n;
    if (s->ops_of->full_build && speculative_ok() && s->ops_of->full_plan(s, &v[nc]))
        nc++;
    s->ops_of->precompile(s, v, nc);
    for (int i = 0; i < n; i++)
        SD_TRY(sdi_search_try(s, 3, &e[i].plan, &e[i], src));
    return SD_OK;
}

/* Large products: the fastest family's CTA-size edit, when it paid, tried on the other
 * families' bests, compiled in one batch, as refinement. */
static sd_status transfer_threads(sdi_search *s, const int *fams, int nf)
{
    int w = -1;
    for (int i = 0; i < nf; i++)
        if (s->fam_best[fams[i]] > 0 && (w < 0 || s->fam_best[fams[i]] < s->fam_best[w]))
            w = fams[i];
    if (w < 0)
        return SD_OK;
    sdi_plan v[SDI_SEARCH_MAX_FAMILIES];
    int n = s->ops_of->transfer(s, w, fams, nf, v, SDI_SEARCH_MAX_FAMILIES);
    if (n > s->budget - s->used)
        n = s->budget - s->used;
    if (n <= 0)
        return SD_OK;
    s->ops_of->precompile(s, v, n);
    for (int i = 0; i < n; i++)
        SD_TRY(sdi_search_try(s, 3, &v[i], NULL, 0));
    return SD_OK;
}

static sd_status rounds(sdi_search *s, int *fams, int *nf)
{
    const sdi_search_op *op = s->ops_of;
    int ones[SDI_SEARCH_MAX_FAMILIES], take[SDI_SEARCH_MAX_FAMILIES] = {0};
    for (int i = 0; i < SDI_SEARCH_MAX_FAMILIES; i++)
        ones[i] = 1;
    int branches = op->all_branches ? *nf : sdi_search_branches(s->budget);
    if (branches > *nf)
        branches = *nf;
    /* Round 1: each branch's default (ahead: the iterations' level-1 picks compile in the
     * same batch, one batch keeping the host's cores busy where two in a row each wait for
     * their longest unit). */
    SD_TRY(sweep(s, 1, fams, branches, 0, ones, NULL, 0, op->refine_batch ? 1 : 0));
    /* Round 2: a small sweep of every branch and of every family the diagnosis asked
     * for, fastest first. */
    int list[SDI_SEARCH_MAX_FAMILIES], n2 = 0, extra[SDI_SEARCH_MAX_FAMILIES], nextra = 0;
    if (op->diagnose_families)
        diagnose(s, fams, *nf, extra, &nextra);
    for (int b = 0; b < branches; b++)
        push_family(list, &n2, SDI_SEARCH_MAX_FAMILIES, fams[b]);
    for (int i = 0; i < nextra; i++) {
        push_family(list, &n2, SDI_SEARCH_MAX_FAMILIES, extra[i]);
        push_family(fams, nf, SDI_SEARCH_MAX_FAMILIES, extra[i]);
    }
    sdi_search_order_by_time(s, list, n2);
    iteration_takes(s, n2, s->used, take);
    SD_TRY(sweep(s, 2, list, n2, 1, take, NULL, 0, 0));
    if (op->transfer_threads && s->big)
        SD_TRY(transfer_threads(s, fams, *nf));
    /* Round 3: the wide sweep of the two fastest families that produced a valid candidate,
     * the first with half of what is left, the second with the rest (the budget caps the
     * sum), less the slots of the winner's edits (as many as the best so far would take). */
    sdi_search_order_by_time(s, list, n2);
    sdi_plan_edit edits[SDI_SEARCH_MAX_EDITS];
    const int nedits = op->winner_edits ? sdi_search_winner_edits(s, edits, SDI_SEARCH_MAX_EDITS) : 0;
    int edit_slots = nedits;
    if (edit_slots > s->budget - s->used - 1)
        edit_slots = s->budget - s->used - 1 > 0 ? s->budget - s->used - 1 : 0;
    s->budget -= edit_slots;
    int remaining = s->budget - s->used;
    if (op->refine_batch) {
        int nref = 0;
        while (nref < 2 && nref < n2 && s->fam_best[list[nref]] > 0)
            nref++;
        if (remaining > 0 && !s->big && nref > 0) {
            take[0] = nref == 1 ? remaining : (remaining + 1) / 2;
            take[1] = remaining;
            /* The edits of the best so far and its full-optimisation build compile in the
             * refinement's batch when the host has cores to spare: when the refinement keeps
             * the winner, as it mostly does, the last two steps find their units in the memo
             * instead of compiling them one short batch at a time. */
            sdi_plan spec[SDI_SEARCH_MAX_EDITS + 1];
            int nspec = 0;
            if (speculative_ok()) {
                for (int i = 0; i < nedits; i++)
                    spec[nspec++] = edits[i].plan;
                if (op->full_build && op->full_plan(s, &spec[nspec]))
                    nspec++;
            }
            SD_TRY(sweep(s, 3, list, nref, 2, take, spec, nspec, 0));
        }
    } else {
        for (int b = 0; b < n2 && b < 2 && remaining > 0; b++) {
            if (s->fam_best[list[b]] == 0)
                break;
            take[0] = b == 0 ? (remaining + 1) / 2 : remaining;
            SD_TRY(sweep(s, 3, &list[b], 1, 2, take, NULL, 0, 0));
            remaining = s->budget - s->used;
        }
    }
    s->budget += edit_slots;
    if (op->winner_edits)
        SD_TRY(try_winner_edits(s));
    if (op->launch_note && s->ctx->launch_us_mean > 0 && s->r->ours_trial >= 0 &&
        s->best_ours_us < 4 * s->ctx->launch_us_mean)
        snprintf(s->r->diagnosis, sizeof s->r->diagnosis,
                 "launch-bound (%.1f us vs %.1f us empty launch)", s->best_ours_us,
                 s->ctx->launch_us_mean);
    /* Families never tried while budget remains (coverage for odd matrices). */
    for (int i = 0; op->coverage && i < *nf && s->used < s->budget; i++)
        if (s->fam_best[fams[i]] == 0)
            SD_TRY(sweep(s, 3, &fams[i], 1, 0, ones, NULL, 0, 0));
    return SD_OK;
}

sd_status sdi_search_run(sdi_search *s)
{
    const sdi_search_op *op = s->ops_of;
    sdi_tune_result *out = s->r;
    const double t_start = sdi_now();
    if (op->prepare != NULL)
        SD_TRY(op->prepare(s));
    /* Analysis (the statistics every family hook reads, computed once) and ranking. */
    double t0 = sdi_now();
    SD_TRY(sdi_analyze(s->a, s->op, &out->features));
    s->task.op = s->op;
    s->task.k = s->k;
    s->task.a = s->a;
    s->task.gpu = &s->ctx->props;
    s->task.features = &out->features;
    if (op->stats != NULL)
        SD_TRY(op->stats(s));
    out->ms_analysis = (sdi_now() - t0) * 1e3;
    t0 = sdi_now();
    SD_TRY(sdi_rank(&out->features, s->op, s->k, &out->ranking));
    out->ms_rank = (sdi_now() - t0) * 1e3;
    /* Operands: seeded values, the CPU reference, the device's calibration. */
    t0 = sdi_now();
    SD_TRY(op->operands(s));
    out->ms_measure += (sdi_now() - t0) * 1e3;

    /* Synthesis: branches from the ranking. */
    t0 = sdi_now();
    int fams[SDI_SEARCH_MAX_FAMILIES];
    int nf = sdi_search_ranked(&s->task, &out->ranking, op->interleave, fams, SDI_SEARCH_MAX_FAMILIES);
    out->ms_synthesis += (sdi_now() - t0) * 1e3;
    if (s->opt->deterministic && op->deterministic != NULL)
        SD_TRY(op->deterministic(s));
    else
        SD_TRY(rounds(s, fams, &nf));

    /* Candidates compiled for speed of compilation: the winner is built again with full
     * optimisation and measured (validated like any candidate; the faster build stays). */
    sdi_plan full;
    if (op->full_build && op->full_plan(s, &full)) {
        s->budget = s->used + 1;
        op->precompile(s, &full, 1);
        SD_TRY(sdi_search_try(s, 4, &full, NULL, 0));
    }
    SD_TRY(sdi_search_winner_in_full(s));
    if (op->finalists)
        SD_TRY(sdi_search_finalists(s));
    /* cuSPARSE: measured for the report and as a candidate. */
    if (s->opt->allow_vendor || s->opt->measure_vendor)
        SD_TRY(op->vendor_round(s));
    /* Agent lowering / isolated re-check (agent_round.c): a no-op unless asked for. */
    if (op->dense)
        SD_TRY(sdi_tune_agent(s->ctx, s->a, s->opt, out));
    SD_TRY(sdi_search_vendor_decision(s));
    if (out->ours_trial < 0 && !out->winner_is_vendor && !out->winner_is_agent)
        return SDI_ERR(SD_ERR_VALIDATION, "no %s validated (%d tried: %d invalid, %d refused, %d failed)%s%s%s",
                       op->what, out->ntrials, out->n_invalid, out->n_refused, out->n_failed,
                       s->opt->allow_vendor ? op->vendor_none : "",
                       op->fail_diagnosis && out->diagnosis[0] ? "; " : "",
                       op->fail_diagnosis ? out->diagnosis : "");
    if (op->finish != NULL)
        op->finish(s);
    out->ms_total = (sdi_now() - t_start) * 1e3;
    return SD_OK;
}

/* ------------------------------------------------------------------ entry points */

static sd_status search(sd_context *ctx, const sd_csr *a, const sd_csr *b, int aat, sd_op op, int k,
                        const sdi_tune_options *opt, sdi_tune_result *out)
{
    memset(out, 0, sizeof *out);
    out->ours_trial = -1;
    out->vendor_best = -1;
    out->op = op;
    out->k = op == SD_OP_SPMM ? k : 1;
    if (op != SD_OP_SPMV && op != SD_OP_SPMM && op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "tune: unknown operator %d", (int)op);
    sdi_search *s = sdi_calloc(1, sizeof *s);
    SD_CHECK_ALLOC(s, "the tuner");
    s->ctx = ctx;
    s->a = a;
    s->b = b;
    s->aat = aat;
    s->op = op;
    s->k = out->k;
    s->opt = opt;
    s->r = out;
    s->ops_of = op == SD_OP_SPGEMM ? &sdi_search_op_spgemm : &sdi_search_op_dense;
    s->budget = opt->budget > 0 ? opt->budget : SDI_TUNE_DEFAULT_BUDGET;
    if (s->budget > SDI_TUNE_MAX_TRIALS)
        s->budget = SDI_TUNE_MAX_TRIALS;
    sd_status st = sdi_search_run(s);
    s->ops_of->cleanup(s);
    sdi_free(s);
    return st;
}

sd_status sdi_tune(sd_context *ctx, const sd_csr *a, sd_op op, int k, const sdi_tune_options *opt,
                   sdi_tune_result *out)
{
    /* A SpGEMM of a alone: A·A or A·Aᵀ by shape (aat −1); no product for the others. */
    return search(ctx, a, NULL, op == SD_OP_SPGEMM ? -1 : 0, op, k, opt, out);
}

sd_status sdi_tune_spgemm(sd_context *ctx, const sd_csr *a, const sd_csr *b, int aat,
                          const sdi_tune_options *opt, sdi_tune_result *out)
{
    return search(ctx, a, b, aat, SD_OP_SPGEMM, 1, opt, out);
}
