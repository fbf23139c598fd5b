/* src/plan/families/spmv_merge.c: SpMV merge — merge-path tiles over row ends and
 * nonzeros, consecutive tiles per CTA, carries fixed up by the last CTA. */
#include "spmv_shared.h"

static int rank(const sdi_task *t, const char *label)
{
    if (strcmp(label, "csr") != 0)
        return -1;
    return sdi_spmv_feature(t, "row_cv") > 1.0 ? 1 : 3;
}

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    sdi_spmv_default_base(SDI_SPMV_MERGE, out);
    out->ipt = 8;
    out->rp32 = sdi_spmv_default_rp32(t->spmv);
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
    return sdi_spmv_merge_check(&sdi_family_spmv_merge, t, p, 0);
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_merge, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    SD_TRY(sdi_spmv_sweep_stream(&sw, &d));
    const int wide = level >= 2;
    static const int bi[][2] = {{256, 4}, {256, 8}, {128, 12}, {512, 4}, {256, 12}};
    for (int i = 0; i < (wide ? 5 : 3); i++) {
        c = d;
        c.block = bi[i][0];
        c.ipt = bi[i][1];
        SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    }
    return sdi_spmv_sweep_finish(&sw, out);
#undef SD_FREE_ALL
}

static sd_status source(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    return sdi_spmv_merge_source_hook(t, p, 0, out);
}

static sd_status lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    return sdi_spmv_merge_lower(&sdi_family_spmv_merge, t, p, 0, out);
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "fixup"; /* rows cut by a tile boundary: carries fixed up by the last CTA */
}

const sdi_family sdi_family_spmv_merge = {
    .name = "merge",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_MERGE,
    .layout = "csr",
    .decomposition = "merge_path",
    .stats = SDI_STATS_SPMV,
    .diag = SDI_DIAG_FOR_IMBALANCE | SDI_DIAG_FOR_PADDING,
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
