/* src/plan/families/spgemm_hybrid.c: the SpGEMM family "hybrid": every accumulator: dense
 * stripes where spans are narrow, one phase where the staging is cheap. Every family keeps
 * the CTA dense and global-stripe fallbacks, so every product completes; binning is
 * src/plan/spgemm_schedule.c, the units src/lower/spgemm_units.c. */
#include <stdio.h>
#include <string.h>

#include "../../lower/spgemm_units.h"
#include "spgemm_shared.h"

static void preset(sdi_spgemm_config *c)
{
    c->tiny_max = 32;
    c->gdense_max_lw = 11;
    c->dense_pct = 400;
    c->one_phase_max_u = 512;
    c->fuse = 1;
    c->out_ub = 1;
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    (void)t;
    return sdi_spgemm_family_defaults(SDI_SPGEMM_HYBRID, preset, out);
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
#define SD_FREE_ALL (void)0
    sdi_plan p;
    SD_TRY(defaults(t, &p));
    return sdi_spgemm_family_sweep(t, &p, true, level, out);
#undef SD_FREE_ALL
}

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return label != NULL && strcmp(label, "hybrid") == 0 ? 0 : -1;
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    (void)p;
    snprintf(buf, cap, "hybrid");
    return true;
}

const sdi_family sdi_family_spgemm_hybrid = {
    .name = "hybrid",
    .op = SD_OP_SPGEMM,
    .id = SDI_SPGEMM_HYBRID,
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
