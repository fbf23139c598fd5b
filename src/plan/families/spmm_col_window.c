/* src/plan/families/spmm_col_window.c: SpMM column-window packing — panels of rows (one
 * per group of a CTA) cut into windows of cw_width columns, each window's slice of B staged
 * in shared memory (spmm_colwin.cuh). Only where windows are dense enough to stage. */
#include <stdio.h>
#include <string.h>

#include "spmm_shared.h"

static void shape(int k, const sdi_spmm_stats *st, sdi_spmm_config *c)
{
    (void)k;
    (void)st;
    c->win_rows = c->warps * 32 / c->klanes;
    int cw = 32;
    while (cw > 4 && (size_t)cw * ((size_t)sdi_spmm_ktile(c) + 4) * 4 > 48 * 1024)
        cw /= 2;
    c->cw_width = cw;
}

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            return SDI_ERR(SD_ERR_INVALID_ARG, __VA_ARGS__);                               \
    } while (0)

static sd_status check(const sdi_spmm_config *c, const char *n)
{
    CHECK(c->win_rows == c->warps * 32 / c->klanes,
          "%s: panel rows %d must equal the groups per CTA (%d)", n, c->win_rows,
          c->warps * 32 / c->klanes);
    CHECK(sdi_spmm_is_pow2(c->cw_width) && c->cw_width >= 4 && c->cw_width <= 256,
          "%s: cw_width = %d (a power of two in 4..256)", n, c->cw_width);
    size_t smem = (size_t)c->cw_width * ((size_t)sdi_spmm_ktile(c) + 4) * 4;
    CHECK(smem <= 48 * 1024, "%s: %zu B of staged B (at most 48 KiB)", n, smem);
    return SD_OK;
}

static void describe(const sdi_spmm_config *c, const char *n, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s k=%d w=%d kl=%d v=%d co=%d panel=%d width=%d", n, c->k, c->warps,
             c->klanes, c->vec, c->coarsen, c->win_rows, c->cw_width);
}

sd_status sdi_spmm_colwin_dense(const sd_csr *a, const sdi_spmm_config *c, bool *dense)
{
    *dense = false;
    int64_t nseg = 0;
    const sd_status s = sdi_spmm_colwin_count(a, c->win_rows, c->cw_width, &nseg);
    if (s != SD_OK)
        return s;
    *dense = nseg > 0 && (double)a->nnz / (double)nseg >= 2.0 * c->cw_width;
    return SD_OK;
}

static sd_status sweep(const sd_csr *a, int k, const sdi_spmm_stats *st, int level,
                       sdi_spmm_cfgs *l)
{
    sdi_spmm_config base;
    sd_status s = sdi_spmm_config_default(SDI_SPMM_COL_WINDOW, k, st, &base);
    if (s != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    /* Only where windows are dense (sdi_spmm_colwin_dense). */
    static const int widths[] = {16, 32, 64};
    static const int cw_warps[2][3] = {{4, 8, 0}, {2, 4, 8}};
    for (int wi = 0; wi < 3; wi++)
        for (int w = 0; w < (level == 0 ? 1 : sdi_spmm_sweep_nw(level)); w++) {
            sdi_spmm_config c = base;
            c.warps = level == 0 ? base.warps : cw_warps[level >= 2][w];
            c.win_rows = c.warps * 32 / c.klanes;
            c.cw_width = widths[wi];
            bool dense = false;
            if ((s = sdi_spmm_colwin_dense(a, &c, &dense)) != SD_OK)
                return s;
            if (!dense)
                continue;
            if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
                return s;
            if (level == 0)
                return SD_OK;
        }
    return SD_OK;
}

static sd_status lower(sdi_lowered *l, const sd_csr *a, const sdi_spmm_config *c, int big)
{
    int threads = c->warps * 32, pr = c->win_rows;
    sdi_spmm_colwin cw;
    int64_t nseg = 0;
    sd_status s = sdi_spmm_colwin_count(a, pr, c->cw_width, &nseg);
    if (s != SD_OK)
        return s;
    /* Segment offsets take (panel rows + 1) int32 each: bound them by the entries. */
    if ((double)nseg * (pr + 1) > 4.0 * (double)a->nnz + 65536 || nseg >= INT32_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "col_window: %lld segments of %d rows for %lld "
                       "nonzeros (too sparse for column windows)", (long long)nseg, pr,
                       (long long)a->nnz);
    s = sdi_spmm_colwin_build(a, pr, c->cw_width, &cw);
    if (s != SD_OK)
        return s;
#define SD_FREE_ALL sdi_spmm_colwin_free(&cw)
    snprintf(l->template_name, sizeof l->template_name, "%s", "spmm_colwin.cuh");
    s = sdi_spmm_common_macros(l, c, threads, big);
    sdi_spmm_macro(&s, l, "SD_WARPS", c->warps);
    sdi_spmm_macro(&s, l, "SD_KL", c->klanes);
    sdi_spmm_macro(&s, l, "SD_V", c->vec);
    sdi_spmm_macro(&s, l, "SD_CO", c->coarsen);
    sdi_spmm_macro(&s, l, "SD_PR", pr);
    sdi_spmm_macro(&s, l, "SD_CW", c->cw_width);
    SD_TRY(s);
    SD_TRY(sdi_spmm_name_kernels(l, "col_window", 1));
    int ips = -1, isc = -1, iss = -1, iso = -1, ici = -1, iva = -1;
    int32_t *ps = sdi_malloc_array((size_t)cw.npanels + 1, sizeof *ps);
    SD_CHECK_ALLOC(ps, "panel segment offsets");
    for (int32_t q = 0; q <= cw.npanels; q++)
        ps[q] = (int32_t)cw.panel_seg[q];
    SD_TRY(sdi_spmm_add_array(l, "panel_seg", ps, ((size_t)cw.npanels + 1) * 4, SDI_LOW_META, 1,
                              NULL, 0, &ips));
    s = sdi_spmm_add_array(l, "seg_col0", cw.seg_col0, (size_t)nseg * 4, SDI_LOW_META, 1, NULL,
                           0, &isc);
    cw.seg_col0 = NULL;
    SD_TRY(s);
    SD_TRY(sdi_spmm_rp_array(l, "seg_start", cw.seg_start, nseg + 1, c->rp64, &iss));
    if (c->rp64) {
        l->arr[iss].owned = 1;
        cw.seg_start = NULL;
    }
    s = sdi_spmm_add_array(l, "seg_rowoff", cw.seg_rowoff, (size_t)nseg * ((size_t)pr + 1) * 4,
                           SDI_LOW_META, 1, NULL, 0, &iso);
    cw.seg_rowoff = NULL;
    SD_TRY(s);
    s = sdi_spmm_add_array(l, "colidx", cw.colidx, (size_t)a->nnz * 4, SDI_LOW_META, 1, NULL, 0,
                           &ici);
    cw.colidx = NULL;
    SD_TRY(s);
    s = sdi_spmm_add_array(l, "val", cw.val, (size_t)a->nnz * 4, SDI_LOW_VALUE, 1, cw.src,
                           a->nnz, &iva);
    cw.val = NULL;
    cw.src = NULL;
    SD_TRY(s);
    l->slots = a->nnz;
    l->atomics = 0;
    l->chunks = nseg;
    if (cw.npanels > 0) {
        sdi_low_launch *x = sdi_spmm_add_launch(l, 0, cw.npanels, sdi_spmm_ktiles(c), threads);
        sdi_spmm_arg_array(x, ips);
        sdi_spmm_arg_array(x, isc);
        sdi_spmm_arg_array(x, iss);
        sdi_spmm_arg_array(x, iso);
        sdi_spmm_arg_array(x, ici);
        sdi_spmm_arg_array(x, iva);
        sdi_spmm_arg_in(x);
        sdi_spmm_arg_out(x);
        sdi_spmm_arg_i32(x, a->rows);
        sdi_spmm_arg_i32(x, a->cols);
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ the entry */

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strcmp(label, "csr") == 0 ? 4 : -1;
}

/* The sweep's rule for the default too: sparse windows stage more of B than the entries
 * read (delaunay_n24's twin at K = 256: 15x slower than the best plan, and 7 s of its
 * compile to pack 10^8 entries; H200, `sparseditto compile --gen
 * twin:name=DIMACS10_delaunay_n24 --op spmm -K 256 --json`). */
static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    sd_status s = sdi_spmm_hook_defaults(t, SDI_SPMM_COL_WINDOW, out);
    if (s != SD_OK)
        return s;
    bool dense = false;
    if ((s = sdi_spmm_colwin_dense(t->a, &out->p.spmm, &dense)) != SD_OK)
        return s;
    if (!dense)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "col_window: windows too sparse to stage, default not tried");
    return SD_OK;
}

static sd_status sweep_hook(const sdi_task *t, int level, sdi_plan_list *out)
{
    return sdi_spmm_hook_sweep(t, SDI_SPMM_COL_WINDOW, level, out);
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

const sdi_family sdi_family_spmm_col_window = {
    .name = "col_window",
    .op = SD_OP_SPMM,
    .id = SDI_SPMM_COL_WINDOW,
    .layout = "colwin",
    .decomposition = "col_windows",
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

const sdi_spmm_ops sdi_spmm_ops_col_window = {
    .fam = &sdi_family_spmm_col_window,
    .shape = shape,
    .check = check,
    .describe = describe,
    .sweep = sweep,
    .lower = lower,
};
