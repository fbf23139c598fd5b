/* src/plan/spgemm_families.c: SpGEMM plan families: presets and checks of the
 * configuration, the per-row accumulator rules, binning rows by their upper bound u(i)
 * and column span into bins with launch shapes, and candidate enumeration. */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>

#include "spgemm.h"

/* ------------------------------------------------------------------ names */
static const char *const family_names[SDI_SPGEMM_NFAMILIES] = {"csr_hash", "smem_tiled_hash",
                                                               "hybrid", "dense_stripe"};
static const char *const kind_names[SDI_SG_NKINDS] = {"tiny", "ghash", "gdense", "chash",
                                                      "cdense", "global", "copy"};

const char *sdi_spgemm_family_name(int f)
{
    return f >= 0 && f < SDI_SPGEMM_NFAMILIES ? family_names[f] : "unknown";
}

int sdi_spgemm_family_from_name(const char *name)
{
    for (int f = 0; name != NULL && f < SDI_SPGEMM_NFAMILIES; f++)
        if (strcmp(name, family_names[f]) == 0)
            return f;
    return -1;
}

const char *sdi_sg_kind_name(int kind)
{
    return kind >= 0 && kind < SDI_SG_NKINDS ? kind_names[kind] : "unknown";
}

/* ------------------------------------------------------------------ limits */
void sdi_sg_limits_from_props(const sdi_gpu_props *p, sdi_sg_limits *out)
{
    memset(out, 0, sizeof *out);
    int optin = p != NULL && p->smem_per_cta_optin > 0 ? p->smem_per_cta_optin : 48 * 1024;
    /* a margin for the static shared memory of the scan kernel's neighbours and the
     * 1 KiB the hardware reserves per CTA on sm_80+ */
    out->smem_max = optin - 1024;
    out->sm_count = p != NULL && p->sm_count > 0 ? p->sm_count : 132;
    /* residency; an H200's figures where the properties leave them 0 */
    out->smem_per_sm = p != NULL && p->smem_per_sm > 0 ? p->smem_per_sm : 228 * 1024;
    out->threads_per_sm = p != NULL && p->max_threads_per_sm > 0 ? p->max_threads_per_sm : 2048;
    out->ctas_per_sm = p != NULL && p->max_ctas_per_sm > 0 ? p->max_ctas_per_sm : 32;
    out->smem_reserved = p != NULL && p->smem_reserved_per_cta > 0 ? p->smem_reserved_per_cta : 1024;
    out->mem_bytes = p != NULL && p->global_mem_bytes > 0 ? p->global_mem_bytes : (16ll << 30);
    /* SPARSEDITTO_SG_WIDE=0: no wide CTA stripe (such rows go to global stripes), for
     * side-by-side measurements; read here, once per search, not per row */
    out->no_wide = !sdi_config_get()->sg_wide;
}

int32_t sdi_sg_resident_ctas(const sdi_sg_limits *lim, int threads, int64_t smem)
{
    if (lim == NULL || threads <= 0)
        return 0;
    int64_t n = lim->threads_per_sm / threads;
    if (n > lim->ctas_per_sm)
        n = lim->ctas_per_sm;
    /* the hardware's reservation counts whether or not the CTA asks for shared memory */
    const int64_t per_cta = (smem > 0 ? smem : 0) + lim->smem_reserved;
    if (per_cta > 0 && lim->smem_per_sm / per_cta < n)
        n = lim->smem_per_sm / per_cta;
    return (int32_t)n;
}

int32_t sdi_sg_cta_threshold(const sdi_sg_rowinfo *ri, int64_t slots)
{
    if (ri == NULL || slots <= 0)
        return 0;
    enum { NT = 5 };
    static const int32_t thr[NT] = {SDI_SG_CTA_MIN_U, 512, 1024, 2048, 4096};
    int64_t above[NT] = {0};
    for (int32_t i = 0; i < ri->m; i++)
        for (int t = 0; t < NT && ri->u[i] > thr[t]; t++)
            above[t]++;
    for (int t = 0; t < NT; t++)
        if (above[t] > 0 && above[t] <= slots)
            return thr[t];
    return 0;
}

/* ------------------------------------------------------------------ shapes */
static int is_group_kind(int kind) { return kind == SDI_SG_GHASH || kind == SDI_SG_GDENSE; }

/* sizeof(SgCtaScratch<T>) and sizeof(SgCopyScratch<T>) of spgemm_team.cuh / rows.cuh. */
static int64_t cta_scratch_bytes(int threads)
{
    return 8 * (int64_t)(threads / 32 + 1) + 16 * (int64_t)threads;
}
static int64_t copy_scratch_bytes(int threads)
{
    int64_t b = cta_scratch_bytes(threads) + 8 * (SD_SG_SCAN_TILE + 1) + 4 * (SD_SG_SCAN_TILE + 1);
    return (b + 7) / 8 * 8;
}

/* A bin's size from its size code p: entries of a TINY list, columns of a dense stripe,
 * slots of a hash table (GLOBAL's width is the schedule's, not p's). */
static int64_t kind_size(int kind, int p)
{
    if (kind == SDI_SG_TINY)
        return p;
    if (kind == SDI_SG_CDENSE || kind == SDI_SG_GDENSE)
        return sdi_sg_stripe_cols(p);
    return (int64_t)1 << p;
}

int64_t sdi_sg_smem_bytes(int kind, int g, int p, int threads, int phase)
{
    const int sym = phase == SD_SG_PH_SYM;
    const int64_t size = kind_size(kind, p);
    switch (kind) {
    case SDI_SG_TINY:
        return 0;
    case SDI_SG_GHASH:
        return (int64_t)(threads / g) * size * (sym ? 4 : 8);
    case SDI_SG_GDENSE:
        return (int64_t)(threads / g) * (sym ? size / 8 : size * 4 + size / 8);
    case SDI_SG_CHASH:
        return cta_scratch_bytes(threads) + size * (sym ? 4 : 8);
    case SDI_SG_CDENSE:
        return cta_scratch_bytes(threads) + (sym ? size / 8 : size * 4 + size / 8);
    case SDI_SG_GLOBAL:
        return cta_scratch_bytes(threads);
    case SDI_SG_COPY:
        return copy_scratch_bytes(threads);
    default:
        return 0;
    }
}

int32_t sdi_sg_bin_threads(int kind, int g, int p, int threads, const sdi_sg_limits *lim)
{
    if (!is_group_kind(kind))
        return threads;
    const int64_t per_group = sdi_sg_smem_bytes(kind, g, p, g, SD_SG_PH_NUM);
    int64_t groups = threads / g;
    if (per_group > 0 && groups * per_group > lim->smem_max)
        groups = lim->smem_max / per_group;
    const int per_warp = 32 / g; /* whole warps: a CTA of partial warps wastes lanes */
    groups = groups / per_warp * per_warp;
    return groups >= per_warp ? (int32_t)(groups * g) : 0;
}

/* Largest log2 width of a CTA dense stripe / CTA hash table that fits in shared memory. */
static int cdense_max_lw(int threads, const sdi_sg_limits *lim)
{
    int lw = 5;
    while (lw < 20 && sdi_sg_smem_bytes(SDI_SG_CDENSE, 0, lw + 1, threads, SD_SG_PH_NUM) <=
                          lim->smem_max)
        lw++;
    return lw;
}
/* The wide CTA stripe's size code (sdi_sg_stripe_cols) for C's n columns: −W/32 with W = n
 * rounded up to 32, when the largest power-of-two stripe that fits (2^cd_max) is narrower
 * and W fits in shared memory; 0 when there is none. */
static int32_t cdense_wide_p(int32_t n, int threads, const sdi_sg_limits *lim, int cd_max)
{
    if (lim->no_wide)
        return 0;
    const int64_t w = ((int64_t)n + 31) / 32 * 32;
    if (w <= ((int64_t)1 << cd_max) || w / 32 > INT32_MAX)
        return 0;
    const int32_t p = -(int32_t)(w / 32);
    return sdi_sg_smem_bytes(SDI_SG_CDENSE, 0, p, threads, SD_SG_PH_NUM) <= lim->smem_max ? p : 0;
}

/* The CTA stripe for a row whose span needs 2^lspan columns (at least 2^10): a stripe as
 * wide as C (n rounded up to 32, size code −W/32) where the power of two is a third wider
 * than C or more and holds 2^13 columns or more. Every row fits it as well, in less shared
 * memory: the Belcastro_human_gene1 twin's 22,283 columns took 2^15-column stripes of
 * 132 KiB (one CTA an SM, latency-bound on the H200) where 22,304 columns take
 * 94 KiB (two). Smaller stripes leave the CTAs an SM to the threads, and keep their power
 * of two: one kernel for every product, not one per width. SPARSEDITTO_SG_WIDE=0
 * (lim->no_wide) keeps the powers of two. */
static int32_t cdense_p(int lspan, int32_t n, const sdi_sg_limits *lim)
{
    const int p = lspan < 10 ? 10 : lspan;
    const int64_t w = ((int64_t)n + 31) / 32 * 32;
    if (lim->no_wide || p < 13 || 4 * w > 3 * ((int64_t)1 << p))
        return p;
    return -(int32_t)(w / 32);
}

static int chash_fit_lcap(int threads, const sdi_sg_limits *lim)
{
    int lc = 5;
    while (lc < 20 && sdi_sg_smem_bytes(SDI_SG_CHASH, 0, lc + 1, threads, SD_SG_PH_NUM) <=
                          lim->smem_max)
        lc++;
    return lc;
}

static int ceil_log2(int64_t v)
{
    int l = 0;
    while (((int64_t)1 << l) < v)
        l++;
    return l;
}

static int lanes_for_u(int64_t u, int min_lanes)
{
    const int g = u <= 128 ? 8 : (u <= 512 ? 16 : 32);
    return g < min_lanes ? min_lanes : g;
}

/* ------------------------------------------------------------------ configuration */
sd_status sdi_spgemm_config_default(int family, sdi_spgemm_config *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm config: out is NULL");
    memset(out, 0, sizeof *out);
    if (family < 0 || family >= SDI_SPGEMM_NFAMILIES)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm config: unknown family %d", family);
    sdi_spgemm_config *c = out;
    c->family = family;
    c->threads = 256;
    c->ghash_max_lcap = 12;
    c->chash_max_lcap = 14;
    c->load_pct = 50;
    c->bt_gather = 1;
    c->force_kind = -1;
    switch (family) {
    case SDI_SPGEMM_HASH: /* nsparse-like: hash tables by capacity, two phases, a launch per bin */
        c->tiny_max = 0;
        c->one_phase_max_u = 0;
        c->fuse = 0;
        break;
    case SDI_SPGEMM_TILED:
        c->tiny_max = 32;
        c->one_phase_max_u = 512;
        c->fuse = 2;
        c->out_ub = 1;
        break;
    case SDI_SPGEMM_HYBRID:
        c->tiny_max = 32;
        c->gdense_max_lw = 11;
        c->dense_pct = 400;
        c->one_phase_max_u = 512;
        c->fuse = 1;
        c->out_ub = 1;
        break;
    case SDI_SPGEMM_DENSE:
        c->tiny_max = 8;
        c->gdense_max_lw = 11;
        c->dense_pct = 1600;
        c->one_phase_max_u = 0;
        c->fuse = 1;
        break;
    }
    return SD_OK;
}

sd_status sdi_spgemm_config_check(const sdi_spgemm_config *c)
{
    if (c == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm config: NULL");
#define BAD(...) return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm config: " __VA_ARGS__)
    if (c->family < 0 || c->family >= SDI_SPGEMM_NFAMILIES)
        BAD("family %d unknown", c->family);
    if (c->threads != 128 && c->threads != 256 && c->threads != 512)
        BAD("threads %d (128, 256 or 512)", c->threads);
    if (c->tiny_max != 0 && c->tiny_max != 8 && c->tiny_max != 32)
        BAD("tiny_max %d (0, 8 or 32)", c->tiny_max);
    if (c->ghash_max_lcap != 0 && (c->ghash_max_lcap < 6 || c->ghash_max_lcap > 12))
        BAD("ghash_max_lcap %d (0 or 6..12)", c->ghash_max_lcap);
    if (c->chash_max_lcap != 0 && (c->chash_max_lcap < 6 || c->chash_max_lcap > 14))
        BAD("chash_max_lcap %d (0 or 6..14)", c->chash_max_lcap);
    if (c->load_pct < 10 || c->load_pct > 100)
        BAD("load_pct %d (10..100)", c->load_pct);
    if (c->gdense_max_lw != 0 && (c->gdense_max_lw < 8 || c->gdense_max_lw > 11))
        BAD("gdense_max_lw %d (0 or 8..11)", c->gdense_max_lw);
    if (c->dense_pct < 0 || c->dense_pct > 100000)
        BAD("dense_pct %d", c->dense_pct);
    if (c->one_phase_max_u < 0)
        BAD("one_phase_max_u %d", c->one_phase_max_u);
    if (c->fuse < 0 || c->fuse > 2)
        BAD("fuse %d (0..2)", c->fuse);
    if ((c->out_ub != 0 && c->out_ub != 1) || (c->bt_gather != 0 && c->bt_gather != 1))
        BAD("out_ub / bt_gather must be 0 or 1");
    if (c->ws_budget < 0 || c->chunk_rows < 0)
        BAD("ws_budget / chunk_rows negative");
    if (c->fast_compile < -1 || c->fast_compile > 3)
        BAD("fast_compile %d (-1..3)", c->fast_compile);
    if (c->min_lanes != 0 && c->min_lanes != 8 && c->min_lanes != 16 && c->min_lanes != 32)
        BAD("min_lanes %d (0, 8, 16 or 32)", c->min_lanes);
    if (c->cta_u < 0)
        BAD("cta_u %d (0 = none, else products per row)", c->cta_u);
    if (c->warp_brow < -1 || c->warp_brow > 65536)
        BAD("warp_brow %d (-1 = off, 0 = the default, or 1..65536 products per entry)",
            c->warp_brow);
    if (c->force_kind < -1 || c->force_kind > SDI_SG_GLOBAL)
        BAD("force_kind %d", c->force_kind);
    if (c->force_kind >= 0) {
        switch (c->force_kind) {
        case SDI_SG_TINY:
            if (c->force_p != 8 && c->force_p != 32)
                BAD("forced tiny needs force_p 8 or 32 (got %d)", c->force_p);
            break;
        case SDI_SG_GHASH:
        case SDI_SG_GDENSE:
            if (c->force_g != 8 && c->force_g != 16 && c->force_g != 32)
                BAD("forced group kind needs force_g 8, 16 or 32 (got %d)", c->force_g);
            if (c->force_kind == SDI_SG_GHASH && (c->force_p < 6 || c->force_p > 12))
                BAD("forced ghash needs force_p 6..12 (got %d)", c->force_p);
            if (c->force_kind == SDI_SG_GDENSE && (c->force_p < 5 || c->force_p > 11))
                BAD("forced gdense needs force_p 5..11 (got %d)", c->force_p);
            break;
        case SDI_SG_CHASH:
            if (c->force_p < 6 || c->force_p > 14)
                BAD("forced chash needs force_p 6..14 (got %d)", c->force_p);
            break;
        case SDI_SG_CDENSE:
            /* or a wide stripe of W = −32·force_p columns (sdi_sg_stripe_cols) */
            if ((c->force_p < 5 || c->force_p > 15) && (c->force_p > -1 || c->force_p < -32768))
                BAD("forced cdense needs force_p 5..15, or -1..-32768 for a wide stripe of -32*force_p columns (got %d)",
                    c->force_p);
            break;
        default:
            break;
        }
    }
#undef BAD
    return SD_OK;
}

void sdi_spgemm_config_describe(const sdi_spgemm_config *c, char *buf, size_t cap)
{
    if (buf == NULL || cap == 0)
        return;
    int n = snprintf(buf, cap,
                     "%s T=%d tiny=%d lanes>=%d gh=%d ch=%d load=%d gd=%d dense=%d one=%d fuse=%d "
                     "ub=%d gather=%d",
                     sdi_spgemm_family_name(c->family), c->threads, c->tiny_max, c->min_lanes,
                     c->ghash_max_lcap, c->chash_max_lcap, c->load_pct, c->gdense_max_lw,
                     c->dense_pct, c->one_phase_max_u, c->fuse, c->out_ub, c->bt_gather);
    if (c->force_kind >= 0 && n > 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, " force=%s/g%d/p%d", sdi_sg_kind_name(c->force_kind),
                      c->force_g, c->force_p);
    if (c->warp_brow != 0 && n > 0 && (size_t)n < cap) {
        if (c->warp_brow < 0)
            n += snprintf(buf + n, cap - (size_t)n, " wb=off");
        else
            n += snprintf(buf + n, cap - (size_t)n, " wb=%d", c->warp_brow);
    }
    if (c->cta_u > 0 && n > 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, " cta>%d", c->cta_u);
    static const char *const fast[] = {"full", "", "min", "mid", "max"};
    if (c->fast_compile != 0 && c->fast_compile >= -1 && c->fast_compile <= 3 && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, " nvrtc=%s", fast[c->fast_compile + 1]);
}

/* ------------------------------------------------------------------ per-row rules */
void sdi_sg_classify(const sdi_spgemm_config *c, const sdi_sg_limits *lim, int32_t n, int64_t u,
                     int64_t span, int flags, int32_t *kind, int32_t *g, int32_t *p)
{
    *g = 0;
    *p = 0;
    if (c->force_kind >= 0) {
        *kind = c->force_kind;
        *p = c->force_kind == SDI_SG_GLOBAL ? 0 : c->force_p;
        *g = is_group_kind(c->force_kind) ? c->force_g : 0;
        return;
    }
    if (span > n)
        span = n;
    const int64_t bound = u < span ? u : span;
    if ((flags & SDI_SG_SPLIT_HEAVY) && u > SDI_SG_HEAVY_U) {
        *kind = SDI_SG_GLOBAL;
        return;
    }
    if (c->tiny_max >= 8 && u <= 8) {
        *kind = SDI_SG_TINY;
        *p = 8;
        return;
    }
    if (c->tiny_max >= 32 && u <= 32) {
        *kind = SDI_SG_TINY;
        *p = 32;
        return;
    }
    const int gl = lanes_for_u(u, c->min_lanes);
    /* A few long rows (SDI_SG_WARP_U), or the rows above the configuration's cta_u: no
     * lane group of their own. */
    const int groups = !(((flags & SDI_SG_FEW_LONG) && u > SDI_SG_WARP_U &&
                          (c->family == SDI_SPGEMM_HASH || c->family == SDI_SPGEMM_HYBRID)) ||
                         (c->cta_u > 0 && u > c->cta_u));
    const int cd_max = cdense_max_lw(c->threads, lim);
    const int lspan = ceil_log2(span);
    /* Dense stripe first where the span is narrow relative to the distinct columns: no
     * hashing, no sort (the bitmap scan yields sorted columns). */
    if (c->dense_pct > 0 && span * 100 <= (int64_t)c->dense_pct * bound) {
        if (groups && c->gdense_max_lw > 0 && lspan <= c->gdense_max_lw) {
            *kind = SDI_SG_GDENSE;
            *g = gl;
            *p = lspan < 8 ? 8 : lspan;
            return;
        }
        if (lspan <= cd_max) {
            *kind = SDI_SG_CDENSE;
            *p = cdense_p(lspan, n, lim);
            return;
        }
        const int32_t wide = cdense_wide_p(n, c->threads, lim, cd_max);
        if (wide != 0) { /* span ≤ n ≤ its width */
            *kind = SDI_SG_CDENSE;
            *p = wide;
            return;
        }
    }
    /* Hash tables sized by the bound at the configured load. */
    const int64_t need = (bound * 100 + c->load_pct - 1) / c->load_pct;
    int lcap = ceil_log2(need);
    if (lcap < 6)
        lcap = 6;
    if (groups && c->ghash_max_lcap > 0 && lcap <= c->ghash_max_lcap) {
        *kind = SDI_SG_GHASH;
        *g = gl;
        *p = lcap;
        return;
    }
    const int ch_fit = chash_fit_lcap(c->threads, lim);
    const int ch_max = c->chash_max_lcap < ch_fit ? c->chash_max_lcap : ch_fit;
    if (c->chash_max_lcap > 0 && lcap <= ch_max) {
        *kind = SDI_SG_CHASH;
        *p = lcap;
        return;
    }
    /* The fallbacks every family keeps: a CTA stripe in shared memory (as wide as C when
     * that fits), else in global memory. */
    if (lspan <= cd_max) {
        *kind = SDI_SG_CDENSE;
        *p = cdense_p(lspan, n, lim);
        return;
    }
    const int32_t wide = cdense_wide_p(n, c->threads, lim, cd_max);
    if (wide != 0) {
        *kind = SDI_SG_CDENSE;
        *p = wide;
        return;
    }
    *kind = SDI_SG_GLOBAL;
}

/* Does a row (u, span) fit the accumulator (kind, p)? Structural safety only: hash
 * tables must hold the bound, stripes the span, lists u. */
static int row_fits(int kind, int p, int64_t u, int64_t span, int64_t gwidth)
{
    const int64_t bound = u < span ? u : span;
    switch (kind) {
    case SDI_SG_TINY:
        return u <= p;
    case SDI_SG_GHASH:
    case SDI_SG_CHASH:
        return bound <= ((int64_t)1 << p);
    case SDI_SG_GDENSE:
    case SDI_SG_CDENSE:
        return span <= sdi_sg_stripe_cols(p);
    case SDI_SG_GLOBAL:
        return gwidth < 0 || span <= gwidth;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------ schedule */
void sdi_sg_schedule_free(sdi_sg_schedule *s)
{
    if (s == NULL)
        return;
    sdi_free(s->binrows);
    sdi_free(s->ub);
    memset(s, 0, sizeof *s);
}

/* Bin keys: kind × lanes (0, 8, 16, 32) × p (0 … 32) → a dense table. The wide CTA stripe
 * (p < 0, one width per schedule: it depends on C's columns only) takes CDENSE's unused
 * p = 0; the bin gets its p back from the rows' classification. */
#define KEY_LANES 4
#define KEY_P 33 /* p ≤ 32 (TINY's UT) */
static int lane_index(int g) { return g == 8 ? 1 : (g == 16 ? 2 : (g == 32 ? 3 : 0)); }
static int bin_key(int kind, int g, int p)
{
    return (kind * KEY_LANES + lane_index(g)) * KEY_P + (p < 0 ? 0 : p);
}

/* Rows per thread below which schedule building stays serial. */
#define SG_PAR_ROWS 65536

/* One row range's sums over the rows of one bin key. */
typedef struct {
    int64_t count, u_sum, u_max, span_max, bound_max;
    int32_t g, p; /* the first row's lanes and size code (p differs from the key's when < 0) */
} sg_key_sums;

/* Row i's column span (0 without products), at most n. */
static int64_t row_span(const sdi_sg_rowinfo *ri, int32_t i)
{
    const int64_t span = ri->u[i] > 0 ? (int64_t)ri->hi[i] - ri->lo[i] + 1 : 0;
    return span < ri->n ? span : ri->n;
}

static int64_t rows_per_cta(int kind, int g, int threads)
{
    if (kind == SDI_SG_TINY)
        return threads;
    if (is_group_kind(kind))
        return threads / g;
    return 1;
}

static int smem_class(int64_t b)
{
    return b <= 16 * 1024 ? 0 : (b <= 48 * 1024 ? 1 : (b <= 112 * 1024 ? 2 : 3));
}

/* The 32-entry register lists take ~128 registers a thread (ptxas, sm_90), which a
 * fused kernel would impose on every segment: they get launches of their own. */
static int heavy_registers(const sdi_sg_segment *g)
{
    return g->kind == SDI_SG_TINY && g->p > 8 && g->phase != SD_SG_PH_SYM;
}

/* Segments one fused launch holds at most: SPARSEDITTO_SG_FUSE_MAX (1 to SD_SG_MAX_SEGS,
 * the default). A fused launch is one NVRTC unit whose compile time grows with its
 * segments (dblp-2010's 14-segment unit: 4 s on the 2-core VM, 348 KB of cubin) and which
 * no other candidate shares; a cap trades launches for smaller, shared units. */
_Static_assert(SDI_CONFIG_SG_FUSE_MAX == SD_SG_MAX_SEGS, "the configuration's range of SG_FUSE_MAX");

/* Adds a segment to the stage's launches under the fusion rule (at most max_segs a launch). */
static sd_status add_segment(sdi_sg_schedule *s, int fuse, int max_segs, int stage, int threads,
                             const sdi_sg_segment *seg)
{
    if (seg->blocks <= 0)
        return SD_OK;
    for (int l = 0; fuse > 0 && l < s->nlaunches; l++) {
        sdi_sg_launch *L = &s->launches[l];
        if (L->stage != stage || L->threads != threads || L->nsegs >= max_segs)
            continue;
        if (fuse == 1 && smem_class(L->smem) != smem_class(seg->smem))
            continue;
        if (heavy_registers(&L->segs[0]) != heavy_registers(seg))
            continue;
        if (L->blocks + seg->blocks > 0x7fffffffll)
            continue;
        L->segs[L->nsegs++] = *seg;
        L->blocks += seg->blocks;
        if (seg->smem > L->smem)
            L->smem = seg->smem;
        return SD_OK;
    }
    if (s->nlaunches >= SDI_SG_MAX_LAUNCHES)
        return SDI_ERR(SD_ERR_INTERNAL, "spgemm schedule: more than %d launches",
                       SDI_SG_MAX_LAUNCHES);
    sdi_sg_launch *L = &s->launches[s->nlaunches++];
    memset(L, 0, sizeof *L);
    L->stage = stage;
    L->threads = threads;
    L->smem = seg->smem;
    L->blocks = seg->blocks;
    L->nsegs = 1;
    L->segs[0] = *seg;
    return SD_OK;
}

/* A bound of nnz(C): no row of C holds more entries than its products or its span. */
static int64_t c_bound(const sdi_sg_rowinfo *ri)
{
    int64_t bound = 0;
    for (int32_t i = 0; i < ri->m; i++)
        if (ri->u[i] > 0) {
            const int64_t span = (int64_t)ri->hi[i] - ri->lo[i] + 1;
            bound += ri->u[i] < span ? ri->u[i] : span;
        }
    return bound;
}

sd_status sdi_sg_schedule_build(const sdi_spgemm_config *c, const sdi_sg_limits *lim,
                                const sdi_sg_rowinfo *ri, sdi_sg_schedule *out)
{
    uint16_t *key_of = NULL;
    sg_key_sums *ks = NULL;
    int32_t *fill = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(key_of);                                                                  \
        sdi_free(ks);                                                                      \
        sdi_free(fill);                                                                    \
        sdi_sg_schedule_free(out);                                                         \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm schedule: out is NULL");
    memset(out, 0, sizeof *out);
    if (c == NULL || lim == NULL || ri == NULL || ri->m < 0 || ri->n < 0 ||
        (ri->m > 0 && (ri->u == NULL || ri->lo == NULL || ri->hi == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm schedule: NULL or negative input");
    SD_TRY(sdi_spgemm_config_check(c));
    /* Product rounds count in int32: T entries of A times B's longest row. */
    if (ri->b_row_max > 0 && ri->b_row_max > (int64_t)0x7fffffff / 1024)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "spgemm: a row of B holds %lld entries (at most %lld supported)",
                       (long long)ri->b_row_max, (long long)0x7fffffff / 1024);
    sdi_sg_schedule *s = out;
    s->m = ri->m;
    s->n = ri->n;
    s->fast = c->fast_compile;
    s->warp_brow = c->warp_brow;
    s->ntiles = ((int64_t)ri->m + SD_SG_SCAN_TILE - 1) / SD_SG_SCAN_TILE;
    const int64_t budget = c->ws_budget > 0 ? c->ws_budget : lim->mem_bytes / 4;

    /* Pass 1, over contiguous row ranges in parallel (12·10⁶ rows took ~0.3 s a
     * candidate serially): each row's accumulator key (kind, lanes, p) and each range's
     * sums per key. The bins are the keys present, in ascending key order (the canonical
     * order: the same bins give the same launches); pass 2 lists each bin's rows in row
     * order (range by range). The result does not depend on the number of threads. */
    enum { NKEYS = SDI_SG_NKINDS * KEY_LANES * KEY_P, NO_KEY = 0xffff };
    int64_t nheavy = 0, nlong = 0;
#pragma omp parallel for reduction(+ : nheavy, nlong) schedule(static) if (ri->m >= SG_PAR_ROWS)
    for (int32_t i = 0; i < ri->m; i++) {
        nheavy += ri->u[i] > SDI_SG_HEAVY_U;
        nlong += ri->u[i] > SDI_SG_WARP_U;
    }
    const int flags = (nheavy > 0 && nheavy <= 2ll * lim->sm_count ? SDI_SG_SPLIT_HEAVY : 0) |
                      (nlong > 0 && nlong <= 4ll * lim->sm_count ? SDI_SG_FEW_LONG : 0);
    int team = omp_get_max_threads();
    if ((int64_t)team > ri->m / SG_PAR_ROWS)
        team = (int)(ri->m / SG_PAR_ROWS);
    if (team < 1)
        team = 1;
    key_of = sdi_malloc_array((size_t)(ri->m > 0 ? ri->m : 1), sizeof *key_of);
    ks = sdi_calloc((size_t)team * NKEYS, sizeof *ks);
    fill = sdi_malloc_array((size_t)team * SDI_SG_MAX_BINS, sizeof *fill);
    SD_CHECK_ALLOC(key_of, "row keys");
    SD_CHECK_ALLOC(ks, "per-key row sums");
    SD_CHECK_ALLOC(fill, "bin offsets");
    s->nbinrows = ri->m;
    s->binrows = sdi_malloc_array((size_t)(ri->m > 0 ? ri->m : 1), sizeof(int32_t));
    SD_CHECK_ALLOC(s->binrows, "bin rows");
    int8_t key_bin[NKEYS]; /* the bin of each key present */
    int64_t bad_row = INT64_MAX; /* forced kind: the first row that does not fit */
    int too_many = 0;
#pragma omp parallel num_threads(team)
    {
        const int nt = omp_get_num_threads(), t = omp_get_thread_num();
        const int32_t r0 = (int32_t)((int64_t)ri->m * t / nt);
        const int32_t r1 = (int32_t)((int64_t)ri->m * (t + 1) / nt);
        sg_key_sums *mine = &ks[(size_t)t * NKEYS];
        int64_t my_bad = INT64_MAX;
        for (int32_t i = r0; i < r1; i++) {
            const int64_t u = ri->u[i];
            if (u <= 0) {
                key_of[i] = NO_KEY;
                continue;
            }
            const int64_t span = row_span(ri, i);
            int32_t kind, g, p;
            sdi_sg_classify(c, lim, ri->n, u, span, flags, &kind, &g, &p);
            if (c->force_kind >= 0 && !row_fits(kind, p, u, span, -1) && my_bad == INT64_MAX)
                my_bad = i;
            const int key = bin_key(kind, g, p);
            key_of[i] = (uint16_t)key;
            sg_key_sums *k = &mine[key];
            if (k->count++ == 0) {
                k->g = g; /* the bin's lanes and size: its first row's */
                k->p = p;
            }
            k->u_sum += u;
            if (u > k->u_max)
                k->u_max = u;
            if (span > k->span_max)
                k->span_max = span;
            const int64_t bound = u < span ? u : span;
            if (bound > k->bound_max)
                k->bound_max = bound;
        }
        if (my_bad != INT64_MAX) {
#pragma omp critical(sg_bad_row)
            if (my_bad < bad_row)
                bad_row = my_bad;
        }
#pragma omp barrier
#pragma omp single
        {
            /* The bins in key order; each range's first slot in each bin. */
            int32_t off = 0;
            for (int key = 0; key < NKEYS && !too_many; key++) {
                int64_t count = 0;
                for (int q = 0; q < nt; q++)
                    count += ks[(size_t)q * NKEYS + key].count;
                if (count == 0)
                    continue;
                if (s->nbins >= SDI_SG_MAX_BINS) {
                    too_many = 1;
                    break;
                }
                const int b = s->nbins++;
                sdi_sg_bin *bn = &s->bins[b];
                memset(bn, 0, sizeof *bn);
                bn->kind = key / (KEY_LANES * KEY_P);
                bn->p = key % KEY_P;
                bn->first = off;
                bn->nrows = (int32_t)count;
                int have_g = 0;
                for (int q = 0; q < nt; q++) {
                    const sg_key_sums *k = &ks[(size_t)q * NKEYS + key];
                    fill[(size_t)q * SDI_SG_MAX_BINS + b] = off;
                    off += (int32_t)k->count;
                    if (k->count == 0)
                        continue;
                    if (!have_g) {
                        bn->g = k->g;
                        bn->p = k->p;
                        have_g = 1;
                    }
                    bn->u_sum += k->u_sum;
                    if (k->u_max > bn->u_max)
                        bn->u_max = k->u_max;
                    if (k->span_max > bn->span_max)
                        bn->span_max = k->span_max;
                    if (k->bound_max > bn->bound_max)
                        bn->bound_max = k->bound_max;
                }
                key_bin[key] = (int8_t)b;
            }
            s->nempty = ri->m - off;
        }
        /* Pass 2: each range's rows into its slots of their bins, in row order. */
        if (!too_many && bad_row == INT64_MAX) {
            int32_t *slot = &fill[(size_t)t * SDI_SG_MAX_BINS];
            for (int32_t i = r0; i < r1; i++)
                if (key_of[i] != NO_KEY)
                    s->binrows[slot[key_bin[key_of[i]]]++] = i;
        }
    }
    if (bad_row != INT64_MAX) {
        const int32_t i = (int32_t)bad_row;
        const int64_t span = row_span(ri, i);
        int32_t kind, g, p;
        sdi_sg_classify(c, lim, ri->n, ri->u[i], span, flags, &kind, &g, &p);
        SD_FREE_ALL;
        const long long size = (long long)kind_size(kind, p);
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "spgemm schedule: row %d (u = %lld, span = %lld) does not fit the "
                       "forced %s of size %lld",
                       i, (long long)ri->u[i], (long long)span, sdi_sg_kind_name(kind), size);
    }
    if (too_many) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_INTERNAL, "spgemm schedule: more than %d bins", SDI_SG_MAX_BINS);
    }
    s->nbinrows = ri->m - s->nempty;
    for (int b = 0; b < s->nbins; b++) {
        s->u_total += (double)s->bins[b].u_sum;
        if (s->bins[b].u_max > s->u_max)
            s->u_max = s->bins[b].u_max;
    }

    /* One-phase bins within the budget: smallest rows first (they gain most from
     * skipping a pass; big rows would cost the most staging). */
    int64_t staging = 0;
    for (int b = 0; b < s->nbins; b++) {
        sdi_sg_bin *bn = &s->bins[b];
        bn->one_phase = bn->kind != SDI_SG_GLOBAL && bn->u_max <= c->one_phase_max_u;
        if (bn->one_phase)
            staging += bn->u_sum;
    }
    while (staging * 8 > budget / 2) {
        int worst = -1;
        for (int b = 0; b < s->nbins; b++)
            if (s->bins[b].one_phase && (worst < 0 || s->bins[b].u_max > s->bins[worst].u_max))
                worst = b;
        if (worst < 0)
            break;
        s->bins[worst].one_phase = 0;
        staging -= s->bins[worst].u_sum;
    }
    s->ub_total = staging;
    if (staging > 0) {
        s->ub = sdi_malloc_array((size_t)ri->m + 1, sizeof(int64_t));
        SD_CHECK_ALLOC(s->ub, "staging offsets");
        s->ub[0] = 0;
        for (int32_t i = 0; i < ri->m; i++)
            s->ub[i + 1] = s->ub[i] + (key_of[i] != NO_KEY && s->bins[key_bin[key_of[i]]].one_phase
                                           ? ri->u[i] : 0);
    }
    int all_one = 1;
    for (int b = 0; b < s->nbins; b++)
        if (!s->bins[b].one_phase)
            all_one = 0;
    s->out_ub = c->out_ub && all_one && s->ub_total > 0 && s->ub_total * 8 <= (512ll << 20);
    /* Two-phase rows under out_ub: C's arrays at a bound of nnz(C) before the kernels too.
     * The wait for nnz(C) between the scan and the numeric stage (a device-to-host copy,
     * the host's wake-up, two allocations and the stage's launches) is most of a small
     * product's time beyond its kernels (G51 on the H200: ~15 of 59 us, the measured
     * time less the launches that bench/ncu_launches.py reads from `sparseditto profile
     * G51.mtx.gz --op spgemm --keep DIR`). */
    s->eager_cap = 0;
    if (c->out_ub && !s->out_ub) {
        const int64_t bound = c_bound(ri);
        if (bound > 0 && bound * 8 <= (512ll << 20))
            s->eager_cap = bound;
    }

    /* Global stripes: as wide as the widest such row, as many slots as the budget left
     * allows (rows beyond run in later waves of the same CTAs). */
    int64_t gspan = 0, grows = 0;
    for (int b = 0; b < s->nbins; b++) {
        const sdi_sg_bin *bn = &s->bins[b];
        if (bn->kind == SDI_SG_CDENSE || bn->kind == SDI_SG_GDENSE || bn->kind == SDI_SG_GLOBAL)
            s->need_rowlo = 1;
        if (bn->kind == SDI_SG_GLOBAL) {
            if (bn->span_max > gspan)
                gspan = bn->span_max;
            grows += bn->nrows;
        }
    }
    if (grows > 0) {
        s->gwidth = (gspan + 31) / 32 * 32;
        s->grows = (int32_t)grows;
        const int64_t slot = s->gwidth * 4 + s->gwidth / 8;
        int64_t left = budget - staging * 8;
        int64_t slots = left > slot ? left / slot : 1;
        if (c->chunk_rows > 0 && slots > c->chunk_rows)
            slots = c->chunk_rows;
        if (slots >= grows && grows <= 65536) {
            /* Parts mode: a stripe per row and several CTAs per row, so that a row of
             * 10^6 products is not left to one CTA (the product loop is latency-bound):
             * windows of about 2^15 products. */
            int64_t gu = 0;
            for (int b = 0; b < s->nbins; b++)
                if (s->bins[b].kind == SDI_SG_GLOBAL && s->bins[b].u_max > gu)
                    gu = s->bins[b].u_max;
            int64_t parts = (gu + 32767) / 32768;
            if (parts > 512)
                parts = 512;
            if (parts < 1)
                parts = 1;
            while (parts > 1 && grows * parts > 0x7fffffffll / 2)
                parts /= 2;
            s->gslots = grows;
            s->gparts = (int32_t)parts;
        } else {
            if (slots > 4ll * lim->sm_count)
                slots = 4ll * lim->sm_count;
            if (slots > grows)
                slots = grows;
            if (slots < 1)
                slots = 1;
            s->gslots = slots;
            s->gparts = 0;
        }
    }
    s->ws_bytes = staging * 8 + s->gslots * (s->gwidth * 4 + s->gwidth / 8);

    /* Launch shapes of every bin, then the launches of both stages. */
    for (int b = 0; b < s->nbins; b++) {
        sdi_sg_bin *bn = &s->bins[b];
        bn->threads = sdi_sg_bin_threads(bn->kind, bn->g, bn->p, c->threads, lim);
        if (bn->threads <= 0) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_UNSUPPORTED,
                           "spgemm schedule: %s g=%d p=%d does not fit in %d bytes of shared "
                           "memory", sdi_sg_kind_name(bn->kind), bn->g, bn->p, lim->smem_max);
        }
        if (bn->kind == SDI_SG_GLOBAL) {
            bn->blocks = s->gparts > 0 ? bn->nrows * s->gparts : (int32_t)s->gslots;
        } else {
            const int64_t rpc = rows_per_cta(bn->kind, bn->g, bn->threads);
            bn->blocks = (int32_t)((bn->nrows + rpc - 1) / rpc);
        }
        bn->smem_sym = sdi_sg_smem_bytes(bn->kind, bn->g, bn->p, bn->threads, SD_SG_PH_SYM);
        bn->smem_num = sdi_sg_smem_bytes(bn->kind, bn->g, bn->p, bn->threads, SD_SG_PH_NUM);
        if (bn->smem_num > lim->smem_max) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_UNSUPPORTED,
                           "spgemm schedule: %s p=%d needs %lld bytes of shared memory (%d "
                           "available)", sdi_sg_kind_name(bn->kind), bn->p,
                           (long long)bn->smem_num, lim->smem_max);
        }
    }
    int any_two = 0, any_one = 0;
    const int max_segs = sdi_config_get()->sg_fuse_max;
    for (int b = 0; b < s->nbins; b++) {
        const sdi_sg_bin *bn = &s->bins[b];
        sdi_sg_segment seg = {.kind = bn->kind, .g = bn->g, .p = bn->p, .bin = b,
                              .blocks = bn->blocks, .first = bn->first, .nrows = bn->nrows};
        seg.phase = bn->one_phase ? SD_SG_PH_ONE : SD_SG_PH_SYM;
        seg.smem = bn->one_phase ? bn->smem_num : bn->smem_sym;
        any_one |= bn->one_phase;
        any_two |= !bn->one_phase;
        SD_TRY(add_segment(s, c->fuse, max_segs, 1, bn->threads, &seg));
    }
    for (int b = 0; b < s->nbins; b++) {
        const sdi_sg_bin *bn = &s->bins[b];
        if (bn->one_phase)
            continue;
        sdi_sg_segment seg = {.kind = bn->kind, .g = bn->g, .p = bn->p, .bin = b,
                              .phase = SD_SG_PH_NUM, .blocks = bn->blocks, .smem = bn->smem_num,
                              .first = bn->first, .nrows = bn->nrows};
        SD_TRY(add_segment(s, c->fuse, max_segs, 2, bn->threads, &seg));
    }
    if (any_one && !s->out_ub) {
        sdi_sg_segment seg = {.kind = SDI_SG_COPY, .bin = -1, .phase = SD_SG_PH_NUM,
                              .blocks = (int32_t)s->ntiles,
                              .smem = sdi_sg_smem_bytes(SDI_SG_COPY, 0, 0, c->threads,
                                                        SD_SG_PH_NUM),
                              .first = 0, .nrows = (int32_t)s->ntiles};
        SD_TRY(add_segment(s, c->fuse, max_segs, 2, c->threads, &seg));
    }
    (void)any_two;
    for (int l = 0; l < s->nlaunches; l++)
        s->launches[l].resident = sdi_sg_resident_ctas(lim, s->launches[l].threads,
                                                       s->launches[l].smem);
    sdi_free(key_of);
    sdi_free(ks);
    sdi_free(fill);
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_sg_schedule_verify(const sdi_spgemm_config *c, const sdi_sg_limits *lim,
                                 const sdi_sg_rowinfo *ri, const sdi_sg_schedule *s)
{
    uint8_t *seen = NULL;
#define SD_FREE_ALL sdi_free(seen)
#define FAIL(...)                                                                          \
    do {                                                                                   \
        SD_FREE_ALL;                                                                       \
        return SDI_ERR(SD_ERR_INTERNAL, "spgemm schedule: " __VA_ARGS__);                  \
    } while (0)
    if (s->m != ri->m || s->n != ri->n)
        FAIL("sizes %dx%d, expected %dx%d", s->m, s->n, ri->m, ri->n);
    seen = sdi_calloc((size_t)(ri->m > 0 ? ri->m : 1), 1);
    SD_CHECK_ALLOC(seen, "verify marks");
    int64_t nonempty = 0;
    for (int32_t i = 0; i < ri->m; i++)
        nonempty += ri->u[i] > 0;
    if (nonempty != s->nbinrows || s->nempty != ri->m - nonempty)
        FAIL("%lld rows have products but %d are binned", (long long)nonempty, s->nbinrows);
    int32_t expect_first = 0;
    for (int b = 0; b < s->nbins; b++) {
        const sdi_sg_bin *bn = &s->bins[b];
        if (bn->first != expect_first)
            FAIL("bin %d starts at %d, expected %d", b, bn->first, expect_first);
        expect_first += bn->nrows;
        if (bn->nrows <= 0)
            FAIL("bin %d is empty", b);
        if (bn->kind == SDI_SG_TINY && bn->threads != c->threads)
            FAIL("bin %d: tiny rows at %d threads", b, bn->threads);
        for (int32_t x = bn->first; x < bn->first + bn->nrows; x++) {
            const int32_t i = s->binrows[x];
            if (i < 0 || i >= ri->m)
                FAIL("bin %d holds row %d out of range", b, i);
            if (seen[i])
                FAIL("row %d is binned twice", i);
            seen[i] = 1;
            const int64_t u = ri->u[i];
            const int64_t span = row_span(ri, i);
            if (u <= 0)
                FAIL("row %d has no products but sits in bin %d", i, b);
            if (!row_fits(bn->kind, bn->p, u, span, s->gwidth))
                FAIL("row %d (u %lld, span %lld) does not fit bin %d (%s p=%d)", i,
                     (long long)u, (long long)span, b, sdi_sg_kind_name(bn->kind), bn->p);
            if (c->force_kind < 0 && (bn->kind == SDI_SG_GHASH || bn->kind == SDI_SG_CHASH)) {
                const int64_t bound = u < span ? u : span;
                if (bound * 100 > ((int64_t)c->load_pct << bn->p))
                    FAIL("row %d: bound %lld over the load of bin %d", i, (long long)bound, b);
            }
            if (bn->kind == SDI_SG_GDENSE || bn->kind == SDI_SG_CDENSE ||
                bn->kind == SDI_SG_GLOBAL) {
                if (!s->need_rowlo)
                    FAIL("dense bin %d without row origins", b);
            }
            if (s->ub != NULL) {
                const int64_t len = s->ub[i + 1] - s->ub[i];
                if (len != (bn->one_phase ? u : 0))
                    FAIL("row %d: staging length %lld, expected %lld", i, (long long)len,
                         (long long)(bn->one_phase ? u : 0));
            } else if (bn->one_phase) {
                FAIL("one-phase bin %d without staging", b);
            }
        }
        if (bn->kind == SDI_SG_GLOBAL) {
            if (s->gparts > 0 ? (bn->blocks != bn->nrows * s->gparts || s->gslots < bn->nrows)
                              : (bn->blocks < 1 || bn->blocks > bn->nrows))
                FAIL("global bin %d with %d blocks (%d parts, %lld slots) for %d rows", b,
                     bn->blocks, s->gparts, (long long)s->gslots, bn->nrows);
        } else if ((int64_t)bn->blocks * rows_per_cta(bn->kind, bn->g, bn->threads) < bn->nrows) {
            FAIL("bin %d: %d blocks cannot cover %d rows", b, bn->blocks, bn->nrows);
        }
    }
    for (int32_t i = 0; i < ri->m; i++)
        if (ri->u[i] > 0 && !seen[i])
            FAIL("row %d has products but no bin", i);
    /* Every bin appears once per pass it needs; launches are uniform in threads. */
    int sym_seen[SDI_SG_MAX_BINS] = {0}, num_seen[SDI_SG_MAX_BINS] = {0}, copies = 0;
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        if (L->nsegs < 1 || L->nsegs > SD_SG_MAX_SEGS)
            FAIL("launch %d has %d segments", l, L->nsegs);
        if (L->smem > lim->smem_max)
            FAIL("launch %d needs %lld bytes of shared memory", l, (long long)L->smem);
        int64_t blocks = 0;
        for (int q = 0; q < L->nsegs; q++) {
            const sdi_sg_segment *g = &L->segs[q];
            blocks += g->blocks;
            if (g->smem > L->smem)
                FAIL("launch %d segment %d needs more shared memory than the launch", l, q);
            if (g->kind == SDI_SG_COPY) {
                copies++;
                if (L->stage != 2 || g->blocks != s->ntiles)
                    FAIL("copy segment in stage %d with %d blocks", L->stage, g->blocks);
                continue;
            }
            const sdi_sg_bin *bn = &s->bins[g->bin];
            if (bn->threads != L->threads)
                FAIL("launch %d (T=%d) holds bin %d of T=%d", l, L->threads, g->bin, bn->threads);
            if (L->stage == 1) {
                sym_seen[g->bin]++;
                if (g->phase != (bn->one_phase ? SD_SG_PH_ONE : SD_SG_PH_SYM))
                    FAIL("bin %d has phase %d in stage 1", g->bin, g->phase);
            } else {
                num_seen[g->bin]++;
                if (bn->one_phase || g->phase != SD_SG_PH_NUM)
                    FAIL("bin %d in stage 2 with phase %d", g->bin, g->phase);
            }
        }
        if (blocks != L->blocks)
            FAIL("launch %d counts %lld blocks, segments %lld", l, (long long)L->blocks,
                 (long long)blocks);
    }
    int any_one = 0;
    for (int b = 0; b < s->nbins; b++) {
        if (sym_seen[b] != 1)
            FAIL("bin %d appears %d times in stage 1", b, sym_seen[b]);
        if (num_seen[b] != (s->bins[b].one_phase ? 0 : 1))
            FAIL("bin %d appears %d times in stage 2", b, num_seen[b]);
        any_one |= s->bins[b].one_phase;
    }
    if (copies != (any_one && !s->out_ub && s->ntiles > 0 ? 1 : 0))
        FAIL("%d copy segments", copies);
    if (s->out_ub && !any_one)
        FAIL("upper-bound output without one-phase rows");
    /* The numeric stage writes C before anyone knows nnz(C): the bound must hold. */
    if (s->eager_cap > 0 && (s->out_ub || s->eager_cap != c_bound(ri)))
        FAIL("eager output of %lld entries (bound %lld, ub-out %d)", (long long)s->eager_cap,
             (long long)c_bound(ri), s->out_ub);
#undef FAIL
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

void sdi_sg_schedule_describe(const sdi_sg_schedule *s, char *buf, size_t cap)
{
    if (buf == NULL || cap == 0)
        return;
    size_t o = 0;
    buf[0] = '\0';
    for (int b = 0; b < s->nbins && o + 1 < cap; b++) {
        const sdi_sg_bin *bn = &s->bins[b];
        char shape[48]; /* "w%lld/%lldslots" at its widest */
        if (bn->kind == SDI_SG_GLOBAL && s->gparts > 0)
            snprintf(shape, sizeof shape, "w%lldx%dparts", (long long)s->gwidth, s->gparts);
        else if (bn->kind == SDI_SG_GLOBAL)
            snprintf(shape, sizeof shape, "w%lld/%lldslots", (long long)s->gwidth,
                     (long long)s->gslots);
        else if (bn->g > 0)
            snprintf(shape, sizeof shape, "g%d/%lld", bn->g, (long long)kind_size(bn->kind, bn->p));
        else
            snprintf(shape, sizeof shape, "%lld", (long long)kind_size(bn->kind, bn->p));
        int w = snprintf(buf + o, cap - o, "%s%s%s:%d%s", o > 0 ? " " : "",
                         sdi_sg_kind_name(bn->kind), shape, bn->nrows, bn->one_phase ? "(1p)" : "");
        if (w < 0)
            break;
        o += (size_t)w;
    }
    if (o + 1 < cap) {
        int st1 = 0, st2 = 0;
        for (int l = 0; l < s->nlaunches; l++) {
            if (s->launches[l].stage == 1)
                st1++;
            else
                st2++;
        }
        snprintf(buf + o, cap - o, "%slaunches %d+scan+%d%s", o > 0 ? " | " : "", st1, st2,
                 s->out_ub ? " ub-out" : s->eager_cap > 0 ? " eager-out" : "");
    }
}

void sdi_sg_schedule_json(const sdi_sg_schedule *s, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "bins");
    sdi_json_begin_array(j);
    for (int b = 0; b < s->nbins; b++) {
        const sdi_sg_bin *bn = &s->bins[b];
        sdi_json_begin_object(j);
        sdi_json_key(j, "kind");
        sdi_json_string(j, sdi_sg_kind_name(bn->kind));
        sdi_json_key(j, "lanes");
        sdi_json_int(j, bn->g);
        sdi_json_key(j, "size");
        sdi_json_int(j, bn->kind == SDI_SG_GLOBAL ? s->gwidth : kind_size(bn->kind, bn->p));
        sdi_json_key(j, "rows");
        sdi_json_int(j, bn->nrows);
        sdi_json_key(j, "one_phase");
        sdi_json_bool(j, bn->one_phase != 0);
        sdi_json_key(j, "threads");
        sdi_json_int(j, bn->threads);
        sdi_json_key(j, "u_max");
        sdi_json_int(j, bn->u_max);
        sdi_json_key(j, "span_max");
        sdi_json_int(j, bn->span_max);
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_key(j, "launches_stage1");
    int st1 = 0, st2 = 0;
    for (int l = 0; l < s->nlaunches; l++) {
        if (s->launches[l].stage == 1)
            st1++;
        else
            st2++;
    }
    sdi_json_int(j, st1);
    sdi_json_key(j, "launches_stage2");
    sdi_json_int(j, st2);
    sdi_json_key(j, "out_ub");
    sdi_json_bool(j, s->out_ub != 0);
    sdi_json_key(j, "out_eager"); /* C at a bound of nnz(C): no wait before stage 2 */
    sdi_json_int(j, s->eager_cap);
    sdi_json_key(j, "staging_entries");
    sdi_json_int(j, s->ub_total);
    sdi_json_key(j, "global_slots");
    sdi_json_int(j, s->gslots);
    sdi_json_key(j, "global_parts");
    sdi_json_int(j, s->gparts);
    sdi_json_key(j, "global_width");
    sdi_json_int(j, s->gwidth);
    sdi_json_key(j, "empty_rows");
    sdi_json_int(j, s->nempty);
    /* each launch with its residency: a launch holds the shared memory of its largest
     * segment, so a fused launch runs every segment at that occupancy */
    sdi_json_key(j, "launches");
    sdi_json_begin_array(j);
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        sdi_json_begin_object(j);
        sdi_json_key(j, "stage");
        sdi_json_int(j, L->stage);
        sdi_json_key(j, "threads");
        sdi_json_int(j, L->threads);
        sdi_json_key(j, "segments");
        sdi_json_int(j, L->nsegs);
        sdi_json_key(j, "blocks");
        sdi_json_int(j, L->blocks);
        sdi_json_key(j, "smem");
        sdi_json_int(j, L->smem);
        sdi_json_key(j, "resident_ctas");
        sdi_json_int(j, L->resident);
        sdi_json_key(j, "resident_warps");
        sdi_json_int(j, (int64_t)L->resident * L->threads / 32);
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_end_object(j);
}

/* ------------------------------------------------------------------ enumeration */
void sdi_sg_summarize(const sdi_sg_rowinfo *ri, sdi_sg_summary *out)
{
    memset(out, 0, sizeof *out);
    out->m = ri->m;
    out->n = ri->n;
    int64_t nonempty = 0, tiny = 0, narrow = 0;
    for (int32_t i = 0; i < ri->m; i++) {
        const int64_t u = ri->u[i];
        if (u <= 0)
            continue;
        nonempty++;
        out->u_total += (double)u;
        if (u > out->u_max)
            out->u_max = u;
        if (u <= 32)
            tiny++;
        const int64_t span = row_span(ri, i);
        const int64_t bound = u < span ? u : span;
        if (span <= 4 * bound && span <= 2048)
            narrow++;
    }
    if (nonempty > 0) {
        out->frac_tiny = (double)tiny / (double)nonempty;
        out->frac_narrow = (double)narrow / (double)nonempty;
    }
}

/* Variants of a family preset at sweep position v (0 = the preset). Returns 0 when v is
 * past the family's sweep at this level. Small products are launch- and latency-bound:
 * one phase, one launch per stage, C at the upper bound, and many lanes per row; large
 * ones are throughput-bound: the sweep moves phases, threads and loads. */
static int family_variant(int family, const sdi_sg_summary *sm, int level, int v,
                          sdi_spgemm_config *c)
{
    if (sdi_spgemm_config_default(family, c) != SD_OK)
        return 0;
    const int small = sm->u_total < 4e6;
    /* Each entry edits the preset; −1 leaves a field alone. */
    struct edit {
        int threads, one, fuse, load, tiny, lanes, gh;
    };
    /* Small products: a whole warp per row, then the same with one phase up to 32 products
     * in one launch a stage (third: the search's level-1 sweep takes three entries a family
     * at the default budget). From the wide sweep's 7th place that entry wins 14 of the 58
     * paper-60 products, and a refinement one slot shorter for the winner's edits stops one
     * short of it (Schenk_IBMNA_c-38 115 -> 260 us on the H200; `sparseditto bench --set
     * paper60 --ops spgemm`). A warp of 16 lanes a row is in the wide sweep. */
    static const struct edit small_sweep[] = {
        {-1, -1, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, 0, 32, -1}, {-1, 32, 1, -1, 0, 32, -1},
        {-1, 0, 1, -1, -1, -1, -1}};
    static const struct edit big_sweep[] = {
        {-1, -1, -1, -1, -1, -1, -1}, {-1, 0, 1, -1, -1, -1, -1}, {512, -1, -1, -1, -1, -1, -1},
        {-1, 32, 1, -1, 0, 32, -1}};
    /* gh = 10 third: rows whose table needs more than 2^10 slots go to a CTA-wide table
     * instead of one warp's (on power-law products those few heavy rows in warp tables are
     * a tail of 17-49 busy SMs for 330-400 us: H200, Nsight Compute through `sparseditto
     * profile --gen powerlaw:rows=200000,deg=12,alpha=1.9,max=20000 --op spgemm`). */
    static const struct edit wide_sweep[] = {
        {-1, -1, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, 0, 32, -1}, {-1, -1, -1, -1, -1, -1, 10},
        {-1, 0, 1, -1, -1, -1, -1}, {512, -1, -1, -1, -1, -1, -1}, {128, -1, -1, -1, -1, -1, -1},
        {-1, 32, 1, -1, 0, 32, -1}, {-1, -1, -1, 35, -1, -1, -1}, {-1, -1, -1, 70, -1, -1, -1},
        {-1, 4096, 2, -1, -1, -1, -1}, {-1, -1, -1, -1, 0, 16, -1}, {-1, 0, 0, 35, -1, -1, -1},
        {512, 0, 1, -1, 0, 32, -1}, {-1, 32, 1, -1, 0, 32, 10}};
    int count;
    const struct edit *e;
    if (level <= 0) {
        count = 1;
        e = small_sweep;
    } else if (level == 1) {
        count = 4;
        e = small ? small_sweep : big_sweep;
    } else {
        count = (int)(sizeof wide_sweep / sizeof wide_sweep[0]);
        e = wide_sweep;
    }
    if (v >= count)
        return 0;
    if (small && family != SDI_SPGEMM_HASH) {
        c->one_phase_max_u = 4096; /* staging is cheap for small products */
        c->fuse = 2;
        c->out_ub = 1;
        c->bt_gather = 0; /* B = Aᵀ read through the permutation: one launch fewer */
    }
    if (e[v].threads > 0)
        c->threads = e[v].threads;
    if (e[v].one >= 0)
        c->one_phase_max_u = e[v].one;
    if (e[v].fuse >= 0)
        c->fuse = e[v].fuse;
    if (e[v].load > 0)
        c->load_pct = e[v].load;
    if (e[v].tiny >= 0)
        c->tiny_max = e[v].tiny;
    if (e[v].lanes >= 0)
        c->min_lanes = e[v].lanes;
    if (e[v].gh >= 0 && c->ghash_max_lcap > e[v].gh)
        c->ghash_max_lcap = e[v].gh; /* only lowers a cap (0 = no group tables stays 0) */
    return 1;
}

sd_status sdi_spgemm_enumerate(const sdi_sg_summary *sm, uint32_t fam_mask, int level, int cap,
                               sdi_spgemm_config **out, int *n)
{
    if (out == NULL || n == NULL || sm == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm enumerate: NULL argument");
    *out = NULL;
    *n = 0;
    if (cap <= 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm enumerate: cap %d", cap);
    if (fam_mask == 0)
        fam_mask = (1u << SDI_SPGEMM_NFAMILIES) - 1u;
    sdi_spgemm_config *list = sdi_malloc_array((size_t)cap, sizeof *list);
    if (list == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for spgemm candidates");
    int count = 0;
    for (int v = 0; count < cap; v++) {
        int any = 0;
        for (int f = 0; f < SDI_SPGEMM_NFAMILIES && count < cap; f++) {
            if (!(fam_mask & (1u << f)))
                continue;
            sdi_spgemm_config c;
            if (!family_variant(f, sm, level, v, &c))
                continue;
            any = 1;
            int dup = 0;
            for (int q = 0; q < count && !dup; q++)
                dup = memcmp(&list[q], &c, sizeof c) == 0;
            if (!dup && sdi_spgemm_config_check(&c) == SD_OK)
                list[count++] = c;
        }
        if (!any)
            break;
    }
    *out = list;
    *n = count;
    return SD_OK;
}

int sdi_spgemm_transfer_threads(const sdi_spgemm_config *won, double won_us, double preset_us,
                                const sdi_spgemm_config *bests, int nb, sdi_spgemm_config *out)
{
    sdi_spgemm_config preset;
    if (won == NULL || bests == NULL || out == NULL || nb <= 0 || !(won_us > 0) ||
        !(preset_us > 0) || sdi_spgemm_config_default(won->family, &preset) != SD_OK) {
        sdi_error_clear();
        return 0;
    }
    if (won->threads == preset.threads || won_us > (1.0 - SDI_SG_TRANSFER_GAIN) * preset_us)
        return 0;
    int n = 0;
    for (int i = 0; i < nb; i++) {
        if (bests[i].family == won->family || bests[i].threads == won->threads)
            continue;
        out[n] = bests[i];
        out[n].threads = won->threads;
        if (sdi_spgemm_config_check(&out[n]) == SD_OK)
            n++;
        sdi_error_clear();
    }
    return n;
}
