/* src/plan/families/spmm_csr_row.c: SpMM row-wise CSR — (sub-)warp groups of klanes × nzpar
 * lanes per row × K tiles (spmm_csr_row.cuh). */
#include <string.h>

#include "spmm_shared.h"

static void shape(int k, const sdi_spmm_stats *st, sdi_spmm_config *c)
{
    (void)k;
    c->nzpar = sdi_spmm_pick_nzpar(c->klanes, st->row_mean);
}

static sd_status check(const sdi_spmm_config *c, const char *n)
{
    return sdi_spmm_check_group(c, n);
}

static sd_status sweep(const sd_csr *a, int k, const sdi_spmm_stats *st, int level,
                       sdi_spmm_cfgs *l)
{
    (void)a;
    sdi_spmm_config base, c;
    sd_status s = sdi_spmm_config_default(SDI_SPMM_CSR_ROW, k, st, &base);
    if (s != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    s = sdi_spmm_cfgs_push(l, &base, st);
    if (s != SD_OK || level == 0)
        return s;
    const int *wl = sdi_spmm_sweep_warps(level);
    int nw = sdi_spmm_sweep_nw(level);
    /* Many waves of short rows: the default at the light cap, first after it. */
    if (sdi_spmm_light_fits(&base, st)) {
        c = base;
        c.regcap = SPMM_REGCAP_LIGHT;
        if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
            return s;
    }
    for (int w = 0; w < nw; w++)
        for (int d = -1; d <= 1; d++) {
            c = base;
            c.warps = wl[w];
            c.nzpar = d < 0 ? base.nzpar / 2 : (d > 0 ? base.nzpar * 2 : base.nzpar);
            if (c.nzpar < 1)
                continue;
            if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
                return s;
        }
    /* Coarsening traded for K tiles (more CTAs, fewer registers). */
    if (base.coarsen > 1) {
        c = base;
        c.coarsen = base.coarsen / 2;
        if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
            return s;
    }
    /* Wide K (a full warp across one row's tile): narrower tiles with 4 or 2 lane groups
     * on a row's entries, so that a row's chain of dependent loads is 4 or 2 times
     * shorter and the grid has that many more K tiles (small matrices, long rows). */
    if (base.klanes == 32 && base.nzpar == 1 && k >= 64)
        for (int nz = 4; nz >= 2; nz /= 2) {
            c = base;
            c.klanes = 32 / nz;
            c.nzpar = nz;
            c.coarsen = 1;
            if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
                return s;
        }
    if (level >= 2 && base.vec > 1) {
        c = base;
        c.vec = base.vec / 2;
        c.coarsen = base.coarsen;
        if (c.klanes * c.vec * c.coarsen < k && c.klanes < 32)
            c.klanes *= 2;
        if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
            return s;
    }
    return SD_OK;
}

static sd_status lower(sdi_lowered *l, const sd_csr *a, const sdi_spmm_config *c, int big)
{
    int threads = c->warps * 32, g = c->klanes * c->nzpar, gpc = threads / g;
    snprintf(l->template_name, sizeof l->template_name, "%s", "spmm_csr_row.cuh");
    sd_status s = sdi_spmm_common_macros(l, c, threads, big);
    sdi_spmm_macro(&s, l, "SD_WARPS", c->warps);
    sdi_spmm_macro(&s, l, "SD_KL", c->klanes);
    sdi_spmm_macro(&s, l, "SD_NZ", c->nzpar);
    sdi_spmm_macro(&s, l, "SD_V", c->vec);
    sdi_spmm_macro(&s, l, "SD_CO", c->coarsen);
    if (s == SD_OK)
        s = sdi_spmm_name_kernels(l, "csr_row", 1);
    int irp = -1, ici = -1, iva = -1; /* -1: set by sdi_spmm_csr_arrays (gcc -O3 cannot tell) */
    if (s == SD_OK)
        s = sdi_spmm_csr_arrays(l, a, c->rp64, &irp, &ici, &iva);
    if (s != SD_OK)
        return s;
    l->slots = a->nnz;
    l->atomics = 0;
    if (a->rows > 0) {
        sdi_low_launch *x = sdi_spmm_add_launch(l, 0, ((int64_t)a->rows + gpc - 1) / gpc,
                                                sdi_spmm_ktiles(c), threads);
        sdi_spmm_arg_array(x, irp);
        sdi_spmm_arg_array(x, ici);
        sdi_spmm_arg_array(x, iva);
        sdi_spmm_arg_in(x);
        sdi_spmm_arg_out(x);
        sdi_spmm_arg_i32(x, a->rows);
    }
    return SD_OK;
}

/* ------------------------------------------------------------------ the entry */

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strcmp(label, "csr") == 0 ? 1 : -1;
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    return sdi_spmm_hook_defaults(t, SDI_SPMM_CSR_ROW, out);
}

static sd_status sweep_hook(const sdi_task *t, int level, sdi_plan_list *out)
{
    return sdi_spmm_hook_sweep(t, SDI_SPMM_CSR_ROW, level, out);
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
    (void)p;
    snprintf(buf, cap, "csr");
    return true;
}

const sdi_family sdi_family_spmm_csr_row = {
    .name = "csr_row",
    .op = SD_OP_SPMM,
    .id = SDI_SPMM_CSR_ROW,
    .layout = "csr",
    .decomposition = "row_groups",
    .stats = SDI_STATS_SPMM,
    .diag = SDI_DIAG_ROW_GROUPS | SDI_DIAG_FOR_PADDING,
    .rank = rank,
    .defaults = defaults,
    .sweep = sweep_hook,
    .check = sdi_spmm_hook_check,
    .lower = sdi_spmm_hook_lower,
    .dataflow = dataflow,
    .uses_atomics = uses_atomics,
    .vo_label = vo_label,
};

const sdi_spmm_ops sdi_spmm_ops_csr_row = {
    .fam = &sdi_family_spmm_csr_row,
    .shape = shape,
    .check = check,
    .sweep = sweep,
    .lower = lower,
};
