/* src/plan/families/spmv_tiny.c: SpMV tiny — one CTA, one launch: the merge path without
 * carries, for matrices a CTA consumes in a few microseconds (launch-bound ones). */
#include "spmv_shared.h"

static int rank(const sdi_task *t, const char *label)
{
    if (strcmp(label, "csr") != 0 || sdi_spmv_feature(t, "nnz") > 200000)
        return -1;
    return 0;
}

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    sdi_spmv_default_base(SDI_SPMV_TINY, out);
    out->block = 1024;
    out->ipt = 5;
    out->rp32 = sdi_spmv_default_rp32(t->spmv);
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
    return sdi_spmv_merge_check(&sdi_family_spmv_tiny, t, p, 1);
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_tiny, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    SD_TRY(sdi_spmv_sweep_stream(&sw, &d));
    const int wide = level >= 2;
    static const int bi[][2] = {{1024, 5}, {512, 10}, {256, 20}, {1024, 2}};
    for (int i = 0; i < (wide ? 4 : 2); i++) {
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
    return sdi_spmv_merge_source_hook(t, p, 1, out);
}

static sd_status lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    return sdi_spmv_merge_lower(&sdi_family_spmv_tiny, t, p, 1, out);
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "direct"; /* one CTA: every row finished and written once */
}

const sdi_family sdi_family_spmv_tiny = {
    .name = "tiny",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_TINY,
    .layout = "csr",
    .decomposition = "merge_path",
    .stats = SDI_STATS_SPMV,
    .diag = SDI_DIAG_FOR_LAUNCH,
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
