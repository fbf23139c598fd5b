/* src/plan/families/spmv_sell.c: SpMV sell — SELL-C-σ: slices of C rows padded to their
 * longest, rows sorted by length within windows of σ, tpr lanes per row. */
#include "spmv_shared.h"

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strncmp(label, "sell", 4) == 0 ? 0 : -1;
}

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    const sdi_spmv_stats *st = t->spmv;
    sdi_spmv_default_base(SDI_SPMV_SELL, out);
    out->c = 32;
    out->sigma = st->row_cv > 0.3 ? 32 * 8 : 1;
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
    sd_status s = sdi_spmv_sell_check(&sdi_family_spmv_sell, t, p, &c);
    if (s != SD_OK)
        return s;
    if (!sdi_spmv_is_pow2(c->c) || c->c < 4 || c->c > 1024 || c->c < c->rpt)
        return SDI_SPMV_BAD("sell: C = %d is not a power of two in [max(4, rpt), 1024]", c->c);
    if (c->sigma < 1)
        return SDI_SPMV_BAD("sell: sigma %d < 1", c->sigma);
    return SD_OK;
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_sell, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    const sdi_spmv_stats *st = t->spmv;
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    SD_TRY(sdi_spmv_sweep_stream(&sw, &d));
    SD_TRY(sdi_spmv_sweep_unroll8(&sw, &d));
    const int wide = level >= 2;
    static const int cs[] = {16, 32, 64, 128, 256, 512};
    for (int i = 0; i < 6; i++) {
        if (!wide && cs[i] != 32 && cs[i] != 128)
            continue;
        for (int sorted = 0; sorted <= 1; sorted++) {
            c = d;
            c.c = cs[i];
            c.sigma = sorted ? cs[i] * 8 : 1;
            c.rpt = cs[i] >= 64 ? 4 : 1;
            SD_TRY(sdi_spmv_sweep_try(&sw, &c));
            if (st->row_mean >= 16) {
                c.tpr = st->row_mean >= 64 ? 8 : 4;
                c.rpt = 1;
                SD_TRY(sdi_spmv_sweep_try(&sw, &c));
            }
        }
    }
    return sdi_spmv_sweep_finish(&sw, out);
#undef SD_FREE_ALL
}

static sd_status source(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    return sdi_spmv_sell_source_hook(t, p, 0, out);
}

static sd_status lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    return sdi_spmv_sell_lower(&sdi_family_spmv_sell, t, p, 0, out);
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "row_reduce";
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    const int c = p->p.spmv.c;
    buf[0] = '\0';
    if (c != 16 && c != 32 && c != 512)
        return false;
    snprintf(buf, cap, "sell%d", c);
    return true;
}

const sdi_family sdi_family_spmv_sell = {
    .name = "sell",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_SELL,
    .layout = "sell",
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
    .vo_label = vo_label,
};
