/* src/plan/families/spgemm_csr_hash.c: the SpGEMM family "csr_hash": hash tables by
 * capacity (group and CTA), two phases, a launch per bin: nsparse-like. Every family keeps
 * the CTA dense and global-stripe fallbacks, so every product completes; binning is
 * src/plan/spgemm_schedule.c, the units src/lower/spgemm_units.c. */
#include <stdio.h>
#include <string.h>

#include "../../lower/spgemm_units.h"
#include "spgemm_shared.h"

static void preset(sdi_spgemm_config *c)
{
    /* nsparse-like: hash tables by capacity, two phases, a launch per bin */
    c->tiny_max = 0;
    c->one_phase_max_u = 0;
    c->fuse = 0;
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    (void)t;
    return sdi_spgemm_family_defaults(SDI_SPGEMM_HASH, preset, out);
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
#define SD_FREE_ALL (void)0
    sdi_plan p;
    SD_TRY(defaults(t, &p));
    /* small products keep the two phases and launches per bin: the family's point */
    return sdi_spgemm_family_sweep(t, &p, false, level, out);
#undef SD_FREE_ALL
}

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return label != NULL && strcmp(label, "csr_hash") == 0 ? 0 : -1;
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    (void)p;
    snprintf(buf, cap, "csr_hash");
    return true;
}

const sdi_family sdi_family_spgemm_csr_hash = {
    .name = "csr_hash",
    .op = SD_OP_SPGEMM,
    .id = SDI_SPGEMM_HASH,
    .layout = "csr",
    .decomposition = "row_bins",
    .stats = SDI_STATS_SG_ROWS,
    .diag = 0,
    .rank = rank,
    .leads = NULL,
    .defaults = defaults,
    .sweep = sweep,
    .check = sdi_spgemm_family_check,
    .lower = sdi_spgemm_lower_plan,
    .source = NULL,
    .dataflow = sdi_spgemm_family_dataflow,
    .uses_atomics = sdi_spgemm_family_uses_atomics,
    .vo_label = vo_label,
    .edits = sdi_spgemm_family_edits,
};
