/* src/plan/families/spmm_bsr.c: SpMM BSR(b) on CUDA cores: a group of lanes per block row × K tiles (spmm_bsr.cuh). */
#include <stdio.h>
#include <string.h>

#include "spmm_shared.h"

static sd_status sweep(const sd_csr *a, int k, const sdi_spmm_stats *st, int level,
                       sdi_spmm_cfgs *l)
{
    return sdi_spmm_blocks_sweep(SDI_SPMM_BSR, a, k, st, level, l);
}

/* ------------------------------------------------------------------ the entry */

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strncmp(label, "bsr", 3) == 0 ? 0 : -1;
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    return sdi_spmm_hook_defaults(t, SDI_SPMM_BSR, out);
}

static sd_status sweep_hook(const sdi_task *t, int level, sdi_plan_list *out)
{
    return sdi_spmm_hook_sweep(t, SDI_SPMM_BSR, level, out);
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
    if (!(b == 4 || b == 8 || b == 16))
        return false;
    snprintf(buf, cap, "bsr%d", b);
    return true;
}

const sdi_family sdi_family_spmm_bsr = {
    .name = "bsr",
    .op = SD_OP_SPMM,
    .id = SDI_SPMM_BSR,
    .layout = "bsr",
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

const sdi_spmm_ops sdi_spmm_ops_bsr = {
    .fam = &sdi_family_spmm_bsr,
    .shape = sdi_spmm_blocks_shape,
    .acc = sdi_spmm_blocks_acc,
    .check = sdi_spmm_blocks_check,
    .describe = sdi_spmm_blocks_describe,
    .sweep = sweep,
    .lower = sdi_spmm_blocks_lower,
};
