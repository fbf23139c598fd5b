/* src/plan/families/spmv_ell.c: SpMV ell — column-major ELL (every row padded to the
 * longest), the SELL template with one slice height and no permutation. */
#include "spmv_shared.h"

static int rank(const sdi_task *t, const char *label)
{
    if (strncmp(label, "sell", 4) != 0 || sdi_spmv_feature(t, "rho_ell") > 1.3)
        return -1;
    return 1; /* after sell, where ELL pads little */
}

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    const sdi_spmv_stats *st = t->spmv;
    sdi_spmv_default_base(SDI_SPMV_ELL, out);
    out->tpr = st->row_mean >= 64 ? 4 : 1;
    out->rpt = 1;
    out->unroll = 4;
    out->stream = sdi_spmv_working_set_exceeds_l2(st, t->gpu);
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
    sd_status s = sdi_spmv_sell_check(&sdi_family_spmv_ell, t, p, &c);
    if (s != SD_OK)
        return s;
    const sdi_spmv_stats *st = t->spmv;
    double fill = st->nnz > 0 ? (double)st->row_max * st->rows / st->nnz : 0;
    if (fill > SDI_SPMV_PAD_LIMIT && (double)st->row_max * st->rows > SDI_FMT_FILL_SLACK)
        return SDI_SPMV_BAD("ell: padding %.1f × nnz exceeds %.0f", fill, SDI_SPMV_PAD_LIMIT);
    return SD_OK;
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_ell, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    SD_TRY(sdi_spmv_sweep_stream(&sw, &d));
    SD_TRY(sdi_spmv_sweep_unroll8(&sw, &d));
    c = d;
    c.rpt = 4;
    c.tpr = 1;
    SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    return sdi_spmv_sweep_finish(&sw, out);
#undef SD_FREE_ALL
}

static sd_status source(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    return sdi_spmv_sell_source_hook(t, p, 1, out);
}

static sd_status lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    return sdi_spmv_sell_lower(&sdi_family_spmv_ell, t, p, 1, out);
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "row_reduce";
}

const sdi_family sdi_family_spmv_ell = {
    .name = "ell",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_ELL,
    .layout = "ell",
    .decomposition = "slices",
    .stats = SDI_STATS_SPMV,
    .diag = 0,
    .rank = rank,
    .defaults = defaults,
    .sweep = sweep,
    .check = check,
    .lower = lower,
    .source = source,
    .dataflow = dataflow,
    .uses_atomics = sdi_spmv_no_atomics,
    .vo_label = sdi_spmv_no_vo_label,
};
