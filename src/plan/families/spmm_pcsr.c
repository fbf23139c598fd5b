/* src/plan/families/spmm_pcsr.c: SpMM ParamSpMM — PCSR ⟨W, F, V, S⟩: rows as vectors of V
 * entries, S cutting long rows into PCSR rows of at most `bound` slots, pcsr_group threads
 * per PCSR row (spmm_pcsr.cuh). Its first choice may come from ParamSpMM's decider
 * (sdi_task.preset). */
#include <stdio.h>
#include <string.h>

#include "spmm_shared.h"

static void shape(int k, const sdi_spmm_stats *st, sdi_spmm_config *c)
{
    c->vec = 1;
    c->pcsr_group = 32;
    int f = (k + 31) / 32;
    c->coarsen = f > 4 ? 4 : (f < 1 ? 1 : sdi_spmm_next_pow2(f));
    c->klanes = 0;
    c->pcsr_v = 2;
    c->pcsr_s = st->row_cv > 1.0 ? 1 : 0;
    c->pcsr_bound = 128 * c->pcsr_v;
}

static int acc(const sdi_spmm_config *c) { return c->coarsen; }

static int ktile(const sdi_spmm_config *c) { return c->pcsr_group * c->coarsen; }

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            return SDI_ERR(SD_ERR_INVALID_ARG, __VA_ARGS__);                               \
    } while (0)

static sd_status check_mapping(const sdi_spmm_config *c, const char *n)
{
    (void)n;
    CHECK(c->vec == 1, "pcsr: B is read in scalars (vec must be 1)");
    CHECK(c->pcsr_v == 1 || c->pcsr_v == 2, "pcsr: V = %d (1 or 2)", c->pcsr_v);
    CHECK(c->pcsr_s == 0 || c->pcsr_s == 1, "pcsr: S = %d (0 or 1)", c->pcsr_s);
    CHECK(!c->pcsr_s || (c->pcsr_bound >= c->pcsr_v && c->pcsr_bound % c->pcsr_v == 0),
          "pcsr: bound %d must be a positive multiple of V", c->pcsr_bound);
    CHECK(c->pcsr_group == 4 || c->pcsr_group == 8 || c->pcsr_group == 16 || c->pcsr_group == 32,
          "pcsr: group = %d (4, 8, 16 or 32)", c->pcsr_group);
    CHECK(c->coarsen <= 8, "pcsr: F = %d (at most 8)", c->coarsen);
    return SD_OK;
}

static void describe(const sdi_spmm_config *c, const char *n, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s k=%d W=%d F=%d V=%d S=%d bound=%d group=%d", n, c->k, c->warps,
             c->coarsen, c->pcsr_v, c->pcsr_s, c->pcsr_bound, c->pcsr_group);
}

/* ParamSpMM's full space for K with the matrix's statistics. */
static sd_status full_space(int k, const sdi_spmm_stats *st, int include_subwarp,
                            sdi_spmm_cfgs *l)
{
    static const int ws[] = {1, 2, 4, 8};
    static const int fs[] = {1, 2, 4, 8};
    static const int groups[] = {32, 16, 8, 4};
    for (int gi = 0; gi < (include_subwarp ? 4 : 1); gi++) {
        int g = groups[gi];
        if (g < 32 && g / 2 >= k)
            continue; /* a narrower group still covers K */
        for (int wi = 0; wi < 4; wi++)
            for (int fi = 0; fi < 4; fi++) {
                int f = fs[fi];
                /* F beyond what K needs only idles lanes; 8 only when K > 128 */
                if (f > 1 && g * f / 2 >= k)
                    continue;
                if (f == 8 && k <= 128)
                    continue;
                for (int v = 1; v <= 2; v++)
                    for (int s = 0; s <= 1; s++) {
                        sdi_spmm_config c;
                        memset(&c, 0, sizeof c);
                        c.tmpl = SDI_SPMM_PCSR;
                        c.k = k;
                        c.warps = ws[wi];
                        c.coarsen = f;
                        c.vec = 1;
                        c.regcap = 64;
                        c.pcsr_v = v;
                        c.pcsr_s = s;
                        c.pcsr_bound = s ? 128 * v : 0;
                        c.pcsr_group = g;
                        c.rp64 = st->nnz >= ((int64_t)1 << 31);
                        sd_status e = sdi_spmm_cfgs_push(l, &c, st);
                        if (e != SD_OK)
                            return e;
                    }
            }
    }
    return SD_OK;
}

sd_status sdi_spmm_enumerate_pcsr(const sd_csr *a, int k, int include_subwarp,
                                  sdi_spmm_config **out, int *n)
{
    *out = NULL;
    *n = 0;
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    sdi_spmm_cfgs l = {0};
    sd_status s = full_space(k, &st, include_subwarp, &l);
    if (s != SD_OK) {
        sdi_spmm_cfgs_free(&l);
        return s;
    }
    *out = l.v;
    *n = l.n;
    return SD_OK;
}

static sd_status sweep(const sd_csr *a, int k, const sdi_spmm_stats *st, int level,
                       sdi_spmm_cfgs *l)
{
    (void)a;
    sdi_spmm_config base;
    sd_status s = sdi_spmm_config_default(SDI_SPMM_PCSR, k, st, &base);
    if (s != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    s = sdi_spmm_cfgs_push(l, &base, st);
    if (s != SD_OK || level == 0)
        return s;
    sdi_spmm_cfgs all = {0};
    if ((s = full_space(k, st, k < 32, &all)) != SD_OK) {
        sdi_spmm_cfgs_free(&all);
        return s;
    }
    for (int i = 0; i < all.n; i++) {
        /* The small sweep: W ∈ {2, 4, 8} and the F that covers K with the group. */
        if (level < 2) {
            const sdi_spmm_config *m = &all.v[i];
            int want = m->pcsr_group == 32
                           ? base.coarsen
                           : sdi_spmm_next_pow2((k + m->pcsr_group - 1) / m->pcsr_group);
            if (want > 8)
                want = 8;
            if (m->warps == 1 || m->coarsen != want)
                continue;
        }
        if ((s = sdi_spmm_cfgs_push(l, &all.v[i], st)) != SD_OK)
            break;
    }
    sdi_spmm_cfgs_free(&all);
    return s;
}

static sd_status lower(sdi_lowered *l, const sd_csr *a, const sdi_spmm_config *c, int big)
{
    int threads = c->warps * 32, gpb = threads / c->pcsr_group;
    sdi_pcsr p;
    sd_status s = sdi_pcsr_build(a, c->pcsr_v, c->pcsr_s, c->pcsr_bound, &p);
    if (s != SD_OK)
        return s;
#define SD_FREE_ALL sdi_pcsr_free(&p)
    if (!c->rp64 && p.slots >= INT32_MAX) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_UNSUPPORTED, "pcsr: %lld slots need 64-bit row pointers",
                       (long long)p.slots);
    }
    snprintf(l->template_name, sizeof l->template_name, "%s", "spmm_pcsr.cuh");
    s = sdi_spmm_common_macros(l, c, threads, big);
    sdi_spmm_macro(&s, l, "SD_W", c->warps);
    sdi_spmm_macro(&s, l, "SD_F", c->coarsen);
    sdi_spmm_macro(&s, l, "SD_PV", c->pcsr_v);
    sdi_spmm_macro(&s, l, "SD_PS", c->pcsr_s);
    sdi_spmm_macro(&s, l, "SD_PG", c->pcsr_group);
    SD_TRY(s);
    SD_TRY(sdi_spmm_name_kernels(l, "pcsr", 2));
    int irp = -1, ici = -1, iva = -1, itr = -1, isr = -1;
    SD_TRY(sdi_spmm_rp_array(l, "prowptr", p.rowptr, p.prows + 1, c->rp64, &irp));
    if (c->rp64) {
        l->arr[irp].owned = 1;
        p.rowptr = NULL;
    }
    s = sdi_spmm_add_array(l, "pcolidx", p.colidx, (size_t)p.slots * 4, SDI_LOW_META, 1, NULL,
                           0, &ici);
    p.colidx = NULL;
    SD_TRY(s);
    s = sdi_spmm_add_array(l, "pval", p.val, (size_t)p.slots * 4, SDI_LOW_VALUE, 1, p.src,
                           p.slots, &iva);
    p.val = NULL;
    p.src = NULL;
    SD_TRY(s);
    if (p.s) {
        s = sdi_spmm_add_array(l, "trow", p.trow, (size_t)p.prows * 4, SDI_LOW_META, 1, NULL, 0,
                               &itr);
        p.trow = NULL;
        SD_TRY(s);
    }
    if (p.nsplit > 0) {
        s = sdi_spmm_add_array(l, "split_rows", p.split_rows, (size_t)p.nsplit * 4, SDI_LOW_META,
                               1, NULL, 0, &isr);
        p.split_rows = NULL;
        SD_TRY(s);
    }
    l->slots = p.slots;
    l->long_rows = p.nsplit;
    l->chunks = p.prows;
    l->atomics = p.nsplit != 0;
    if (p.nsplit > 0) {
        int64_t n = (int64_t)p.nsplit * c->k;
        sdi_low_launch *x = sdi_spmm_add_launch(l, 1, (n + 255) / 256, 1, 256);
        sdi_spmm_arg_array(x, isr);
        sdi_spmm_arg_out(x);
        sdi_spmm_arg_i32(x, p.nsplit);
    }
    if (p.prows > 0) {
        sdi_low_launch *x = sdi_spmm_add_launch(l, 0, (p.prows + gpb - 1) / gpb,
                                                sdi_spmm_ktiles(c), threads);
        sdi_spmm_arg_array(x, irp);
        sdi_spmm_arg_array(x, ici);
        sdi_spmm_arg_array(x, iva);
        if (itr >= 0)
            sdi_spmm_arg_array(x, itr);
        else
            sdi_spmm_arg_null(x);
        sdi_spmm_arg_in(x);
        sdi_spmm_arg_out(x);
        sdi_spmm_arg_i64(x, p.prows);
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ the entry */

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strcmp(label, "csr") == 0 ? 2 : -1;
}

/* The rule's plan, which the task's preset (ParamSpMM's decider, model/) may replace. */
static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    sd_status s = sdi_spmm_hook_defaults(t, SDI_SPMM_PCSR, out);
    if (s == SD_OK && t->preset != NULL)
        s = t->preset(t, out);
    return s;
}

static sd_status sweep_hook(const sdi_task *t, int level, sdi_plan_list *out)
{
    return sdi_spmm_hook_sweep(t, SDI_SPMM_PCSR, level, out);
}

static const char *dataflow(const sdi_plan *p)
{
    return p->p.spmm.pcsr_s ? "atomic" : "direct";
}

/* Balanced rows (S) add the partials of a cut row atomically. */
static bool uses_atomics(const sdi_plan *p) { return p->p.spmm.pcsr_s != 0; }

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    (void)p;
    if (cap > 0)
        buf[0] = '\0';
    return false;
}

const sdi_family sdi_family_spmm_pcsr = {
    .name = "pcsr",
    .op = SD_OP_SPMM,
    .id = SDI_SPMM_PCSR,
    .layout = "pcsr",
    .decomposition = "pcsr_rows",
    .stats = SDI_STATS_SPMM,
    .diag = SDI_DIAG_FOR_IMBALANCE,
    .rank = rank,
    .defaults = defaults,
    .sweep = sweep_hook,
    .check = sdi_spmm_hook_check,
    .lower = sdi_spmm_hook_lower,
    .dataflow = dataflow,
    .uses_atomics = uses_atomics,
    .vo_label = vo_label,
};

const sdi_spmm_ops sdi_spmm_ops_pcsr = {
    .fam = &sdi_family_spmm_pcsr,
    .shape = shape,
    .acc = acc,
    .check_mapping = check_mapping,
    .describe = describe,
    .ktile = ktile,
    .sweep = sweep,
    .lower = lower,
};
