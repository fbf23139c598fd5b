/* src/plan/families/spmm_csr_window.c: SpMM row windows — the sparse entries of up to
 * win_rows rows staged in shared memory, win_cap per round (spmm_csr_window.cuh). */
#include <stdio.h>
#include <string.h>

#include "spmm_shared.h"

static void shape(int k, const sdi_spmm_stats *st, sdi_spmm_config *c)
{
    (void)k;
    (void)st;
    int ng = c->warps * 32 / c->klanes;
    int tiles = sdi_spmm_ktiles(c);
    c->win_rows = ng / tiles >= 1 ? ng / tiles : 1;
    c->win_cap = 1024;
}

static int acc(const sdi_spmm_config *c)
{
    int ng = c->warps * 32 / (c->klanes > 0 ? c->klanes : 1);
    int tiles = sdi_spmm_ktiles(c);
    int ppg = (c->win_rows * tiles + ng - 1) / ng;
    return ppg * c->coarsen * c->vec;
}

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            return SDI_ERR(SD_ERR_INVALID_ARG, __VA_ARGS__);                               \
    } while (0)

static sd_status check(const sdi_spmm_config *c, const char *n)
{
    int tiles = sdi_spmm_ktiles(c);
    int ng = c->warps * 32 / c->klanes;
    CHECK(c->win_rows >= 1 && c->win_rows <= 1024, "%s: win_rows = %d", n, c->win_rows);
    CHECK(c->win_cap >= 32 && c->win_cap <= 8192, "%s: win_cap = %d (32..8192)", n, c->win_cap);
    int ppg = (c->win_rows * tiles + ng - 1) / ng;
    CHECK(ppg <= 4 && ppg * c->coarsen * c->vec <= 32,
          "%s: %d (row, tile) pairs per group of %d accumulators (too many registers)", n, ppg,
          c->coarsen * c->vec);
    size_t smem = (size_t)c->win_cap * 8 + ((size_t)c->win_rows + 1) * (c->rp64 ? 8 : 4);
    CHECK(smem <= 48 * 1024, "%s: %zu B of shared memory (at most 48 KiB)", n, smem);
    return SD_OK;
}

static void describe(const sdi_spmm_config *c, const char *n, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s k=%d w=%d kl=%d v=%d co=%d rows=%d cap=%d", n, c->k, c->warps,
             c->klanes, c->vec, c->coarsen, c->win_rows, c->win_cap);
}

static sd_status sweep(const sd_csr *a, int k, const sdi_spmm_stats *st, int level,
                       sdi_spmm_cfgs *l)
{
    (void)a;
    sdi_spmm_config base, c;
    sd_status s = sdi_spmm_config_default(SDI_SPMM_CSR_WINDOW, k, st, &base);
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
    static const int caps[] = {512, 2048};
    for (int w = 0; w < nw; w++)
        for (int ci = 0; ci < 2; ci++) {
            c = base;
            c.warps = wl[w];
            int ng = c.warps * 32 / c.klanes;
            int tiles = sdi_spmm_ktiles(&c);
            c.win_rows = ng / tiles >= 1 ? ng / tiles : 1;
            c.win_cap = caps[ci];
            if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
                return s;
        }
    return SD_OK;
}

static sd_status lower(sdi_lowered *l, const sd_csr *a, const sdi_spmm_config *c, int big)
{
    int threads = c->warps * 32;
    sdi_spmm_windows w;
    sd_status s = sdi_spmm_windows_build(a, c->win_rows, c->win_cap, &w);
    if (s != SD_OK)
        return s;
    snprintf(l->template_name, sizeof l->template_name, "%s", "spmm_csr_window.cuh");
    s = sdi_spmm_common_macros(l, c, threads, big);
    sdi_spmm_macro(&s, l, "SD_WARPS", c->warps);
    sdi_spmm_macro(&s, l, "SD_KL", c->klanes);
    sdi_spmm_macro(&s, l, "SD_V", c->vec);
    sdi_spmm_macro(&s, l, "SD_CO", c->coarsen);
    sdi_spmm_macro(&s, l, "SD_WR", c->win_rows);
    sdi_spmm_macro(&s, l, "SD_CAP", c->win_cap);
    if (s == SD_OK)
        s = sdi_spmm_name_kernels(l, "csr_window", 1);
    int iwp = -1, irp = -1, ici = -1, iva = -1;
    int32_t nwin = w.nwin;
    if (s == SD_OK) {
        s = sdi_spmm_add_array(l, "win_ptr", w.win_ptr, ((size_t)nwin + 1) * 4, SDI_LOW_META, 1,
                               NULL, 0, &iwp);
        w.win_ptr = NULL; /* moved into the description */
    }
    sdi_spmm_windows_free(&w);
    if (s == SD_OK)
        s = sdi_spmm_csr_arrays(l, a, c->rp64, &irp, &ici, &iva);
    if (s != SD_OK)
        return s;
    l->slots = a->nnz;
    l->atomics = 0;
    l->chunks = nwin;
    if (nwin > 0) {
        sdi_low_launch *x = sdi_spmm_add_launch(l, 0, nwin, 1, threads);
        sdi_spmm_arg_array(x, iwp);
        sdi_spmm_arg_array(x, irp);
        sdi_spmm_arg_array(x, ici);
        sdi_spmm_arg_array(x, iva);
        sdi_spmm_arg_in(x);
        sdi_spmm_arg_out(x);
    }
    return SD_OK;
}

/* ------------------------------------------------------------------ the entry */

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strcmp(label, "csr") == 0 ? 3 : -1;
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    return sdi_spmm_hook_defaults(t, SDI_SPMM_CSR_WINDOW, out);
}

static sd_status sweep_hook(const sdi_task *t, int level, sdi_plan_list *out)
{
    return sdi_spmm_hook_sweep(t, SDI_SPMM_CSR_WINDOW, level, out);
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
    if (cap > 0)
        buf[0] = '\0';
    return false;
}

const sdi_family sdi_family_spmm_csr_window = {
    .name = "csr_window",
    .op = SD_OP_SPMM,
    .id = SDI_SPMM_CSR_WINDOW,
    .layout = "csr",
    .decomposition = "row_windows",
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

const sdi_spmm_ops sdi_spmm_ops_csr_window = {
    .fam = &sdi_family_spmm_csr_window,
    .shape = shape,
    .acc = acc,
    .check = check,
    .describe = describe,
    .sweep = sweep,
    .lower = lower,
};
