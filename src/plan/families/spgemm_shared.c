/* src/plan/families/spgemm_shared.c: the SpGEMM families' shared part: the common preset,
 * the sweep tables every family applies to its own preset, the round-robin enumeration over
 * the families' sweeps, legality, atomics, and the edits of a winning plan. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spgemm_shared.h"

/* ------------------------------------------------------------------ presets */
sd_status sdi_spgemm_family_defaults(int id, void (*preset)(sdi_spgemm_config *c), sdi_plan *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm config: out is NULL");
    memset(out, 0, sizeof *out);
    const int index = sdi_family_of(SD_OP_SPGEMM, id);
    if (index < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm config: unknown family %d", id);
    out->op = SD_OP_SPGEMM;
    out->k = 1;
    out->family = index;
    sdi_spgemm_config *c = &out->p.spgemm;
    c->family = id;
    c->threads = 256;
    c->ghash_max_lcap = 12;
    c->chash_max_lcap = 14;
    c->load_pct = 50;
    c->bt_gather = 1;
    c->force_kind = -1;
    preset(c);
    return SD_OK;
}

/* ------------------------------------------------------------------ sweeps */
/* Variant v of a family preset (0 = the preset) at a sweep level. Returns 0 when v is past
 * the family's sweep at this level. Small products are launch- and latency-bound: one
 * phase, one launch per stage, C at the upper bound, and many lanes per row; large ones are
 * throughput-bound: the sweep moves phases, threads and loads. */
static int family_variant(const sdi_spgemm_config *preset, bool small_edits,
                          const sdi_sg_summary *sm, int level, int v, sdi_spgemm_config *c)
{
    *c = *preset;
    const int small = sm->u_total < 4e6;
    /* Each entry edits the preset; −1 leaves a field alone. */
    struct edit {
        int threads, one, fuse, load, tiny, lanes, gh;
    };
    /* Small products: a whole warp per row, then the same with one phase up to 32 products
     * in one launch a stage (third: the search's level-1 sweep takes three entries a family
     * at the default budget). From the wide sweep's 7th place that entry wins 14 of the 58
     * paper-60 products, and a refinement one slot shorter for the winner's edits stops one
     * short of it (Schenk_IBMNA_c-38 115 -> 260 us on the H200; `sparseditto bench --set
     * paper60 --ops spgemm`). A warp of 16 lanes a row is in the wide sweep. */
    static const struct edit small_sweep[] = {
        {-1, -1, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, 0, 32, -1}, {-1, 32, 1, -1, 0, 32, -1},
        {-1, 0, 1, -1, -1, -1, -1}};
    static const struct edit big_sweep[] = {
        {-1, -1, -1, -1, -1, -1, -1}, {-1, 0, 1, -1, -1, -1, -1}, {512, -1, -1, -1, -1, -1, -1},
        {-1, 32, 1, -1, 0, 32, -1}};
    /* gh = 10 third: rows whose table needs more than 2^10 slots go to a CTA-wide table
     * instead of one warp's (on power-law products those few heavy rows in warp tables are
     * a tail of 17-49 busy SMs for 330-400 us: H200, Nsight Compute through `sparseditto
     * profile --gen powerlaw:rows=200000,deg=12,alpha=1.9,max=20000 --op spgemm`). */
    static const struct edit wide_sweep[] = {
        {-1, -1, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, 0, 32, -1}, {-1, -1, -1, -1, -1, -1, 10},
        {-1, 0, 1, -1, -1, -1, -1}, {512, -1, -1, -1, -1, -1, -1}, {128, -1, -1, -1, -1, -1, -1},
        {-1, 32, 1, -1, 0, 32, -1}, {-1, -1, -1, 35, -1, -1, -1}, {-1, -1, -1, 70, -1, -1, -1},
        {-1, 4096, 2, -1, -1, -1, -1}, {-1, -1, -1, -1, 0, 16, -1}, {-1, 0, 0, 35, -1, -1, -1},
        {512, 0, 1, -1, 0, 32, -1}, {-1, 32, 1, -1, 0, 32, 10}};
    int count;
    const struct edit *e;
    if (level <= 0) {
        count = 1;
        e = small_sweep;
    } else if (level == 1) {
        count = 4;
        e = small ? small_sweep : big_sweep;
    } else {
        count = (int)(sizeof wide_sweep / sizeof wide_sweep[0]);
        e = wide_sweep;
    }
    if (v >= count)
        return 0;
    if (small && small_edits) {
        c->one_phase_max_u = 4096; /* staging is cheap for small products */
        c->fuse = 2;
        c->out_ub = 1;
        c->bt_gather = 0; /* B = Aᵀ read through the permutation: one launch fewer */
    }
    if (e[v].threads > 0)
        c->threads = e[v].threads;
    if (e[v].one >= 0)
        c->one_phase_max_u = e[v].one;
    if (e[v].fuse >= 0)
        c->fuse = e[v].fuse;
    if (e[v].load > 0)
        c->load_pct = e[v].load;
    if (e[v].tiny >= 0)
        c->tiny_max = e[v].tiny;
    if (e[v].lanes >= 0)
        c->min_lanes = e[v].lanes;
    if (e[v].gh >= 0 && c->ghash_max_lcap > e[v].gh)
        c->ghash_max_lcap = e[v].gh; /* only lowers a cap (0 = no group tables stays 0) */
    return 1;
}

sd_status sdi_spgemm_family_sweep(const sdi_task *t, const sdi_plan *preset, bool small_edits,
                                  int level, sdi_plan_list *out)
{
#define SD_FREE_ALL (void)0
    if (t == NULL || t->sg == NULL || preset == NULL || out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm sweep: NULL argument (the task's summary)");
    const int first = out->n;
    for (int v = 0;; v++) {
        sdi_plan p = *preset;
        if (!family_variant(&preset->p.spgemm, small_edits, t->sg, level, v, &p.p.spgemm))
            break;
        int dup = 0;
        for (int q = first; q < out->n && !dup; q++)
            dup = memcmp(&out->v[q].p.spgemm, &p.p.spgemm, sizeof p.p.spgemm) == 0;
        if (dup)
            continue;
        if (sdi_spgemm_config_check(&p.p.spgemm) != SD_OK) {
            sdi_error_clear();
            continue;
        }
        SD_TRY(sdi_plan_list_push(out, &p));
    }
    return SD_OK;
#undef SD_FREE_ALL
}

/* Family f's sweep hook output (list) placed at its variants' positions: slot v of at[]
 * holds the plan of variant v, or nothing where variant v repeated an earlier one or was
 * illegal (the hook leaves those out). A family applies the small-product edits or not; of
 * the two variant sequences, the one whose kept entries are the hook's list is the
 * family's. Returns the number of variant positions. */
enum { SWEEP_MAX = 32 };
static int variant_positions(const sdi_spgemm_config *preset, const sdi_sg_summary *sm,
                             int level, const sdi_plan_list *list,
                             const sdi_spgemm_config *at[SWEEP_MAX])
{
    for (int flag = 0; flag < 2; flag++) {
        int v = 0, next = 0, ok = 1;
        sdi_spgemm_config seen[SWEEP_MAX];
        int nseen = 0;
        for (; v < SWEEP_MAX; v++) {
            sdi_spgemm_config c;
            if (!family_variant(preset, flag == 1, sm, level, v, &c))
                break;
            at[v] = NULL;
            int dup = 0;
            for (int q = 0; q < nseen && !dup; q++)
                dup = memcmp(&seen[q], &c, sizeof c) == 0;
            if (dup)
                continue;
            if (sdi_spgemm_config_check(&c) != SD_OK) {
                sdi_error_clear();
                continue;
            }
            seen[nseen++] = c;
            if (next < list->n && memcmp(&list->v[next].p.spgemm, &c, sizeof c) == 0)
                at[v] = &list->v[next++].p.spgemm;
            else
                ok = 0;
        }
        if (ok && next == list->n)
            return v;
    }
    /* a sweep this enumeration does not know: its list in order */
    for (int v = 0; v < list->n && v < SWEEP_MAX; v++)
        at[v] = &list->v[v].p.spgemm;
    return list->n < SWEEP_MAX ? list->n : SWEEP_MAX;
}

/* The families' sweeps interleaved by variant: variant v of every family in fam_mask, then
 * variant v + 1, as the search's first enumeration over the families took them. */
sd_status sdi_spgemm_enumerate(const sdi_sg_summary *sm, uint32_t fam_mask, int level, int cap,
                               sdi_spgemm_config **out, int *n)
{
    sdi_plan_list lists[SDI_SPGEMM_NFAMILIES];
    memset(lists, 0, sizeof lists);
    sdi_spgemm_config *list = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        for (int f_ = 0; f_ < SDI_SPGEMM_NFAMILIES; f_++)                                  \
            sdi_plan_list_free(&lists[f_]);                                                \
        sdi_free(list);                                                                    \
    } while (0)
    if (out == NULL || n == NULL || sm == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm enumerate: NULL argument");
    *out = NULL;
    *n = 0;
    if (cap <= 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm enumerate: cap %d", cap);
    if (fam_mask == 0)
        fam_mask = (1u << SDI_SPGEMM_NFAMILIES) - 1u;
    list = sdi_malloc_array((size_t)cap, sizeof *list);
    if (list == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for spgemm candidates");
    /* The sweep reads the summary alone. */
    static const sdi_gpu_props no_gpu;
    const sdi_task t = {.op = SD_OP_SPGEMM, .k = 1, .gpu = &no_gpu, .sg = sm};
    const sdi_spgemm_config *at[SDI_SPGEMM_NFAMILIES][SWEEP_MAX];
    int npos[SDI_SPGEMM_NFAMILIES] = {0};
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        if (!(fam_mask & (1u << f)))
            continue;
        const sdi_family *e = sdi_family_at(sdi_family_of(SD_OP_SPGEMM, f));
        if (e == NULL || e->sweep == NULL || e->defaults == NULL)
            continue;
        sdi_plan preset;
        SD_TRY(e->defaults(&t, &preset));
        SD_TRY(e->sweep(&t, level, &lists[f]));
        npos[f] = variant_positions(&preset.p.spgemm, sm, level, &lists[f], at[f]);
    }
    int count = 0;
    for (int v = 0; count < cap; v++) {
        int any = 0;
        for (int f = 0; f < SDI_SPGEMM_NFAMILIES && count < cap; f++) {
            if (v >= npos[f])
                continue;
            any = 1;
            if (at[f][v] != NULL)
                list[count++] = *at[f][v];
        }
        if (!any)
            break;
    }
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++)
        sdi_plan_list_free(&lists[f]);
    *out = list;
    *n = count;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ plan properties */
sd_status sdi_spgemm_family_check(const sdi_task *t, const sdi_plan *p)
{
    (void)t;
    if (p == NULL || p->op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm plan: not a SpGEMM plan");
    const sdi_family *e = sdi_plan_family(p);
    if (e == NULL || e->op != SD_OP_SPGEMM || e->id != p->p.spgemm.family)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm plan: family %d does not match the entry %d",
                       p->p.spgemm.family, p->family);
    return sdi_spgemm_config_check(&p->p.spgemm);
}

const char *sdi_spgemm_family_dataflow(const sdi_plan *p)
{
    /* rows up to one_phase_max_u products run one pass into staging, the others two */
    return p->p.spgemm.one_phase_max_u > 0 ? "one_phase_small" : "two_phase";
}

bool sdi_spgemm_family_uses_atomics(const sdi_plan *p)
{
    /* without a schedule: only every row forced to the tiny kind is known to sum in order
     * (sdi_sg_schedule_uses_atomics decides once the plan is scheduled) */
    return p->p.spgemm.force_kind != SDI_SG_TINY;
}

/* ------------------------------------------------------------------ the winner's edits */
/* Whether a schedule has rows of any of the kinds in mask (bits 1 << sdi_sg_kind) with
 * a size code above p_min. */
static bool has_rows_of(const sdi_sg_schedule *s, unsigned mask, int p_min)
{
    for (int b = 0; b < s->nbins; b++)
        if ((mask & (1u << s->bins[b].kind)) && s->bins[b].p > p_min && s->bins[b].nrows > 0)
            return true;
    return false;
}

/* Edit i: the winner with its mark, as the configuration shows it (sdi_spgemm_config_describe;
 * "wb=on" removes " wb=off"). */
static void edit_mark(sdi_plan_edit *out, int i, const char *fmt, ...) SDI_PRINTF(3, 4);
static void edit_mark(sdi_plan_edit *out, int i, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out[i].mark, sizeof out[i].mark, fmt, ap);
    va_end(ap);
}

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
 *   2^SDI_SG_EDIT_GH slots (larger ones a CTA's). A table holds a row's upper bound (its
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
 *   2^SDI_SG_EDIT_GH slots (the same occupancy, tables half full at most).
 * - CTA teams for the longest rows (cta_u, sdi_sg_cta_threshold), when the winner leaves
 *   rows above the threshold to lane groups and those rows fit in one wave of CTAs. On
 *   small products each row is a chain of dependent loads: on the H200 USAir97's 302 rows
 *   of up to 3,395 products in one warp each take 64 us in the numeric kernel (39 CTAs on
 *   132 SMs), Si2's 769 rows 56 us (Nsight Compute: `sparseditto profile USAir97.mtx.gz
 *   --op spgemm --no-vendor`). */
int sdi_spgemm_winner_edits(const sdi_task *t, const sdi_plan *best, const sdi_sg_schedule *s,
                            sdi_plan_edit *out, int cap)
{
    if (t == NULL || best == NULL || s == NULL || out == NULL || best->op != SD_OP_SPGEMM)
        return 0;
    int n = 0;
    const sdi_spgemm_config *w = &best->p.spgemm;
    if (n < cap && sdi_config_get()->sg_warp_brow &&
        has_rows_of(s, 1u << SDI_SG_CHASH | 1u << SDI_SG_CDENSE | 1u << SDI_SG_GLOBAL, INT32_MIN)) {
        out[n].plan = *best;
        out[n].plan.p.spgemm.warp_brow = w->warp_brow < 0 ? 0 : -1;
        edit_mark(out, n++, w->warp_brow < 0 ? "wb=on" : "wb=off");
    }
    const bool big_groups = has_rows_of(s, 1u << SDI_SG_GHASH, SDI_SG_EDIT_GH);
    if (n < cap && has_rows_of(s, 1u << SDI_SG_GHASH | 1u << SDI_SG_CHASH, INT32_MIN) &&
        (w->load_pct < 100 || big_groups)) {
        out[n].plan = *best;
        out[n].plan.p.spgemm.load_pct = 100;
        if (out[n].plan.p.spgemm.ghash_max_lcap > SDI_SG_EDIT_GH)
            out[n].plan.p.spgemm.ghash_max_lcap = SDI_SG_EDIT_GH;
        edit_mark(out, n++, "load=100");
    }
    if (n < cap && big_groups && w->load_pct < 100) {
        out[n].plan = *best;
        out[n].plan.p.spgemm.ghash_max_lcap = SDI_SG_EDIT_GH;
        edit_mark(out, n++, "gh=%d", SDI_SG_EDIT_GH);
    }
    /* (the rows' scan only where a lane group holds a row above the smallest threshold) */
    int64_t group_umax = 0;
    for (int b = 0; b < s->nbins; b++)
        if ((s->bins[b].kind == SDI_SG_GHASH || s->bins[b].kind == SDI_SG_GDENSE) && s->bins[b].nrows > 0 &&
            s->bins[b].u_max > group_umax)
            group_umax = s->bins[b].u_max;
    if (n < cap && w->cta_u == 0 && w->force_kind < 0 && group_umax > SDI_SG_CTA_MIN_U) {
        sdi_sg_limits lim;
        if (t->sg_lim != NULL)
            lim = *t->sg_lim;
        else
            sdi_sg_limits_from_props(t->gpu, &lim);
        const int64_t slots = (int64_t)lim.sm_count * sdi_sg_resident_ctas(&lim, w->threads, 0);
        const int32_t x = sdi_sg_cta_threshold(t->sg_rows, slots);
        if (x > 0 && group_umax > x) {
            out[n].plan = *best;
            out[n].plan.p.spgemm.cta_u = x;
            edit_mark(out, n++, "cta>%d", (int)x);
        }
    }
    return n;
}

int sdi_spgemm_family_edits(const sdi_task *t, const sdi_plan *best, sdi_plan_edit *out, int cap)
{
    if (t == NULL || t->sg_rows == NULL || best == NULL || best->op != SD_OP_SPGEMM)
        return 0;
    sdi_sg_limits lim;
    if (t->sg_lim != NULL)
        lim = *t->sg_lim;
    else
        sdi_sg_limits_from_props(t->gpu, &lim);
    /* the schedule the winner was built with: the same configuration, rows and limits */
    sdi_sg_schedule s;
    if (sdi_sg_schedule_build(&best->p.spgemm, &lim, t->sg_rows, &s) != SD_OK) {
        sdi_error_clear();
        return 0;
    }
    const int n = sdi_spgemm_winner_edits(t, best, &s, out, cap);
    sdi_sg_schedule_free(&s);
    return n;
}
