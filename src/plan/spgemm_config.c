/* src/plan/spgemm_config.c: the SpGEMM configuration: family and kind names, the GPU's
 * limits for binning, shared-memory sizes of the accumulators, checks and the one-line
 * description of a configuration, the per-row accumulator rules (sdi_sg_classify), and the
 * search's helpers that read presets (CTA-size transfer, deterministic candidates, the
 * NVRTC level of candidates). The presets and sweeps are the families'
 * (src/plan/families/spgemm_*.c); binning is spgemm_schedule.c. */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "family.h"
#include "spgemm.h"

/* ------------------------------------------------------------------ names */
/* The entry of SpGEMM family f (NULL when none). */
static const sdi_family *spgemm_family(int f)
{
    if (f < 0 || f >= SDI_SPGEMM_NFAMILIES)
        return NULL;
    return sdi_family_at(sdi_family_of(SD_OP_SPGEMM, f));
}

const char *sdi_spgemm_family_name(int f)
{
    const sdi_family *e = spgemm_family(f);
    return e != NULL ? e->name : "unknown";
}

int sdi_spgemm_family_from_name(const char *name)
{
    if (name == NULL)
        return -1;
    const sdi_family *e = sdi_family_at(sdi_family_find(SD_OP_SPGEMM, name));
    return e != NULL && e->op == SD_OP_SPGEMM ? e->id : -1;
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

int64_t sdi_sg_smem_bytes(int kind, int g, int p, int threads, int phase)
{
    const int sym = phase == SD_SG_PH_SYM;
    const int64_t size = sdi_sg_kind_size(kind, p);
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
#define SD_FREE_ALL (void)0
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm config: out is NULL");
    memset(out, 0, sizeof *out);
    const sdi_family *e = spgemm_family(family);
    if (e == NULL || e->defaults == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm config: unknown family %d", family);
    /* A SpGEMM preset reads nothing of the task. */
    static const sdi_gpu_props no_gpu;
    const sdi_task t = {.op = SD_OP_SPGEMM, .k = 1, .gpu = &no_gpu};
    sdi_plan p;
    SD_TRY(e->defaults(&t, &p));
    *out = p.p.spgemm;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_spgemm_plan_of(const sdi_spgemm_config *c, sdi_plan *out)
{
    if (c == NULL || out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm plan: NULL argument");
    memset(out, 0, sizeof *out);
    const int index = spgemm_family(c->family) != NULL ? sdi_family_of(SD_OP_SPGEMM, c->family) : -1;
    if (index < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm plan: unknown family %d", c->family);
    out->op = SD_OP_SPGEMM;
    out->k = 1;
    out->family = index;
    out->p.spgemm = *c;
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

/* ------------------------------------------------------------------ the search's helpers */
int sdi_spgemm_deterministic_configs(const sdi_sg_summary *sm, sdi_spgemm_config *out, int cap)
{
    if (sm == NULL || sm->u_max > 32)
        return 0;
    int n = 0;
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES && n < cap; f++) {
        sdi_spgemm_config c;
        if (sdi_spgemm_config_default(f, &c) != SD_OK) {
            sdi_error_clear();
            continue;
        }
        c.force_kind = SDI_SG_TINY;
        c.force_p = sm->u_max <= 8 ? 8 : 32;
        c.force_g = 0;
        if (sdi_spgemm_config_check(&c) == SD_OK)
            out[n++] = c;
        sdi_error_clear();
    }
    return n;
}

sd_status sdi_spgemm_search_fast_level(const sdi_sg_summary *sm, int *level)
{
    *level = 0;
    /* a search without a context (the offline plans) reports a bad knob here */
    sd_status s = sdi_config_status();
    if (s != SD_OK)
        return s;
    if (!sdi_config_is_set("SPARSEDITTO_SEARCH_FAST")) {
        /* Large products: NVRTC is a small part of their search (af_shell10's twin: 2.4 s of
         * 113 s) and min-built candidates ran 24 % slower than the winner rebuilt at full
         * (380 vs 289 ms), so they are ranked as they will run. */
        *level = sdi_config_is_set("SPARSEDITTO_NVRTC_FAST") || sm->u_total > SDI_SG_BIG_PRODUCTS ? 0 : 1;
        return SD_OK;
    }
    *level = sdi_config_get()->search_fast;
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
