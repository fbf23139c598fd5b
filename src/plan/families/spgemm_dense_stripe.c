/* src/plan/families/spgemm_dense_stripe.c: the SpGEMM family "dense_stripe": dense stripes
 * first (banded / diagonal structure). Every family keeps the CTA dense and global-stripe
 * fallbacks, so every product completes; binning is src/plan/spgemm_schedule.c, the units
 * src/lower/spgemm_units.c. */
#include <stdio.h>
#include <string.h>

#include "../../lower/spgemm_units.h"
#include "spgemm_shared.h"

static void preset(sdi_spgemm_config *c)
{
    c->tiny_max = 8;
    c->gdense_max_lw = 11;
    c->dense_pct = 1600;
    c->one_phase_max_u = 0;
    c->fuse = 1;
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    (void)t;
    return sdi_spgemm_family_defaults(SDI_SPGEMM_DENSE, preset, out);
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
    return label != NULL && strcmp(label, "dense_stripe") == 0 ? 0 : -1;
}

/* Synthesis's alternative (no V_o label): first among the families when most rows have
 * narrow spans (banded / diagonal structure). */
static bool leads(const sdi_task *t)
{
    return t != NULL && t->sg != NULL && t->sg->frac_narrow > 0.5;
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    (void)p;
    if (buf != NULL && cap > 0)
        buf[0] = '\0';
    return false;
}

const sdi_family sdi_family_spgemm_dense_stripe = {
    .name = "dense_stripe",
    .op = SD_OP_SPGEMM,
    .id = SDI_SPGEMM_DENSE,
    .layout = "csr",
    .decomposition = "row_bins",
    .stats = SDI_STATS_SG_ROWS,
    .diag = 0,
    .rank = rank,
    .leads = leads,
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
