/* src/plan/spmm_families.c: the SpMM plan families: template names, legality of a
 * configuration, the default θ_H of each template and the candidate sweeps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/spmm_formats.h"
#include "spmm.h"

static const char *const tmpl_names[SDI_SPMM_NTEMPLATES] = {
    "csr_row", "csr_split", "csr_window", "bsr", "bell", "pcsr", "col_window", "bsr_tc"};

const char *sdi_spmm_template_name(int tmpl)
{
    return (tmpl >= 0 && tmpl < SDI_SPMM_NTEMPLATES) ? tmpl_names[tmpl] : "unknown";
}

int sdi_spmm_template_from_name(const char *name)
{
    for (int t = 0; t < SDI_SPMM_NTEMPLATES; t++)
        if (name != NULL && strcmp(name, tmpl_names[t]) == 0)
            return t;
    return -1;
}

void sdi_spmm_stats_compute(const sd_csr *a, sdi_spmm_stats *out)
{
    memset(out, 0, sizeof *out);
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    double sum2 = 0;
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t l = a->rowptr[i + 1] - a->rowptr[i];
        if (l > out->row_max)
            out->row_max = l;
        out->rows_empty += l == 0;
        sum2 += (double)l * (double)l;
    }
    if (a->rows > 0) {
        out->row_mean = (double)a->nnz / a->rows;
        double var = sum2 / a->rows - out->row_mean * out->row_mean;
        out->row_cv = out->row_mean > 0 ? sqrt(var > 0 ? var : 0) / out->row_mean : 0;
    }
}

static bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

static int next_pow2(int64_t x)
{
    int p = 1;
    while (p < x && p < (1 << 30))
        p <<= 1;
    return p;
}

int sdi_spmm_ktile(const sdi_spmm_config *c)
{
    if (c->tmpl == SDI_SPMM_PCSR)
        return c->pcsr_group * c->coarsen;
    if (c->tmpl == SDI_SPMM_BSR_TC)
        return 16 * c->coarsen; /* K is the m16 side of the transposed mma */
    return c->klanes * c->vec * c->coarsen;
}

int sdi_spmm_ktiles(const sdi_spmm_config *c)
{
    int t = sdi_spmm_ktile(c);
    return t > 0 ? (c->k + t - 1) / t : 0;
}

bool sdi_spmm_split_segmented(const sdi_spmm_config *c)
{
    return c->tmpl == SDI_SPMM_CSR_SPLIT &&
           (c->split_mode == SDI_SPLIT_SEGMENTS || c->split_mode == SDI_SPLIT_SEGATOMIC);
}

void sdi_spmm_config_describe(const sdi_spmm_config *c, char *buf, size_t cap)
{
    const char *n = sdi_spmm_template_name(c->tmpl);
    switch (c->tmpl) {
    case SDI_SPMM_PCSR:
        snprintf(buf, cap, "%s k=%d W=%d F=%d V=%d S=%d bound=%d group=%d", n, c->k, c->warps,
                 c->coarsen, c->pcsr_v, c->pcsr_s, c->pcsr_bound, c->pcsr_group);
        break;
    case SDI_SPMM_CSR_SPLIT:
        snprintf(buf, cap, "%s k=%d w=%d kl=%d nz=%d v=%d co=%d T=%d CH=%d %s", n, c->k,
                 c->warps, c->klanes, c->nzpar, c->vec, c->coarsen, c->split_threshold,
                 c->chunk,
                 c->split_mode == SDI_SPLIT_SEGATOMIC  ? "segatomic"
                 : c->split_mode == SDI_SPLIT_SEGMENTS ? "segments"
                 : c->split_mode == SDI_SPLIT_FIXUP    ? "fixup"
                                                       : "atomic");
        break;
    case SDI_SPMM_CSR_WINDOW:
        snprintf(buf, cap, "%s k=%d w=%d kl=%d v=%d co=%d rows=%d cap=%d", n, c->k, c->warps,
                 c->klanes, c->vec, c->coarsen, c->win_rows, c->win_cap);
        break;
    case SDI_SPMM_BSR:
    case SDI_SPMM_BELL:
        snprintf(buf, cap, "%s%d k=%d w=%d kl=%d v=%d co=%d", n, c->block, c->k, c->warps,
                 c->klanes, c->vec, c->coarsen);
        break;
    case SDI_SPMM_COL_WINDOW:
        snprintf(buf, cap, "%s k=%d w=%d kl=%d v=%d co=%d panel=%d width=%d", n, c->k, c->warps,
                 c->klanes, c->vec, c->coarsen, c->win_rows, c->cw_width);
        break;
    case SDI_SPMM_BSR_TC:
        snprintf(buf, cap, "%s%d k=%d w=%d nt=%d", n, c->block, c->k, c->warps, c->coarsen);
        break;
    default:
        snprintf(buf, cap, "%s k=%d w=%d kl=%d nz=%d v=%d co=%d", n, c->k, c->warps,
                 c->klanes, c->nzpar, c->vec, c->coarsen);
        break;
    }
    if (c->regcap != 0 && c->regcap != 64) {
        size_t l = strlen(buf);
        if (l < cap)
            snprintf(buf + l, cap - l, " reg=%d", c->regcap);
    }
}

/* ------------------------------------------------------------------ legality */

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            return SDI_ERR(SD_ERR_INVALID_ARG, __VA_ARGS__);                               \
    } while (0)

sd_status sdi_spmm_config_check(const sdi_spmm_config *c, const sdi_spmm_stats *st)
{
    CHECK(c->tmpl >= 0 && c->tmpl < SDI_SPMM_NTEMPLATES, "spmm: unknown template %d", c->tmpl);
    const char *n = sdi_spmm_template_name(c->tmpl);
    CHECK(c->k >= 1 && c->k <= 65536, "%s: K = %d outside 1..65536", n, c->k);
    CHECK(is_pow2(c->warps) && c->warps <= 16, "%s: warps = %d (1, 2, 4, 8 or 16)", n, c->warps);
    CHECK(c->regcap == 0 || (c->regcap >= 32 && c->regcap <= 255), "%s: regcap = %d", n,
          c->regcap);
    CHECK(c->coarsen >= 1 && c->coarsen <= 16, "%s: coarsen = %d outside 1..16", n, c->coarsen);
    if (st != NULL) {
        CHECK(c->rp64 || st->nnz < ((int64_t)1 << 31),
              "%s: nnz %lld needs 64-bit row pointers", n, (long long)st->nnz);
    }
    if (c->tmpl == SDI_SPMM_PCSR) {
        CHECK(c->vec == 1, "pcsr: B is read in scalars (vec must be 1)");
        CHECK(c->pcsr_v == 1 || c->pcsr_v == 2, "pcsr: V = %d (1 or 2)", c->pcsr_v);
        CHECK(c->pcsr_s == 0 || c->pcsr_s == 1, "pcsr: S = %d (0 or 1)", c->pcsr_s);
        CHECK(!c->pcsr_s || (c->pcsr_bound >= c->pcsr_v && c->pcsr_bound % c->pcsr_v == 0),
              "pcsr: bound %d must be a positive multiple of V", c->pcsr_bound);
        CHECK(c->pcsr_group == 4 || c->pcsr_group == 8 || c->pcsr_group == 16 ||
                  c->pcsr_group == 32,
              "pcsr: group = %d (4, 8, 16 or 32)", c->pcsr_group);
        CHECK(c->coarsen <= 8, "pcsr: F = %d (at most 8)", c->coarsen);
    } else {
        CHECK(c->vec == 1 || c->vec == 2 || c->vec == 4, "%s: vec = %d (1, 2 or 4)", n, c->vec);
        CHECK(c->k % c->vec == 0, "%s: K = %d is not a multiple of vec = %d", n, c->k, c->vec);
        CHECK(is_pow2(c->klanes) && c->klanes <= 32, "%s: klanes = %d", n, c->klanes);
        CHECK(c->coarsen * c->vec <= 32, "%s: %d accumulators per lane (at most 32)", n,
              c->coarsen * c->vec);
    }
    int tiles = sdi_spmm_ktiles(c);
    CHECK(tiles >= 1 && tiles <= 65535, "%s: %d K tiles (at most 65535)", n, tiles);
    switch (c->tmpl) {
    case SDI_SPMM_CSR_ROW:
        CHECK(is_pow2(c->nzpar) && c->klanes * c->nzpar <= 32, "%s: group %d×%d exceeds a warp",
              n, c->klanes, c->nzpar);
        break;
    case SDI_SPMM_CSR_SPLIT:
        CHECK(is_pow2(c->nzpar) && c->klanes * c->nzpar <= 32, "%s: group %d×%d exceeds a warp",
              n, c->klanes, c->nzpar);
        CHECK(c->long_nzpar * c->klanes == 32, "%s: long groups must be full warps (kl %d × %d)",
              n, c->klanes, c->long_nzpar);
        CHECK(c->chunk >= 1 && c->split_threshold >= c->chunk, "%s: need 1 <= CH (%d) <= T (%d)",
              n, c->chunk, c->split_threshold);
        CHECK(c->split_mode == SDI_SPLIT_ATOMIC || c->split_mode == SDI_SPLIT_FIXUP ||
                  c->split_mode == SDI_SPLIT_SEGMENTS || c->split_mode == SDI_SPLIT_SEGATOMIC,
              "%s: split_mode %d", n, c->split_mode);
        CHECK(!sdi_spmm_split_segmented(c) || c->nzpar == 1,
              "%s: segments take groups of klanes lanes (nzpar %d, must be 1)", n, c->nzpar);
        break;
    case SDI_SPMM_CSR_WINDOW: {
        int ng = c->warps * 32 / c->klanes;
        CHECK(c->win_rows >= 1 && c->win_rows <= 1024, "%s: win_rows = %d", n, c->win_rows);
        CHECK(c->win_cap >= 32 && c->win_cap <= 8192, "%s: win_cap = %d (32..8192)", n,
              c->win_cap);
        int ppg = (c->win_rows * tiles + ng - 1) / ng;
        CHECK(ppg <= 4 && ppg * c->coarsen * c->vec <= 32,
              "%s: %d (row, tile) pairs per group of %d accumulators (too many registers)", n,
              ppg, c->coarsen * c->vec);
        size_t smem = (size_t)c->win_cap * 8 + ((size_t)c->win_rows + 1) * (c->rp64 ? 8 : 4);
        CHECK(smem <= 48 * 1024, "%s: %zu B of shared memory (at most 48 KiB)", n, smem);
        break;
    }
    case SDI_SPMM_COL_WINDOW: {
        CHECK(c->win_rows == c->warps * 32 / c->klanes,
              "%s: panel rows %d must equal the groups per CTA (%d)", n, c->win_rows,
              c->warps * 32 / c->klanes);
        CHECK(is_pow2(c->cw_width) && c->cw_width >= 4 && c->cw_width <= 256,
              "%s: cw_width = %d (a power of two in 4..256)", n, c->cw_width);
        size_t smem = (size_t)c->cw_width * ((size_t)sdi_spmm_ktile(c) + 4) * 4;
        CHECK(smem <= 48 * 1024, "%s: %zu B of staged B (at most 48 KiB)", n, smem);
        break;
    }
    case SDI_SPMM_BSR:
    case SDI_SPMM_BELL:
        CHECK(c->block == 2 || c->block == 4 || c->block == 8 || c->block == 16,
              "%s: block = %d (2, 4, 8 or 16)", n, c->block);
        CHECK(c->block * c->coarsen * c->vec <= 64,
              "%s: %d accumulators per lane (at most 64)", n, c->block * c->coarsen * c->vec);
        break;
    case SDI_SPMM_BSR_TC:
        /* A warp owns a block row and a K tile of 16·nt columns; no shared memory. Two
         * accumulator sets (b/8 · nt · 4 floats each) stay in registers. */
        CHECK(c->block == 8 || c->block == 16, "%s: block = %d (8 or 16)", n, c->block);
        CHECK(c->klanes == 32 && c->vec == 1, "%s: a warp spans the K tile (klanes 32, vec 1)",
              n);
        CHECK(c->coarsen == 1 || c->coarsen == 2 || c->coarsen == 4,
              "%s: nt = %d K sub-tiles of 16 per warp (1, 2 or 4)", n, c->coarsen);
        break;
    default:
        break;
    }
    return SD_OK;
}

/* ------------------------------------------------------------------ defaults */

/* The K mapping: widest vector K allows, lanes to cover K in one tile when K ≤ 32·vec,
 * else 32 lanes and enough vectors per lane (at most max_acc floats). */
static void k_shape(int k, int max_acc, int *vec, int *kl, int *co)
{
    int v = k % 4 == 0 ? 4 : (k % 2 == 0 ? 2 : 1);
    int kv = (k + v - 1) / v;
    if (kv <= 32) {
        *vec = v;
        *kl = next_pow2(kv);
        *co = 1;
        return;
    }
    int c = (kv + 31) / 32;
    int cmax = max_acc / v;
    if (c > cmax)
        c = cmax;
    if (c < 1)
        c = 1;
    *vec = v;
    *kl = 32;
    *co = c;
}

/* Lanes per row across nonzeros for a group of kl lanes: about the mean row length. */
static int pick_nzpar(int kl, double row_mean)
{
    int g = next_pow2((int64_t)ceil(row_mean > 1 ? row_mean : 1));
    if (g < kl)
        g = kl;
    if (g > 32)
        g = 32;
    int nz = g / kl;
    return nz < 1 ? 1 : nz;
}

/* Register cap from the accumulators a thread keeps (plus about 40 registers of
 * addresses, loads in flight and loop state): 64 for the light variants (8 CTAs of 128
 * threads per SM), more for BSR(16) and wide windows instead of spilling. */
static int regcap_for(const sdi_spmm_config *c)
{
    int acc;
    switch (c->tmpl) {
    case SDI_SPMM_PCSR: acc = c->coarsen; break;
    case SDI_SPMM_BSR:
    case SDI_SPMM_BELL: acc = c->block * c->coarsen * c->vec + c->block; break;
    case SDI_SPMM_BSR_TC: /* two accumulator sets, B fragments hi/lo, the tile hi/lo */
        acc = 2 * (c->block / 8) * c->coarsen * 4 + 8 * c->coarsen + c->block / 2;
        break;
    case SDI_SPMM_CSR_WINDOW: {
        int ng = c->warps * 32 / (c->klanes > 0 ? c->klanes : 1);
        int tiles = sdi_spmm_ktiles(c);
        int ppg = (c->win_rows * tiles + ng - 1) / ng;
        acc = ppg * c->coarsen * c->vec;
        break;
    }
    case SDI_SPMM_CSR_SPLIT: /* segments: the head run's copy, 32 floats of B in flight, the
                              * finisher's loads */
        acc = sdi_spmm_split_segmented(c) ? 2 * c->coarsen * c->vec + 40 : c->coarsen * c->vec;
        break;
    default: acc = c->coarsen * c->vec; break;
    }
    int need = acc + 40;
    return need <= 64 ? 64 : need <= 96 ? 96 : need <= 128 ? 128 : need <= 168 ? 168 : 255;
}

sd_status sdi_spmm_config_default(int tmpl, int k, const sdi_spmm_stats *st,
                                  sdi_spmm_config *out)
{
    memset(out, 0, sizeof *out);
    out->tmpl = tmpl;
    out->k = k;
    out->warps = 4;
    out->regcap = 64;
    out->rp64 = st->nnz >= ((int64_t)1 << 31);
    if (k < 1 || k > 65536)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm: K = %d outside 1..65536", k);
    int vec, kl, co;
    k_shape(k, 16, &vec, &kl, &co);
    out->vec = vec;
    out->klanes = kl;
    out->coarsen = co;
    switch (tmpl) {
    case SDI_SPMM_CSR_ROW:
        out->nzpar = pick_nzpar(kl, st->row_mean);
        break;
    case SDI_SPMM_CSR_SPLIT:
        out->nzpar = pick_nzpar(kl, st->row_mean);
        out->long_nzpar = 32 / kl;
        out->chunk = k <= 32 ? 256 : 128;
        out->split_threshold = out->chunk;
        out->split_mode = SDI_SPLIT_FIXUP;
        break;
    case SDI_SPMM_CSR_WINDOW: {
        int ng = out->warps * 32 / kl;
        int tiles = sdi_spmm_ktiles(out);
        out->win_rows = ng / tiles >= 1 ? ng / tiles : 1;
        out->win_cap = 1024;
        break;
    }
    case SDI_SPMM_BSR:
    case SDI_SPMM_BELL:
        out->block = 4;
        k_shape(k, 64 / 4 < 16 ? 64 / 4 : 16, &vec, &kl, &co);
        out->vec = vec;
        out->klanes = kl;
        out->coarsen = co;
        break;
    case SDI_SPMM_COL_WINDOW: {
        out->win_rows = out->warps * 32 / kl;
        int cw = 32;
        while (cw > 4 && (size_t)cw * ((size_t)sdi_spmm_ktile(out) + 4) * 4 > 48 * 1024)
            cw /= 2;
        out->cw_width = cw;
        break;
    }
    case SDI_SPMM_BSR_TC: {
        /* 16-row tiles share each B fragment between two mma (the natural m16 tile);
         * nt covers K up to 64 columns per warp */
        out->block = 16;
        out->vec = 1;
        out->klanes = 32;
        int nt = (k + 15) / 16;
        out->coarsen = nt >= 4 ? 4 : nt >= 2 ? next_pow2(nt) : 1;
        break;
    }
    case SDI_SPMM_PCSR: {
        out->vec = 1;
        out->pcsr_group = 32;
        int f = (k + 31) / 32;
        out->coarsen = f > 4 ? 4 : (f < 1 ? 1 : next_pow2(f));
        out->klanes = 0;
        out->pcsr_v = 2;
        out->pcsr_s = st->row_cv > 1.0 ? 1 : 0;
        out->pcsr_bound = 128 * out->pcsr_v;
        break;
    }
    default:
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm: unknown template %d", tmpl);
    }
    out->regcap = regcap_for(out);
    return sdi_spmm_config_check(out, st);
}

/* ------------------------------------------------------------------ sweeps */

/* The light register cap of a sweep member (list_push keeps it): 32 registers and 8 floats
 * of B in flight per lane (SD_INFLIGHT, spmm_lower.c), full occupancy instead of 64 and 50 %.
 * Offered where the grid has many waves of short rows: rows ≥ SPMM_LIGHT_ROWS, K ≥ 32 with
 * one vector of accumulators per lane (the row-wise kernels fill 64 registers there; at
 * K = 8 they use about 35 anyway, and the member only took search budget from csr_window).
 * As a rule for every matrix it lost on the real set (our SpMM time +8.5 %: small matrices
 * need the loads in flight, not more warps); as a member it won up to 25 % at K = 32/128 on
 * the paper-60 twins and luxembourg_osm (H200, `sparseditto bench --set paper60,real
 * --ops spmm32,spmm128`). */
#define SPMM_REGCAP_LIGHT 32
#define SPMM_LIGHT_ROWS 50000

static bool light_fits(const sdi_spmm_config *c, const sdi_spmm_stats *st)
{
    return st->rows >= SPMM_LIGHT_ROWS && c->k >= 32 && c->coarsen * c->vec <= 4;
}

typedef struct {
    sdi_spmm_config *v;
    int n, cap;
} cfg_list;

static sd_status list_push(cfg_list *l, const sdi_spmm_config *cin, const sdi_spmm_stats *st)
{
    sdi_spmm_config fixed = *cin;
    if (fixed.regcap != SPMM_REGCAP_LIGHT)
        fixed.regcap = regcap_for(&fixed); /* sweep members follow the rule's cap */
    const sdi_spmm_config *c = &fixed;
    sdi_spmm_config tmp = *c;
    if (sdi_spmm_config_check(&tmp, st) != SD_OK) {
        sdi_error_clear();
        return SD_OK; /* illegal members of a sweep are dropped */
    }
    for (int i = 0; i < l->n; i++)
        if (memcmp(&l->v[i], c, sizeof *c) == 0)
            return SD_OK;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        sdi_spmm_config *v = sdi_realloc_array(l->v, (size_t)cap, sizeof *v);
        if (v == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for SpMM candidates");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *c;
    return SD_OK;
}

static int nw_of(int level) { return level >= 2 ? 3 : 2; }

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

/* Members of one template's sweep at `level` appended to l. */
static sd_status sweep_template(int tmpl, int k, const sd_csr *a, const sdi_spmm_stats *st,
                                int level, cfg_list *l)
{
    sdi_spmm_config base;
    sd_status s = sdi_spmm_config_default(tmpl, k, st, &base);
    if (s != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    bool blocks = tmpl == SDI_SPMM_BSR || tmpl == SDI_SPMM_BELL || tmpl == SDI_SPMM_BSR_TC;
    if (tmpl == SDI_SPMM_COL_WINDOW) {
        /* Only where windows are dense (sdi_spmm_colwin_dense). */
        static const int widths[] = {16, 32, 64};
        static const int cw_warps[2][3] = {{4, 8, 0}, {2, 4, 8}};
        for (int wi = 0; wi < 3; wi++)
            for (int w = 0; w < (level == 0 ? 1 : nw_of(level)); w++) {
                sdi_spmm_config c = base;
                c.warps = level == 0 ? base.warps : cw_warps[level >= 2][w];
                c.win_rows = c.warps * 32 / c.klanes;
                c.cw_width = widths[wi];
                bool dense = false;
                if ((s = sdi_spmm_colwin_dense(a, &c, &dense)) != SD_OK)
                    return s;
                if (!dense)
                    continue;
                if ((s = list_push(l, &c, st)) != SD_OK)
                    return s;
                if (level == 0)
                    return SD_OK;
            }
        return SD_OK;
    }
    if (!blocks) { /* block templates: only block sizes whose padding is acceptable */
        s = list_push(l, &base, st);
        if (s != SD_OK || level == 0)
            return s;
    }
    sdi_spmm_config c;
    static const int warps_small[] = {4, 8};
    static const int warps_wide[] = {2, 4, 8};
    const int *wl = level >= 2 ? warps_wide : warps_small;
    int nw = level >= 2 ? 3 : 2;
    /* Many waves of short rows: the default at the light cap, first after it. */
    if ((tmpl == SDI_SPMM_CSR_ROW || tmpl == SDI_SPMM_CSR_WINDOW) && light_fits(&base, st)) {
        c = base;
        c.regcap = SPMM_REGCAP_LIGHT;
        if ((s = list_push(l, &c, st)) != SD_OK)
            return s;
    }
    switch (tmpl) {
    case SDI_SPMM_CSR_ROW:
        for (int w = 0; w < nw; w++)
            for (int d = -1; d <= 1; d++) {
                c = base;
                c.warps = wl[w];
                c.nzpar = d < 0 ? base.nzpar / 2 : (d > 0 ? base.nzpar * 2 : base.nzpar);
                if (c.nzpar < 1)
                    continue;
                if ((s = list_push(l, &c, st)) != SD_OK)
                    return s;
            }
        /* Coarsening traded for K tiles (more CTAs, fewer registers). */
        if (base.coarsen > 1) {
            c = base;
            c.coarsen = base.coarsen / 2;
            if ((s = list_push(l, &c, st)) != SD_OK)
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
                if ((s = list_push(l, &c, st)) != SD_OK)
                    return s;
            }
        if (level >= 2 && base.vec > 1) {
            c = base;
            c.vec = base.vec / 2;
            c.coarsen = base.coarsen;
            if (c.klanes * c.vec * c.coarsen < k && c.klanes < 32)
                c.klanes *= 2;
            if ((s = list_push(l, &c, st)) != SD_OK)
                return s;
        }
        break;
    case SDI_SPMM_CSR_SPLIT: {
        /* Segments (equal nonzeros per group, so that no group walks a long row alone:
         * small skewed matrices, where the longest row's chain of loads is the time) take
         * the first and third places after the default, so that a search trying three
         * members tries both dataflows; the wide sweep adds longer segments and half
         * coarsening after the chunk members. */
        /* Each segment length in both finishes: atomic sums first (one load finishes a
         * cut row, however many segments it spans), then the ordered, reproducible one.
         * Segments of 8 entries (one batch of loads) only with atomic sums: with ordered
         * partials a long row's finish would be a chain of hundreds. */
        sdi_spmm_config seg[20];
        int nseg = 0;
        static const int seg_chunks[] = {32, 16, 8, 64, 128};
        for (int ci = 0; ci < (level >= 2 ? 5 : 3); ci++)
            for (int half = 0; half < (level >= 2 && base.coarsen > 1 ? 2 : 1); half++)
                for (int m = 0; m < (seg_chunks[ci] == 8 ? 1 : 2); m++) {
                    c = base;
                    c.split_mode = m == 0 ? SDI_SPLIT_SEGATOMIC : SDI_SPLIT_SEGMENTS;
                    c.nzpar = 1;
                    c.chunk = c.split_threshold = seg_chunks[ci];
                    c.coarsen = half ? base.coarsen / 2 : base.coarsen;
                    if (st->row_max > c.chunk / 2) /* else every row fits in a segment */
                        seg[nseg++] = c;
                }
        int used = 0;
        const int at0 = l->n; /* members after the default */
        static const int chunks[] = {64, 256, 1024};
        for (int ci = 0; ci < 3; ci++)
            for (int mode = 0; mode < 2; mode++) {
                if (used < nseg && used < 2 && (l->n - at0 == 0 || l->n - at0 == 2)) {
                    if ((s = list_push(l, &seg[used++], st)) != SD_OK)
                        return s;
                }
                if (st->row_max <= 64)
                    continue; /* nothing to split in chunks: the row-wise template covers it */
                c = base;
                c.chunk = chunks[ci];
                c.split_threshold = chunks[ci];
                c.split_mode = mode;
                if (c.chunk >= st->row_max)
                    continue;
                if ((s = list_push(l, &c, st)) != SD_OK)
                    return s;
                if (level >= 2) {
                    c.split_threshold = 4 * chunks[ci];
                    if ((s = list_push(l, &c, st)) != SD_OK)
                        return s;
                }
            }
        for (; used < nseg; used++)
            if ((s = list_push(l, &seg[used], st)) != SD_OK)
                return s;
        if (light_fits(&base, st)) { /* the chunked default at the light cap, last */
            c = base;
            c.regcap = SPMM_REGCAP_LIGHT;
            if ((s = list_push(l, &c, st)) != SD_OK)
                return s;
        }
        break;
    }
    case SDI_SPMM_CSR_WINDOW: {
        static const int caps[] = {512, 2048};
        for (int w = 0; w < nw; w++)
            for (int ci = 0; ci < 2; ci++) {
                c = base;
                c.warps = wl[w];
                int ng = c.warps * 32 / c.klanes;
                int tiles = sdi_spmm_ktiles(&c);
                c.win_rows = ng / tiles >= 1 ? ng / tiles : 1;
                c.win_cap = caps[ci];
                if ((s = list_push(l, &c, st)) != SD_OK)
                    return s;
            }
        break;
    }
    case SDI_SPMM_BSR:
    case SDI_SPMM_BELL: {
        static const int blocks[] = {2, 4, 8, 16};
        for (int bi = 0; bi < 4; bi++) {
            int b = blocks[bi];
            int64_t nb = 0, widest = 0;
            if ((s = sdi_spmm_blocks_count(a, b, b, &nb, &widest)) != SD_OK)
                return s;
            double fill = a->nnz > 0 ? (double)nb * b * b / (double)a->nnz : 0;
            if (tmpl == SDI_SPMM_BELL)
                fill = a->nnz > 0 ? (double)((a->rows + b - 1) / b) * (double)widest * b * b /
                                        (double)a->nnz
                                  : 0;
            if (nb == 0 || fill > (level >= 2 ? 8.0 : 3.0))
                continue;
            c = base;
            c.block = b;
            int vec, kl, co;
            k_shape(k, 64 / b < 16 ? 64 / b : 16, &vec, &kl, &co);
            c.vec = vec;
            c.klanes = kl;
            c.coarsen = co;
            for (int w = 0; w < (level == 0 ? 1 : nw); w++) {
                c.warps = level == 0 ? base.warps : wl[w];
                if ((s = list_push(l, &c, st)) != SD_OK)
                    return s;
            }
            if (level == 0)
                break; /* the smallest acceptable block */
        }
        break;
    }
    case SDI_SPMM_BSR_TC: {
        /* Only where b×8 tiles are dense (the BSR family's padding rule): 16-row tiles
         * first (each B fragment serves two mma), then 8-row tiles. */
        static const int tc_blocks[] = {16, 8};
        static const int nts[] = {1, 2, 4};
        for (int bi = 0; bi < 2; bi++) {
            int b = tc_blocks[bi];
            int64_t nb = 0, widest = 0;
            if ((s = sdi_spmm_blocks_count(a, b, 8, &nb, &widest)) != SD_OK)
                return s;
            double fill = a->nnz > 0 ? (double)nb * b * 8 / (double)a->nnz : 0;
            if (nb == 0 || fill > (level >= 2 ? 8.0 : 3.0))
                continue;
            c = base;
            c.block = b;
            if (level == 0) {
                if ((s = list_push(l, &c, st)) != SD_OK)
                    return s;
                break; /* the first acceptable tile */
            }
            for (int w = 0; w < nw; w++)
                for (int q = 0; q < 3; q++) {
                    c.warps = wl[w];
                    c.coarsen = nts[q];
                    /* level 1: the default nt and the one below (more CTAs, fewer registers) */
                    if (level < 2 && nts[q] != base.coarsen && 2 * nts[q] != base.coarsen)
                        continue;
                    if (nts[q] > 1 && 8 * nts[q] >= k)
                        continue; /* half the sub-tiles already cover K */
                    if ((s = list_push(l, &c, st)) != SD_OK)
                        return s;
                }
        }
        break;
    }
    case SDI_SPMM_PCSR: {
        sdi_spmm_config *all = NULL;
        int nall = 0;
        if ((s = sdi_spmm_enumerate_pcsr(a, k, k < 32, &all, &nall)) != SD_OK)
            return s;
        for (int i = 0; i < nall; i++) {
            /* The small sweep: W ∈ {2, 4, 8} and the F that covers K with the group. */
            if (level < 2) {
                const sdi_spmm_config *m = &all[i];
                int want = m->pcsr_group == 32 ? base.coarsen
                                               : next_pow2((k + m->pcsr_group - 1) / m->pcsr_group);
                if (want > 8)
                    want = 8;
                if (m->warps == 1 || m->coarsen != want)
                    continue;
            }
            if ((s = list_push(l, &all[i], st)) != SD_OK) {
                sdi_free(all);
                return s;
            }
        }
        sdi_free(all);
        break;
    }
    default:
        break;
    }
    return SD_OK;
}

sd_status sdi_spmm_enumerate_pcsr(const sd_csr *a, int k, int include_subwarp,
                                  sdi_spmm_config **out, int *n)
{
    *out = NULL;
    *n = 0;
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    cfg_list l = {0};
    static const int ws[] = {1, 2, 4, 8};
    static const int fs[] = {1, 2, 4, 8};
    static const int groups[] = {32, 16, 8, 4};
    for (int gi = 0; gi < (include_subwarp ? 4 : 1); gi++) {
        int g = groups[gi];
        if (g < 32 && g / 2 >= k)
            continue; /* a narrower group still covers K */
        for (int wi = 0; wi < 4; wi++)
            for (int fi = 0; fi < 4; fi++) {
                int f = fs[fi];
                /* F beyond what K needs only idles lanes; 8 only when K > 128 */
                if (f > 1 && g * f / 2 >= k)
                    continue;
                if (f == 8 && k <= 128)
                    continue;
                for (int v = 1; v <= 2; v++)
                    for (int s = 0; s <= 1; s++) {
                        sdi_spmm_config c;
                        memset(&c, 0, sizeof c);
                        c.tmpl = SDI_SPMM_PCSR;
                        c.k = k;
                        c.warps = ws[wi];
                        c.coarsen = f;
                        c.vec = 1;
                        c.regcap = 64;
                        c.pcsr_v = v;
                        c.pcsr_s = s;
                        c.pcsr_bound = s ? 128 * v : 0;
                        c.pcsr_group = g;
                        c.rp64 = st.nnz >= ((int64_t)1 << 31);
                        sd_status e = list_push(&l, &c, &st);
                        if (e != SD_OK) {
                            sdi_free(l.v);
                            return e;
                        }
                    }
            }
    }
    *out = l.v;
    *n = l.n;
    return SD_OK;
}

sd_status sdi_spmm_enumerate(const sd_csr *a, int k, uint32_t tmpl_mask, int level, int cap,
                             sdi_spmm_config **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (k < 1 || k > 65536)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm: K = %d outside 1..65536", k);
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    cfg_list per[SDI_SPMM_NTEMPLATES];
    memset(per, 0, sizeof per);
    sd_status s = SD_OK;
    for (int t = 0; t < SDI_SPMM_NTEMPLATES && s == SD_OK; t++)
        if (tmpl_mask == 0 || (tmpl_mask & (1u << t)))
            s = sweep_template(t, k, a, &st, level, &per[t]);
    cfg_list all = {0};
    /* Round-robin so that a small cap still covers every template. */
    for (int round = 0; s == SD_OK; round++) {
        bool any = false;
        for (int t = 0; t < SDI_SPMM_NTEMPLATES && s == SD_OK; t++) {
            if (round >= per[t].n)
                continue;
            any = true;
            if (cap > 0 && all.n >= cap)
                break;
            s = list_push(&all, &per[t].v[round], &st);
        }
        if (!any || (cap > 0 && all.n >= cap))
            break;
    }
    for (int t = 0; t < SDI_SPMM_NTEMPLATES; t++)
        sdi_free(per[t].v);
    if (s != SD_OK) {
        sdi_free(all.v);
        return s;
    }
    *out = all.v;
    *n = all.n;
    return SD_OK;
}
