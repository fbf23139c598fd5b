/* src/plan/families/spmv_coo.c: SpMV coo — COO entries in chunks per warp, a
 * warp-segmented reduction, float atomics where a row crosses warps (y zeroed first). */
#include "spmv_shared.h"

static const char *const kernels[] = {"sd_spmv_coo_zero", "sd_spmv_coo"};

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strcmp(label, "coo") == 0 ? 0 : -1;
}

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    sdi_spmv_default_base(SDI_SPMV_COO, out);
    out->chunk = 8;
    out->stream = sdi_spmv_working_set_exceeds_l2(t->spmv, t->gpu);
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    sdi_spmv_config c;
    default_config(t, &c);
    sdi_spmv_plan_set(out, &c);
    return SD_OK;
}

static sd_status check(const sdi_task *t, const sdi_plan *p)
{
    const sdi_spmv_config *c = NULL;
    sd_status s = sdi_spmv_check_common(&sdi_family_spmv_coo, t, p, 0, &c);
    if (s != SD_OK)
        return s;
    if (c->chunk < 1 || c->chunk > 1024)
        return SDI_SPMV_BAD("coo: chunk %d out of [1, 1024]", c->chunk);
    if (c->ipt != 0 && c->ipt != 1 && c->ipt != 2 && c->ipt != 4 && c->ipt != 8)
        return SDI_SPMV_BAD("coo: %d entries per lane and step (0, 1, 2, 4 or 8)", c->ipt);
    return SD_OK;
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_coo, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    SD_TRY(sdi_spmv_sweep_stream(&sw, &d));
    const int wide = level >= 2;
    c = d;
    c.chunk = 32;
    SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    /* Entries per lane (a scan per 32·ipt entries instead of per 32): chunks of 256 and
     * 1,024 entries per warp, as the defaults' 8 and 32 steps of 32. */
    static const int ci[][2] = {{2, 4}, {1, 8}, {8, 4}};
    for (int i = 0; i < (wide ? 3 : 2); i++) {
        c = d;
        c.chunk = ci[i][0];
        c.ipt = ci[i][1];
        SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    }
    return sdi_spmv_sweep_finish(&sw, out);
#undef SD_FREE_ALL
}

static sd_status emit(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    const sdi_spmv_config *c = &p->p.spmv;
    SD_TRY(sdi_spmv_low_begin(t, "spmv_coo.cuh", out));
    SD_TRY(sdi_spmv_low_macro(out, "SD_BLOCK", c->block));
    SD_TRY(sdi_spmv_low_macro(out, "SD_CHUNK", c->chunk));
    if (c->ipt > 1) /* entries per lane and step (absent: one, the source before it) */
        SD_TRY(sdi_spmv_low_macro(out, "SD_IPT", c->ipt));
    SD_TRY(sdi_spmv_low_macro(out, "SD_STREAM", c->stream));
    return SD_OK;
#undef SD_FREE_ALL
}

static sd_status source(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    SD_TRY(emit(t, p, out));
    SD_TRY(sdi_spmv_low_kernels(out, kernels, 2));
    return SD_OK;
#undef SD_FREE_ALL
}

static sd_status lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    sdi_devfmt f;
    memset(&f, 0, sizeof f);
#define SD_FREE_ALL SDI_SPMV_LOWER_FREE
    memset(out, 0, sizeof *out);
    SD_TRY(check(t, p));
    SD_TRY(emit(t, p, out));
    const sdi_spmv_config *c = &p->p.spmv;
    const sd_csr *a = t->a;
    const int sm = t->gpu != NULL && t->gpu->sm_count > 0 ? t->gpu->sm_count : 132;
    const int64_t rows = a->rows;
    const int bl = c->block;
    const double t0 = sdi_now();
    sdi_low_launch *l = NULL;
    SD_TRY(sdi_fmt_coo(a, &f));
    SD_TRY(sdi_spmv_low_format(out, &f));
    if (rows > 0) {
        int64_t g = sdi_spmv_ceil_div(rows, bl);
        SD_TRY(sdi_spmv_low_launch(out, "sd_spmv_coo_zero", g < 8LL * sm ? g : 8LL * sm, bl, &l));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_OUT, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, rows));
    }
    if (rows > 0 && a->nnz > 0) {
        const int64_t per_warp = 32LL * c->chunk * (c->ipt > 1 ? c->ipt : 1);
        SD_TRY(sdi_spmv_low_launch(out, "sd_spmv_coo",
                                   sdi_spmv_ceil_div(sdi_spmv_ceil_div(a->nnz, per_warp) * 32, bl),
                                   bl, &l));
        SD_TRY(sdi_spmv_arg_array(out, l, "rowind"));
        SD_TRY(sdi_spmv_arg_array(out, l, "colind"));
        SD_TRY(sdi_spmv_arg_array(out, l, "vals"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_IN, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_OUT, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I64, a->nnz));
    }
    sdi_spmv_low_end(out, 0, t0);
    return SD_OK;
#undef SD_FREE_ALL
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "atomic"; /* rows crossing warps meet in y through atomicAdd */
}

static bool uses_atomics(const sdi_plan *p)
{
    (void)p;
    return true;
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    (void)p;
    snprintf(buf, cap, "coo");
    return true;
}

const sdi_family sdi_family_spmv_coo = {
    .name = "coo",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_COO,
    .layout = "coo",
    .decomposition = "nonzero_segments",
    .stats = SDI_STATS_SPMV,
    .diag = 0,
    .rank = rank,
    .defaults = defaults,
    .sweep = sweep,
    .check = check,
    .lower = lower,
    .source = source,
    .dataflow = dataflow,
    .uses_atomics = uses_atomics,
    .vo_label = vo_label,
};
