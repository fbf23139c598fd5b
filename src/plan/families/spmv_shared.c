/* src/plan/families/spmv_shared.c: what several SpMV families share (spmv_shared.h). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../../analysis/analysis.h"
#include "spmv_shared.h"

int sdi_spmv_is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

int64_t sdi_spmv_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

double sdi_spmv_feature(const sdi_task *t, const char *name)
{
    const int i = sdi_feature_index(name);
    return t->features != NULL && i >= 0 ? t->features->values[i] : 0;
}

void sdi_spmv_plan_set(sdi_plan *p, const sdi_spmv_config *c)
{
    memset(p, 0, sizeof *p);
    p->op = SD_OP_SPMV;
    p->k = 1;
    p->family = sdi_family_of(SD_OP_SPMV, c->family);
    p->row_order = SDI_ROW_ORDER_NATURAL;
    p->col_renumber = SDI_COL_RENUMBER_NONE;
    p->p.spmv = *c;
}

/* ------------------------------------------------------------------ defaults */
void sdi_spmv_default_base(int family, sdi_spmv_config *out)
{
    memset(out, 0, sizeof *out);
    out->family = family;
    out->block = 256;
}

int sdi_spmv_default_rp32(const sdi_spmv_stats *st) { return st->nnz <= INT32_MAX; }

int sdi_spmv_working_set_exceeds_l2(const sdi_spmv_stats *st, const sdi_gpu_props *gpu)
{
    double bytes = (double)st->nnz * 8 + (double)st->rows * 12 + (double)st->cols * 4;
    double l2 = gpu != NULL && gpu->l2_bytes > 0 ? (double)gpu->l2_bytes : 60e6;
    return bytes > 2 * l2;
}

int sdi_spmv_x_fits_l2(const sdi_spmv_stats *st, const sdi_gpu_props *gpu)
{
    double l2 = gpu != NULL && gpu->l2_bytes > 0 ? (double)gpu->l2_bytes : 60e6;
    return (double)st->cols * 4 <= 0.75 * l2;
}

/* ------------------------------------------------------------------ legality */
sd_status sdi_spmv_check_common(const sdi_family *fam, const sdi_task *t, const sdi_plan *p,
                                int64_t smem, const sdi_spmv_config **cp)
{
    if (t == NULL || p == NULL || t->spmv == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config check: NULL argument");
    if (p->op != SD_OP_SPMV || p->p.spmv.family != fam->id)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config: plan of op %d family %d is no %s plan",
                       p->op, p->p.spmv.family, fam->name);
    const sdi_spmv_config *c = &p->p.spmv;
    const sdi_spmv_stats *st = t->spmv;
    const sdi_gpu_props *gpu = t->gpu;
    const int max_threads = gpu != NULL && gpu->max_threads_per_cta > 0 ? gpu->max_threads_per_cta : 1024;
    const int64_t smem_max = gpu != NULL && gpu->smem_per_cta_default > 0 ? gpu->smem_per_cta_default : 49152;
    const char *fn = fam->name;
    *cp = c;
    if (c->block < 32 || c->block > max_threads || c->block % 32 != 0)
        return SDI_SPMV_BAD("%s: %d threads per CTA (a multiple of 32 up to %d)", fn, c->block,
                            max_threads);
    if (smem > smem_max)
        return SDI_SPMV_BAD("%s: %lld bytes of shared memory exceed %lld", fn, (long long)smem,
                            (long long)smem_max);
    if (c->rp32 && st->nnz > INT32_MAX)
        return SDI_SPMV_BAD("%s: 32-bit row pointers cannot hold %lld nonzeros", fn,
                            (long long)st->nnz);
    if (c->colc && c->family != SDI_SPMV_CSR_VEC)
        return SDI_SPMV_BAD("%s: 16-bit column deltas exist for csr_vec only", fn);
    if (c->xsmem && c->family != SDI_SPMV_CSR_VEC)
        return SDI_SPMV_BAD("%s: x in shared memory exists for csr_vec only", fn);
    if (c->stream < 0 || c->stream > 2)
        return SDI_SPMV_BAD("%s: stream hint %d (0 none, 1 matrix evict-first, 2 and x evict-last)",
                            fn, c->stream);
    return SD_OK;
}

int sdi_spmv_resident_ctas(int block, int64_t smem, const sdi_gpu_props *gpu)
{
    sdi_sg_limits lim; /* the residency rule SpGEMM's binning uses (threads, CTAs, shared memory) */
    sdi_sg_limits_from_props(gpu, &lim);
    return sdi_sg_resident_ctas(&lim, block, smem);
}

/* ------------------------------------------------------------------ sweeps */
sd_status sdi_spmv_sweep_try(sdi_spmv_sweep *s, const sdi_spmv_config *c)
{
    sdi_plan p;
    sdi_spmv_plan_set(&p, c);
    if (s->fam->check(s->t, &p) != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    for (int i = 0; i < s->l.n; i++)
        if (memcmp(&s->l.v[i].p.spmv, c, sizeof *c) == 0)
            return SD_OK;
    return sdi_plan_list_push(&s->l, &p);
}

sd_status sdi_spmv_sweep_stream(sdi_spmv_sweep *s, const sdi_spmv_config *d)
{
    /* The streamed matrix and x compete for L2: when x fits in ¾ of it, also try x
     * loaded evict-last (SD_STREAM 2); whether it pays is measured, not assumed. */
    if (d->stream == 1 && sdi_spmv_x_fits_l2(s->t->spmv, s->t->gpu)) {
        sdi_spmv_config c = *d;
        c.stream = 2;
        return sdi_spmv_sweep_try(s, &c);
    }
    return SD_OK;
}

sd_status sdi_spmv_sweep_unroll8(sdi_spmv_sweep *s, const sdi_spmv_config *d)
{
    /* Matrices larger than L2 whose x gathers miss L1 (columns spread beyond a warp's
     * rows) wait on L2 for every slot: 8 slots in flight per thread instead of 4
     * (`bench_stream --out DIR` on the H200: 20 % less time with columns spread over
     * ±4096, 1-4 % more with local columns), so it is measured, not assumed. */
    sd_status st = SD_OK;
    if (d->stream >= 1) {
        sdi_spmv_config c = *d;
        c.unroll = 8;
        if ((st = sdi_spmv_sweep_try(s, &c)) != SD_OK)
            return st;
        if (sdi_spmv_x_fits_l2(s->t->spmv, s->t->gpu)) {
            c.stream = 2;
            st = sdi_spmv_sweep_try(s, &c);
        }
    }
    return st;
}

sd_status sdi_spmv_sweep_finish(sdi_spmv_sweep *s, sdi_plan_list *out)
{
    sd_status st = SD_OK;
    for (int i = 0; i < s->l.n && i < SDI_SPMV_SWEEP_CAP && st == SD_OK; i++)
        st = sdi_plan_list_push(out, &s->l.v[i]);
    sdi_plan_list_free(&s->l);
    return st;
}

/* ------------------------------------------------------------------ lowering */
sd_status sdi_spmv_low_begin(const sdi_task *t, const char *tmpl, sdi_lowered *out)
{
    memset(out, 0, sizeof *out);
    out->op = SD_OP_SPMV;
    out->k = 1;
    if (t->a != NULL) {
        out->rows = t->a->rows;
        out->cols = t->a->cols;
        out->nnz = t->a->nnz;
    }
    snprintf(out->template_name, sizeof out->template_name, "%s", tmpl);
    return SD_OK;
}

sd_status sdi_spmv_low_kernels(sdi_lowered *l, const char *const *kernels, int n)
{
    for (int i = 0; i < n; i++) {
        int idx = -1;
        sd_status s = sdi_lowered_add_kernel(l, kernels[i], &idx);
        if (s != SD_OK)
            return s;
    }
    return SD_OK;
}

sd_status sdi_spmv_low_macro(sdi_lowered *l, const char *name, long long v)
{
    return sdi_lowered_add_macro(l, name, "%lld", v);
}

sd_status sdi_spmv_low_format(sdi_lowered *l, sdi_devfmt *f)
{
    sd_status s = sdi_lowered_adopt_format(l, f, NULL);
    if (s != SD_OK) {
        if (!l->has_fmt) /* not taken over */
            sdi_format_free(f);
        memset(f, 0, sizeof *f);
        return s;
    }
    memset(f, 0, sizeof *f);
    l->bytes_value = sdi_format_bytes(&l->fmt, SDI_ROLE_VALUE);
    l->bytes_meta = sdi_format_bytes(&l->fmt, SDI_ROLE_META);
    l->bytes_work = sdi_format_bytes(&l->fmt, SDI_ROLE_WORKSPACE);
    l->slots = l->fmt.slots;
    return SD_OK;
}

static int kernel_index(const sdi_lowered *l, const char *name)
{
    for (int i = 0; i < l->nkernels; i++)
        if (strcmp(l->kname[i], name) == 0)
            return i;
    return -1;
}

sd_status sdi_spmv_low_launch(sdi_lowered *l, const char *kernel, int64_t grid, int block,
                              sdi_low_launch **out)
{
    *out = NULL;
    if (grid < 1 || grid > INT_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "spmv lowering: grid of %lld CTAs for %s",
                       (long long)grid, kernel);
    int k = kernel_index(l, kernel);
    if (k < 0) {
        sd_status s = sdi_lowered_add_kernel(l, kernel, &k);
        if (s != SD_OK)
            return s;
    }
    if (l->nlaunches >= SDI_LOW_MAX_LAUNCHES || k < 0)
        return SDI_ERR(SD_ERR_INTERNAL, "spmv lowering: launch %d of %s", l->nlaunches, kernel);
    sdi_low_launch *ln = &l->launch[l->nlaunches++];
    memset(ln, 0, sizeof *ln);
    ln->kernel = k;
    ln->grid[0] = (unsigned)grid;
    ln->grid[1] = ln->grid[2] = 1;
    ln->block[0] = (unsigned)block;
    ln->block[1] = ln->block[2] = 1;
    *out = ln;
    return SD_OK;
}

static sd_status next_arg(sdi_low_launch *ln, sdi_low_arg **a)
{
    if (ln->nargs >= SDI_LOW_MAX_ARGS)
        return SDI_ERR(SD_ERR_INTERNAL, "spmv lowering: more than %d arguments", SDI_LOW_MAX_ARGS);
    *a = &ln->args[ln->nargs++];
    memset(*a, 0, sizeof **a);
    return SD_OK;
}

sd_status sdi_spmv_arg_array(const sdi_lowered *l, sdi_low_launch *ln, const char *name)
{
    sdi_low_arg *a = NULL;
    sd_status s = next_arg(ln, &a);
    if (s != SD_OK)
        return s;
    const sdi_fmt_array *fa = l->has_fmt ? sdi_format_array(&l->fmt, name) : NULL;
    if (fa == NULL || fa->role == SDI_ROLE_HOST || fa->count == 0) {
        a->kind = SDI_LOW_ARG_NULL; /* absent, host-only or empty: nothing to read */
        return SD_OK;
    }
    const int idx = sdi_lowered_find_array(l, name);
    if (idx < 0)
        return SDI_ERR(SD_ERR_INTERNAL, "spmv lowering: array %s not adopted", name);
    a->kind = SDI_LOW_ARG_ARRAY;
    a->index = idx;
    return SD_OK;
}

sd_status sdi_spmv_arg(sdi_low_launch *ln, int kind, int64_t v)
{
    sdi_low_arg *a = NULL;
    sd_status s = next_arg(ln, &a);
    if (s != SD_OK)
        return s;
    a->kind = kind;
    a->value = v;
    return SD_OK;
}

void sdi_spmv_low_end(sdi_lowered *l, int64_t smem, double t0)
{
    l->smem = smem;
    l->build_ms = (sdi_now() - t0) * 1e3;
}

bool sdi_spmv_no_atomics(const sdi_plan *p)
{
    (void)p;
    return false;
}

bool sdi_spmv_no_vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    (void)p;
    if (cap > 0)
        buf[0] = '\0';
    return false;
}

/* ------------------------------------------------------------------ merge path */
int64_t sdi_spmv_merge_smem(const sdi_spmv_config *c)
{
    const int64_t nw = c->block / 32;
    return 8LL * c->block * c->ipt + 4LL * c->block + 8 * nw + 8;
}

sd_status sdi_spmv_merge_check(const sdi_family *fam, const sdi_task *t, const sdi_plan *p,
                               int single)
{
    const sdi_spmv_config *c = NULL;
    sd_status s = sdi_spmv_check_common(fam, t, p, p != NULL ? sdi_spmv_merge_smem(&p->p.spmv) : 0, &c);
    if (s != SD_OK)
        return s;
    const sdi_spmv_stats *st = t->spmv;
    const char *fn = fam->name;
    if (c->ipt < 1 || c->ipt > 64)
        return SDI_SPMV_BAD("%s: ipt %d out of [1, 64]", fn, c->ipt);
    if (c->tiles_per_cta < 0)
        return SDI_SPMV_BAD("%s: tiles per CTA %d", fn, c->tiles_per_cta);
    if (((int64_t)st->rows + st->nnz) / ((int64_t)c->block * c->ipt) + 1 > INT32_MAX)
        return SDI_SPMV_BAD("%s: too many tiles", fn);
    if (single && (int64_t)st->rows + st->nnz > SDI_SPMV_TINY_MAX_ITEMS)
        return SDI_SPMV_BAD("tiny: %lld rows + nonzeros exceed the single-CTA limit %d",
                            (long long)st->rows + st->nnz, SDI_SPMV_TINY_MAX_ITEMS);
    return SD_OK;
}

static const char *const merge_kernels[] = {"sd_spmv_merge"};

sd_status sdi_spmv_merge_source(const sdi_task *t, const sdi_plan *p, int single,
                                sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    const sdi_spmv_config *c = &p->p.spmv;
    SD_TRY(sdi_spmv_low_begin(t, "spmv_merge.cuh", out));
    SD_TRY(sdi_spmv_low_macro(out, "SD_BLOCK", c->block));
    SD_TRY(sdi_spmv_low_macro(out, "SD_IPT", c->ipt));
    SD_TRY(sdi_spmv_low_macro(out, "SD_SINGLE", single));
    SD_TRY(sdi_spmv_low_macro(out, "SD_RP32", c->rp32));
    SD_TRY(sdi_spmv_low_macro(out, "SD_STREAM", c->stream));
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_spmv_merge_source_hook(const sdi_task *t, const sdi_plan *p, int single,
                                     sdi_lowered *out)
{
    sd_status s = sdi_spmv_merge_source(t, p, single, out);
    if (s == SD_OK)
        s = sdi_spmv_low_kernels(out, merge_kernels, 1);
    if (s != SD_OK)
        sdi_lowered_free(out);
    return s;
}

sd_status sdi_spmv_merge_lower(const sdi_family *fam, const sdi_task *t, const sdi_plan *p,
                               int single, sdi_lowered *out)
{
    sdi_devfmt f;
    memset(&f, 0, sizeof f);
#define SD_FREE_ALL SDI_SPMV_LOWER_FREE
    memset(out, 0, sizeof *out);
    SD_TRY(fam->check(t, p));
    SD_TRY(sdi_spmv_merge_source(t, p, single, out));
    const sdi_spmv_config *c = &p->p.spmv;
    const sd_csr *a = t->a;
    const int sm = t->gpu != NULL && t->gpu->sm_count > 0 ? t->gpu->sm_count : 132;
    const int64_t rows = a->rows;
    const int bl = c->block;
    const double t0 = sdi_now();
    sdi_csr_opts o = {c->rp32, c->colc, c->colc_shift};
    const int64_t tile = (int64_t)bl * c->ipt;
    const int64_t ntiles = sdi_spmv_ceil_div(rows + a->nnz, tile);
    int64_t tpc = c->tiles_per_cta;
    if (single)
        tpc = ntiles > 0 ? ntiles : 1;
    else if (tpc <= 0) /* about four resident CTAs per SM: few carries to fix up */
        tpc = ntiles > 4LL * sm ? sdi_spmv_ceil_div(ntiles, 4LL * sm) : 1;
    if (tpc > INT_MAX)
        tpc = INT_MAX;
    SD_TRY(sdi_fmt_merge(a, &o, (int)tile, (int)tpc, &f));
    SD_TRY(sdi_spmv_low_format(out, &f));
    if (rows > 0) {
        sdi_low_launch *l = NULL;
        SD_TRY(sdi_spmv_low_launch(out, "sd_spmv_merge", out->fmt.mp_ctas, bl, &l));
        SD_TRY(sdi_spmv_arg_array(out, l, "rowptr"));
        SD_TRY(sdi_spmv_arg_array(out, l, "colind"));
        SD_TRY(sdi_spmv_arg_array(out, l, "vals"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_IN, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_OUT, 0));
        SD_TRY(sdi_spmv_arg_array(out, l, "tilerow"));
        SD_TRY(sdi_spmv_arg_array(out, l, "tilenz"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, out->fmt.mp_tiles));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, out->fmt.mp_tiles_per_cta));
        SD_TRY(sdi_spmv_arg_array(out, l, "carry_row"));
        SD_TRY(sdi_spmv_arg_array(out, l, "carry_val"));
        SD_TRY(sdi_spmv_arg_array(out, l, "counter"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, rows));
    }
    sdi_spmv_low_end(out, sdi_spmv_merge_smem(c), t0);
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ slices */
sd_status sdi_spmv_sell_check(const sdi_family *fam, const sdi_task *t, const sdi_plan *p,
                              const sdi_spmv_config **cp)
{
    const sdi_spmv_config *c = NULL;
    sd_status s = sdi_spmv_check_common(fam, t, p, 0, &c);
    if (s != SD_OK)
        return s;
    const char *fn = fam->name;
    *cp = c;
    if (!sdi_spmv_is_pow2(c->tpr) || c->tpr > 32)
        return SDI_SPMV_BAD("%s: tpr %d is not a power of two in [1, 32]", fn, c->tpr);
    if (c->rpt != 1 && c->rpt != 2 && c->rpt != 4)
        return SDI_SPMV_BAD("%s: rpt %d (1, 2 or 4)", fn, c->rpt);
    if (c->block % c->tpr != 0)
        return SDI_SPMV_BAD("%s: threads per CTA not a multiple of tpr", fn);
    if (c->unroll < 1 || c->unroll > 8)
        return SDI_SPMV_BAD("%s: unroll %d out of [1, 8]", fn, c->unroll);
    return SD_OK;
}

static const char *const sell_kernels[] = {"sd_spmv_sell"};

sd_status sdi_spmv_sell_source(const sdi_task *t, const sdi_plan *p, int ell, sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    const sdi_spmv_config *c = &p->p.spmv;
    SD_TRY(sdi_spmv_low_begin(t, "spmv_sell.cuh", out));
    SD_TRY(sdi_spmv_low_macro(out, "SD_BLOCK", c->block));
    SD_TRY(sdi_spmv_low_macro(out, "SD_C", ell ? 32 : c->c));
    SD_TRY(sdi_spmv_low_macro(out, "SD_TPR", c->tpr));
    SD_TRY(sdi_spmv_low_macro(out, "SD_RPT", c->rpt));
    SD_TRY(sdi_spmv_low_macro(out, "SD_PERM", !ell && c->sigma > 1));
    SD_TRY(sdi_spmv_low_macro(out, "SD_ELL", ell));
    SD_TRY(sdi_spmv_low_macro(out, "SD_UNROLL", c->unroll));
    SD_TRY(sdi_spmv_low_macro(out, "SD_STREAM", c->stream));
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_spmv_sell_source_hook(const sdi_task *t, const sdi_plan *p, int ell,
                                    sdi_lowered *out)
{
    sd_status s = sdi_spmv_sell_source(t, p, ell, out);
    if (s == SD_OK)
        s = sdi_spmv_low_kernels(out, sell_kernels, 1);
    if (s != SD_OK)
        sdi_lowered_free(out);
    return s;
}

sd_status sdi_spmv_sell_lower(const sdi_family *fam, const sdi_task *t, const sdi_plan *p,
                              int ell, sdi_lowered *out)
{
    sdi_devfmt f;
    memset(&f, 0, sizeof f);
#define SD_FREE_ALL SDI_SPMV_LOWER_FREE
    memset(out, 0, sizeof *out);
    SD_TRY(fam->check(t, p));
    SD_TRY(sdi_spmv_sell_source(t, p, ell, out));
    const sdi_spmv_config *c = &p->p.spmv;
    const sd_csr *a = t->a;
    const int64_t rows = a->rows;
    const int bl = c->block;
    const double t0 = sdi_now();
    if (ell)
        SD_TRY(sdi_fmt_ell(a, SDI_SPMV_PAD_LIMIT, &f));
    else
        SD_TRY(sdi_fmt_sell(a, c->c, c->sigma, SDI_SPMV_PAD_LIMIT, &f));
    SD_TRY(sdi_spmv_low_format(out, &f));
    if (rows > 0) {
        sdi_low_launch *l = NULL;
        SD_TRY(sdi_spmv_low_launch(out, "sd_spmv_sell",
                                   sdi_spmv_ceil_div(sdi_spmv_ceil_div(rows, c->rpt) * c->tpr, bl),
                                   bl, &l));
        SD_TRY(sdi_spmv_arg_array(out, l, "sliceptr"));
        SD_TRY(sdi_spmv_arg_array(out, l, "colind"));
        SD_TRY(sdi_spmv_arg_array(out, l, "vals"));
        SD_TRY(sdi_spmv_arg_array(out, l, "perm"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_IN, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_OUT, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, rows));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I64, ell ? out->fmt.ell_width : 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I64, ell ? out->fmt.ell_ld : 0));
    }
    sdi_spmv_low_end(out, 0, t0);
    return SD_OK;
#undef SD_FREE_ALL
}
