/* src/plan/families/spmm_bell.c: SpMM blocked-ELL(b) on CUDA cores: BSR's kernel over a fixed width of blocks per block row (spmm_bsr.cuh). */
#include <stdio.h>
#include <string.h>

#include "spmm_shared.h"

static sd_status sweep(const sd_csr *a, int k, const sdi_spmm_stats *st, int level,
                       sdi_spmm_cfgs *l)
{
    return sdi_spmm_blocks_sweep(SDI_SPMM_BELL, a, k, st, level, l);
}

/* ------------------------------------------------------------------ the entry */

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strncmp(label, "bell", 4) == 0 ? 0 : -1;
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    return sdi_spmm_hook_defaults(t, SDI_SPMM_BELL, out);
}

static sd_status sweep_hook(const sdi_task *t, int level, sdi_plan_list *out)
{
    return sdi_spmm_hook_sweep(t, SDI_SPMM_BELL, level, out);
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "direct";
}

static bool uses_atomics(const sdi_plan *p)
{
    (void)p;
    return false;
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    int b = p->p.spmm.block;
    if (cap > 0)
        buf[0] = '\0';
    if (b != 16 && b != 32)
        return false;
    snprintf(buf, cap, "bell%d", b);
    return true;
}

const sdi_family sdi_family_spmm_bell = {
    .name = "bell",
    .op = SD_OP_SPMM,
    .id = SDI_SPMM_BELL,
    .layout = "bell",
    .decomposition = "block_rows",
    .stats = SDI_STATS_SPMM,
    .rank = rank,
    .defaults = defaults,
    .sweep = sweep_hook,
    .check = sdi_spmm_hook_check,
    .lower = sdi_spmm_hook_lower,
    .dataflow = dataflow,
    .uses_atomics = uses_atomics,
    .vo_label = vo_label,
};

const sdi_spmm_ops sdi_spmm_ops_bell = {
    .fam = &sdi_family_spmm_bell,
    .shape = sdi_spmm_blocks_shape,
    .acc = sdi_spmm_blocks_acc,
    .check = sdi_spmm_blocks_check,
    .describe = sdi_spmm_blocks_describe,
    .sweep = sweep,
    .lower = sdi_spmm_blocks_lower,
};
