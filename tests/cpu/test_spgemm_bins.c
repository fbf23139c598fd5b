/* tests/cpu/test_spgemm_bins.c: SpGEMM plan families on the CPU: configuration presets
 * and checks, the per-row accumulator rules (tiny lists, hash capacities by the bound
 * and the load, dense stripes by the span, CTA and global fallbacks), schedules (every
 * row with products in exactly one bin that fits it, staging offsets, launch fusion and its cap,
 * shared-memory limits, global-stripe waves within the budget), candidate enumeration,
 * the same schedule at any thread count, the CTA-size transfer of large products, and
 * allocation-failure safety. */
#include <omp.h>

#include "lower/spgemm_units.h"
#include "plan/spgemm.h"
#include "sdt.h"

static sdi_sg_limits h200_limits(void)
{
    sdi_gpu_props p;
    sdi_gpu_profile("H200", &p);
    sdi_sg_limits lim;
    sdi_sg_limits_from_props(&p, &lim);
    return lim;
}

static sdi_spgemm_config preset(int f)
{
    sdi_spgemm_config c;
    sdi_spgemm_config_default(f, &c);
    return c;
}

/* c passes the checks, and its description names `want` (or, with want NULL, not `absent`). */
static void described(const sdi_spgemm_config *c, const char *want, const char *absent)
{
    char buf[256];
    SDT_OK(sdi_spgemm_config_check(c));
    sdi_spgemm_config_describe(c, buf, sizeof buf);
    if (want != NULL)
        SDT_CHECK(strstr(buf, want) != NULL, "'%s' does not say '%s'", buf, want);
    else
        SDT_CHECK(strstr(buf, absent) == NULL, "'%s' says '%s'", buf, absent);
}

static void test_presets_and_checks(void)
{
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c;
        SDT_OK(sdi_spgemm_config_default(f, &c));
        SDT_OK(sdi_spgemm_config_check(&c));
        SDT_CHECK(sdi_spgemm_family_from_name(sdi_spgemm_family_name(f)) == f, "name round trip %d", f);
        char buf[256];
        sdi_spgemm_config_describe(&c, buf, sizeof buf);
        SDT_CHECK(strstr(buf, sdi_spgemm_family_name(f)) != NULL, "describe '%s'", buf);
    }
    SDT_CHECK(sdi_spgemm_family_from_name("nope") == -1, "unknown family");
    SDT_STATUS(sdi_spgemm_config_default(99, &(sdi_spgemm_config){0}), SD_ERR_INVALID_ARG);
    struct {
        int field;
        int value;
        const char *word;
    } bad[] = {{0, 100, "threads"}, {1, 16, "tiny_max"}, {2, 13, "ghash_max_lcap"},
               {3, 15, "chash_max_lcap"}, {4, 5, "load_pct"}, {5, 12, "gdense_max_lw"},
               {6, 3, "fuse"}, {7, 2, "out_ub"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
        switch (bad[k].field) {
        case 0: c.threads = bad[k].value; break;
        case 1: c.tiny_max = bad[k].value; break;
        case 2: c.ghash_max_lcap = bad[k].value; break;
        case 3: c.chash_max_lcap = bad[k].value; break;
        case 4: c.load_pct = bad[k].value; break;
        case 5: c.gdense_max_lw = bad[k].value; break;
        case 6: c.fuse = bad[k].value; break;
        default: c.out_ub = bad[k].value; break;
        }
        SDT_STATUS(sdi_spgemm_config_check(&c), SD_ERR_INVALID_ARG);
        SDT_CHECK(strstr(sd_last_error(), bad[k].word) != NULL, "message '%s' names %s",
                  sd_last_error(), bad[k].word);
    }
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    c.force_kind = SDI_SG_GHASH;
    c.force_g = 12;
    c.force_p = 8;
    SDT_STATUS(sdi_spgemm_config_check(&c), SD_ERR_INVALID_ARG);
    c.force_g = 16;
    SDT_OK(sdi_spgemm_config_check(&c));
    c.force_p = 13;
    SDT_STATUS(sdi_spgemm_config_check(&c), SD_ERR_INVALID_ARG);
    /* The NVRTC level: -1..3, named in the description only when set. */
    c = preset(SDI_SPGEMM_HYBRID);
    described(&c, NULL, "nvrtc=");
    c.fast_compile = 1;
    described(&c, " nvrtc=min", NULL);
    c.fast_compile = -1;
    described(&c, " nvrtc=full", NULL);
    c.fast_compile = 4;
    SDT_STATUS(sdi_spgemm_config_check(&c), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "fast_compile") != NULL, "message names fast_compile");
    /* The warp per B row: 0 (the template's threshold) is every preset's and undescribed;
     * -1 = off and a threshold are described; below -1 or past 65536 refused. */
    c = preset(SDI_SPGEMM_HYBRID);
    SDT_CHECK(c.warp_brow == 0, "preset warp_brow %d", c.warp_brow);
    described(&c, NULL, "wb=");
    c.warp_brow = -1;
    described(&c, " wb=off", NULL);
    c.warp_brow = 128;
    described(&c, " wb=128", NULL);
    const int32_t bad_wb[] = {-2, 65537};
    for (size_t k = 0; k < 2; k++) {
        c.warp_brow = bad_wb[k];
        SDT_STATUS(sdi_spgemm_config_check(&c), SD_ERR_INVALID_ARG);
        SDT_CHECK(strstr(sd_last_error(), "warp_brow") != NULL, "message names warp_brow");
    }
    /* CTA teams above cta_u products: 0 (every preset) undescribed, a threshold described,
     * negative refused. */
    c = preset(SDI_SPGEMM_DENSE);
    SDT_CHECK(c.cta_u == 0, "preset cta_u %d", c.cta_u);
    described(&c, NULL, "cta>");
    c.cta_u = 512;
    described(&c, " cta>512", NULL);
    c.cta_u = -1;
    SDT_STATUS(sdi_spgemm_config_check(&c), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "cta_u") != NULL, "message names cta_u");
}

static void classify(const sdi_spgemm_config *c, int64_t u, int64_t span, int want_kind,
                     int want_g, int want_p)
{
    const sdi_sg_limits lim = h200_limits();
    int32_t kind, g, p;
    sdi_sg_classify(c, &lim, 1 << 24, u, span, 0, &kind, &g, &p);
    SDT_CHECK(kind == want_kind && g == want_g && p == want_p,
              "%s u=%lld span=%lld: got %s g=%d p=%d, want %s g=%d p=%d",
              sdi_spgemm_family_name(c->family), (long long)u, (long long)span,
              sdi_sg_kind_name(kind), g, p, sdi_sg_kind_name(want_kind), want_g, want_p);
}

static void test_row_rules(void)
{
    sdi_spgemm_config hy = preset(SDI_SPGEMM_HYBRID); /* tiny 32, load 50, dense 400 % */
    classify(&hy, 1, 1, SDI_SG_TINY, 0, 8);
    classify(&hy, 8, 100000, SDI_SG_TINY, 0, 8);
    classify(&hy, 9, 100000, SDI_SG_TINY, 0, 32);
    classify(&hy, 32, 100000, SDI_SG_TINY, 0, 32);
    /* u = 100 over a wide span: bound 100 at 50 % → 200 slots → 256, 8 lanes (u ≤ 128) */
    classify(&hy, 100, 1000000, SDI_SG_GHASH, 8, 8);
    classify(&hy, 129, 1000000, SDI_SG_GHASH, 16, 9);
    classify(&hy, 1000, 1000000, SDI_SG_GHASH, 32, 11);
    classify(&hy, 2048, 1000000, SDI_SG_GHASH, 32, 12);
    /* beyond the group tables: CTA tables up to 2^14, then the stripes */
    classify(&hy, 2049, 1000000, SDI_SG_CHASH, 0, 13);
    classify(&hy, 8192, 1000000, SDI_SG_CHASH, 0, 14);
    classify(&hy, 8193, 30000, SDI_SG_CDENSE, 0, 15);
    classify(&hy, 8193, 1000000, SDI_SG_GLOBAL, 0, 0);
    /* banded: u = 4225 products over a span of 129 columns → a group dense stripe */
    classify(&hy, 4225, 129, SDI_SG_GDENSE, 32, 8);
    classify(&hy, 100, 40, SDI_SG_GDENSE, 8, 8);
    classify(&hy, 5000, 3000, SDI_SG_CDENSE, 0, 12);
    /* csr_hash has no dense preference: the same banded row goes to a hash table sized by
     * its bound (the span) */
    sdi_spgemm_config h = preset(SDI_SPGEMM_HASH);
    classify(&h, 4225, 129, SDI_SG_GHASH, 32, 9);
    classify(&h, 5, 5, SDI_SG_GHASH, 8, 6); /* no tiny lists in csr_hash */
    /* the load moves capacities */
    h.load_pct = 100;
    classify(&h, 1000, 1000000, SDI_SG_GHASH, 32, 10);
    /* tiny_max = 8 stops at 8 */
    sdi_spgemm_config d = preset(SDI_SPGEMM_DENSE);
    classify(&d, 9, 1000000, SDI_SG_GHASH, 8, 6);
    /* forced kinds win */
    sdi_spgemm_config f = hy;
    f.force_kind = SDI_SG_CHASH;
    f.force_p = 10;
    classify(&f, 3, 3, SDI_SG_CHASH, 0, 10);
    /* few heavy rows: split across CTAs in the global stripes, whatever would fit */
    const sdi_sg_limits lim = h200_limits();
    int32_t kind, g, p;
    sdi_sg_classify(&hy, &lim, 1 << 24, SDI_SG_HEAVY_U + 1, 3000, 1, &kind, &g, &p);
    SDT_CHECK(kind == SDI_SG_GLOBAL, "heavy row split: %s", sdi_sg_kind_name(kind));
    sdi_sg_classify(&hy, &lim, 1 << 24, SDI_SG_HEAVY_U, 3000, 1, &kind, &g, &p);
    SDT_CHECK(kind == SDI_SG_CDENSE, "u at the threshold stays: %s", sdi_sg_kind_name(kind));
    /* A few long rows over a narrow span (a circuit row: 8,487 products in 1,813 columns):
     * a CTA stripe in csr_hash / hybrid, a lane group's stripe or table elsewhere and
     * without the flag; rows at the threshold keep their group. */
    struct {
        int family, flags;
        int64_t u, span;
        int kind, g, p;
    } few[] = {
        {SDI_SPGEMM_HYBRID, SDI_SG_FEW_LONG, 8487, 1813, SDI_SG_CDENSE, 0, 11},
        {SDI_SPGEMM_HYBRID, 0, 8487, 1813, SDI_SG_GDENSE, 32, 11},
        {SDI_SPGEMM_HYBRID, SDI_SG_FEW_LONG, SDI_SG_WARP_U, 1813, SDI_SG_GDENSE, 32, 11},
        {SDI_SPGEMM_HASH, SDI_SG_FEW_LONG, 8487, 1813, SDI_SG_CHASH, 0, 12},
        {SDI_SPGEMM_HASH, 0, 8487, 1813, SDI_SG_GHASH, 32, 12},
        {SDI_SPGEMM_DENSE, SDI_SG_FEW_LONG, 8487, 1813, SDI_SG_GDENSE, 32, 11},
    };
    for (size_t k = 0; k < sizeof few / sizeof few[0]; k++) {
        sdi_spgemm_config fc = preset(few[k].family);
        sdi_sg_classify(&fc, &lim, 1 << 24, few[k].u, few[k].span, few[k].flags, &kind, &g, &p);
        SDT_CHECK(kind == few[k].kind && g == few[k].g && p == few[k].p,
                  "%s flags %d u=%lld span=%lld: got %s g=%d p=%d, want %s g=%d p=%d",
                  sdi_spgemm_family_name(few[k].family), few[k].flags, (long long)few[k].u,
                  (long long)few[k].span, sdi_sg_kind_name(kind), g, p,
                  sdi_sg_kind_name(few[k].kind), few[k].g, few[k].p);
    }
    /* cta_u: rows above it take the CTA kind their span and bound call for (any family),
     * rows at it and tiny rows keep theirs. USAir97's A·A: 3,395 products over 332 columns
     * (a CTA stripe: 2^10 columns at least), G51's 3,037 over 1,000. */
    struct {
        int family;
        int32_t cta;
        int64_t u, span;
        int32_t n;
        int kind, g, p;
    } ct[] = {
        {SDI_SPGEMM_DENSE, 256, 3395, 332, 332, SDI_SG_CDENSE, 0, 10},
        {SDI_SPGEMM_DENSE, 0, 3395, 332, 332, SDI_SG_GDENSE, 32, 9},
        {SDI_SPGEMM_DENSE, 3395, 3395, 332, 332, SDI_SG_GDENSE, 32, 9},
        {SDI_SPGEMM_HYBRID, 256, 3037, 1000, 1000, SDI_SG_CDENSE, 0, 10},
        {SDI_SPGEMM_HASH, 256, 1000, 1000000, 1 << 24, SDI_SG_CHASH, 0, 11},
        {SDI_SPGEMM_HASH, 256, 200, 1000000, 1 << 24, SDI_SG_GHASH, 16, 9},
        {SDI_SPGEMM_TILED, 256, 30, 1000000, 1 << 24, SDI_SG_TINY, 0, 32},
    };
    for (size_t k = 0; k < sizeof ct / sizeof ct[0]; k++) {
        sdi_spgemm_config cc = preset(ct[k].family);
        cc.cta_u = ct[k].cta;
        sdi_sg_classify(&cc, &lim, ct[k].n, ct[k].u, ct[k].span, 0, &kind, &g, &p);
        SDT_CHECK(kind == ct[k].kind && g == ct[k].g && p == ct[k].p,
                  "%s cta>%d u=%lld span=%lld: got %s g=%d p=%d, want %s g=%d p=%d",
                  sdi_spgemm_family_name(ct[k].family), ct[k].cta, (long long)ct[k].u,
                  (long long)ct[k].span, sdi_sg_kind_name(kind), g, p,
                  sdi_sg_kind_name(ct[k].kind), ct[k].g, ct[k].p);
    }
}

/* Synthetic rows: a mix reaching every kind, seeded. */
static void synth(int32_t m, int32_t n, uint64_t seed, int64_t *u, int32_t *lo, int32_t *hi)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int32_t i = 0; i < m; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t uu, span;
        switch (x % 10) {
        case 0: uu = 0; span = 0; break;
        case 1: uu = 1 + (int64_t)(x >> 40) % 8; span = 1 + (int64_t)(x >> 20) % n; break;
        case 2: uu = 9 + (int64_t)(x >> 40) % 24; span = 1 + (int64_t)(x >> 20) % n; break;
        case 3: uu = 33 + (int64_t)(x >> 40) % 500; span = 1 + (int64_t)(x >> 20) % n; break;
        case 4: uu = 500 + (int64_t)(x >> 40) % 5000; span = 50 + (int64_t)(x >> 20) % 2000; break;
        case 5: uu = 2000 + (int64_t)(x >> 40) % 3000; span = n; break;
        case 6: uu = 5000 + (int64_t)(x >> 40) % 20000; span = 20000; break;
        case 7: uu = 100 + (int64_t)(x >> 40) % 100; span = uu; break;
        default: uu = (x >> 50) % 64 == 0 ? 100000 : 40; span = n; break;
        }
        if (span > n)
            span = n;
        if (span < 1 && uu > 0)
            span = 1;
        u[i] = uu;
        lo[i] = uu > 0 ? (int32_t)((x >> 8) % (uint64_t)(n - span + 1)) : -1;
        hi[i] = uu > 0 ? lo[i] + (int32_t)span - 1 : -1;
    }
}

typedef struct {
    int32_t m, n;
    int64_t *u;
    int32_t *lo, *hi;
    sdi_sg_rowinfo ri;
} rows_t;

static int rows_make(rows_t *r, int32_t m, int32_t n, uint64_t seed)
{
    r->m = m;
    r->n = n;
    r->u = sdi_malloc_array((size_t)(m > 0 ? m : 1), sizeof *r->u);
    r->lo = sdi_malloc_array((size_t)(m > 0 ? m : 1), sizeof *r->lo);
    r->hi = sdi_malloc_array((size_t)(m > 0 ? m : 1), sizeof *r->hi);
    if (!r->u || !r->lo || !r->hi)
        return 0;
    synth(m, n, seed, r->u, r->lo, r->hi);
    r->ri = (sdi_sg_rowinfo){.m = m, .n = n, .u = r->u, .lo = r->lo, .hi = r->hi, .b_row_max = 500};
    return 1;
}

static void rows_free(rows_t *r)
{
    sdi_free(r->u);
    sdi_free(r->lo);
    sdi_free(r->hi);
}

static void check_schedule(const char *what, const sdi_spgemm_config *c, const rows_t *r)
{
    const sdi_sg_limits lim = h200_limits();
    sdi_sg_schedule s;
    sd_status st = sdi_sg_schedule_build(c, &lim, &r->ri, &s);
    SDT_CHECK(st == SD_OK, "%s: build: %s", what, sd_last_error());
    if (st != SD_OK)
        return;
    st = sdi_sg_schedule_verify(c, &lim, &r->ri, &s);
    SDT_CHECK(st == SD_OK, "%s: verify: %s", what, sd_last_error());
    /* fusion: fuse 0 = one launch per bin and stage pass; fuse 2 = one per (stage, T) */
    int st1 = 0, st2 = 0, twophase = 0, any_one = 0;
    for (int l = 0; l < s.nlaunches; l++)
        (void)(s.launches[l].stage == 1 ? st1++ : st2++);
    for (int b = 0; b < s.nbins; b++) {
        twophase += !s.bins[b].one_phase;
        any_one |= s.bins[b].one_phase;
    }
    const int copy = any_one && !s.out_ub && s.ntiles > 0;
    if (c->fuse == 0) {
        SDT_CHECK(st1 == s.nbins && st2 == twophase + copy, "%s: fuse 0: %d+%d launches for %d bins",
                  what, st1, st2, s.nbins);
    } else if (c->fuse == 2) {
        int ts[8], nt = 0;
        for (int b = 0; b < s.nbins; b++) {
            int seen = 0;
            for (int q = 0; q < nt; q++)
                seen |= ts[q] == s.bins[b].threads;
            if (!seen && nt < 8)
                ts[nt++] = s.bins[b].threads;
        }
        /* one-phase 32-entry register lists (≈128 registers) get a launch of their own */
        int heavy = 0;
        for (int b = 0; b < s.nbins; b++)
            heavy |= s.bins[b].kind == SDI_SG_TINY && s.bins[b].p == 32 && s.bins[b].one_phase;
        SDT_CHECK(st1 <= nt + heavy + s.nbins / SD_SG_MAX_SEGS, "%s: fuse 2: %d stage-1 launches "
                  "for %d thread counts", what, st1, nt);
        for (int l = 0; l < s.nlaunches; l++)
            for (int q = 1; q < s.launches[l].nsegs; q++) {
                const sdi_sg_segment *g0 = &s.launches[l].segs[0], *g = &s.launches[l].segs[q];
                const int h0 = g0->kind == SDI_SG_TINY && g0->p == 32 && g0->phase != SD_SG_PH_SYM;
                const int h = g->kind == SDI_SG_TINY && g->p == 32 && g->phase != SD_SG_PH_SYM;
                SDT_CHECK(h0 == h, "%s: launch %d fuses 32-entry lists with other kinds", what, l);
            }
    }
    /* eager output: only under out_ub where one-phase staging does not apply, never past
     * 512 MiB; a bound of nnz(C) (verify recomputes it): no row holds more than its
     * products or its span */
    SDT_CHECK(s.eager_cap == 0 || (c->out_ub && !s.out_ub && s.eager_cap * 8 <= (512ll << 20)),
              "%s: eager output of %lld entries (out_ub %d / %d)", what, (long long)s.eager_cap,
              c->out_ub, s.out_ub);
    if (c->out_ub && !s.out_ub && s.eager_cap == 0) {
        int64_t bound = 0;
        for (int32_t i = 0; i < r->m; i++)
            bound += r->u[i] > 0 ? (r->u[i] < r->hi[i] - r->lo[i] + 1 ? r->u[i] : r->hi[i] - r->lo[i] + 1) : 0;
        SDT_CHECK(bound == 0 || bound * 8 > (512ll << 20), "%s: no eager output for a bound of %lld",
                  what, (long long)bound);
    }
    /* staging: prefix of u over one-phase rows, within half the budget */
    if (s.ub != NULL) {
        SDT_CHECK(s.ub[s.m] == s.ub_total, "%s: staging total", what);
        const int64_t budget = c->ws_budget > 0 ? c->ws_budget : lim.mem_bytes / 4;
        SDT_CHECK(s.ub_total * 8 <= budget / 2, "%s: staging %lld entries over the budget", what,
                  (long long)s.ub_total);
    }
    if (s.gslots > 0) {
        SDT_CHECK(s.gwidth % 32 == 0 && s.gwidth <= ((r->n + 31) / 32) * 32, "%s: gwidth %lld",
                  what, (long long)s.gwidth);
        if (c->chunk_rows > 0)
            SDT_CHECK(s.gslots <= c->chunk_rows, "%s: %lld slots over chunk_rows", what,
                      (long long)s.gslots);
    }
    /* the lowering gives every launch a unit holding its kernel, one unit per shape */
    sdi_sg_lowered low;
    SDT_OK(sdi_spgemm_lower(&s, &low));
    SDT_CHECK(low.nkernels == s.nlaunches && low.nunits <= low.nkernels &&
                  (low.nunits > 0) == (s.nlaunches > 0),
              "%s: %d kernels in %d units for %d launches", what, low.nkernels, low.nunits,
              s.nlaunches);
    for (int l = 0; l < low.nkernels; l++) {
        const sdi_sg_unit *U = &low.units[low.unit_of[l]];
        const char *k1 = strstr(U->source, "SD_KERNEL");
        SDT_CHECK(k1 != NULL && strstr(k1 + 1, "SD_KERNEL") == NULL,
                  "%s: unit %s does not hold exactly one kernel", what, U->name);
        char bounds[48 + SDI_SG_KERNEL_NAME];
        snprintf(bounds, sizeof bounds, "SD_LAUNCH_BOUNDS(%d) %s(", s.launches[l].threads, U->name);
        SDT_CHECK(strstr(U->source, bounds) != NULL, "%s: launch %d's kernel %s absent", what, l,
                  U->name);
        for (int q = 0; q < s.launches[l].nsegs; q++) {
            char seg[32];
            snprintf(seg, sizeof seg, "(a, %d, ", q);
            SDT_CHECK(strstr(U->source, seg) != NULL, "%s: launch %d: segment %d absent", what,
                      l, q);
        }
    }
    sdi_sg_lowered_free(&low);
    char buf[640];
    sdi_sg_schedule_describe(&s, buf, sizeof buf);
    SDT_CHECK(buf[0] != '\0', "%s: describe", what);
    sdi_sg_schedule_free(&s);
}

/* The CTA-team edit's threshold: the smallest of 256 … 4096 whose rows above it fit the
 * slots, 0 when none does or no row passes 256. */
static void test_cta_threshold(void)
{
    int64_t u[10] = {10, 300, 300, 600, 600, 600, 5000, 0, 2000, 100};
    int32_t lo[10] = {0}, hi[10] = {0};
    sdi_sg_rowinfo ri = {10, 10, u, lo, hi, 1};
    /* above 256: 7 rows; 512: 5; 1024: 2; 2048: 1; 4096: 1 */
    SDT_CHECK(sdi_sg_cta_threshold(&ri, 7) == 256, "7 slots: %d", sdi_sg_cta_threshold(&ri, 7));
    SDT_CHECK(sdi_sg_cta_threshold(&ri, 6) == 512, "6 slots: %d", sdi_sg_cta_threshold(&ri, 6));
    SDT_CHECK(sdi_sg_cta_threshold(&ri, 2) == 1024, "2 slots: %d", sdi_sg_cta_threshold(&ri, 2));
    SDT_CHECK(sdi_sg_cta_threshold(&ri, 1) == 2048, "1 slot: %d", sdi_sg_cta_threshold(&ri, 1));
    SDT_CHECK(sdi_sg_cta_threshold(&ri, 0) == 0, "no slots");
    SDT_CHECK(sdi_sg_cta_threshold(NULL, 8) == 0, "no rows");
    int64_t small[3] = {10, 256, 200};
    sdi_sg_rowinfo rs = {3, 3, small, lo, hi, 1};
    SDT_CHECK(sdi_sg_cta_threshold(&rs, 100) == 0, "no row above 256");
    /* a schedule under the edit verifies, and no group bin holds a row above it */
    rows_t r;
    SDT_CHECK(rows_make(&r, 20000, 1 << 16, 5), "rows");
    const sdi_sg_limits lim = h200_limits();
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c = preset(f);
        c.cta_u = 512;
        sdi_sg_schedule sc;
        sd_status st = sdi_sg_schedule_build(&c, &lim, &r.ri, &sc);
        SDT_OK(st);
        if (st != SD_OK)
            continue;
        SDT_OK(sdi_sg_schedule_verify(&c, &lim, &r.ri, &sc));
        for (int b = 0; b < sc.nbins; b++)
            SDT_CHECK(!(sc.bins[b].kind == SDI_SG_GHASH || sc.bins[b].kind == SDI_SG_GDENSE) ||
                          sc.bins[b].u_max <= 512,
                      "%s: a group bin with u_max %lld", sdi_spgemm_family_name(f),
                      (long long)sc.bins[b].u_max);
        sdi_sg_schedule_free(&sc);
    }
    rows_free(&r);
}

static void test_schedules(void)
{
    rows_t r;
    SDT_CHECK(rows_make(&r, 50000, 1 << 20, 11), "rows");
    static const int threads[] = {128, 256, 512};
    static const int ones[] = {0, 32, 512, 1 << 20};
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++)
        for (int t = 0; t < 3; t++)
            for (int fu = 0; fu < 3; fu++)
                for (int o = 0; o < 4; o++) {
                    sdi_spgemm_config c = preset(f);
                    c.threads = threads[t];
                    c.fuse = fu;
                    c.one_phase_max_u = ones[o];
                    c.out_ub = o == 1;
                    char what[96];
                    snprintf(what, sizeof what, "%s T%d fuse%d one%d", sdi_spgemm_family_name(f),
                             threads[t], fu, ones[o]);
                    check_schedule(what, &c, &r);
                }
    /* small budgets: staging shrinks, global stripes run in waves */
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    c.one_phase_max_u = 1 << 30;
    c.ws_budget = 1 << 20;
    check_schedule("budget 1 MiB", &c, &r);
    c.chunk_rows = 2;
    check_schedule("chunk_rows 2", &c, &r);
    /* every row forced into the global stripes */
    c = preset(SDI_SPGEMM_HYBRID);
    c.force_kind = SDI_SG_GLOBAL;
    check_schedule("forced global", &c, &r);
    rows_free(&r);
    /* several seeds and shapes */
    for (uint64_t seed = 1; seed <= 5; seed++) {
        rows_t q;
        SDT_CHECK(rows_make(&q, 1000 + (int32_t)seed * 777, 3000 * (int32_t)seed, seed), "rows");
        for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
            sdi_spgemm_config cc = preset(f);
            check_schedule("seeded", &cc, &q);
        }
        rows_free(&q);
    }
}

static void test_schedule_details(void)
{
    const sdi_sg_limits lim = h200_limits();
    /* rows: empty, tiny, hash, banded, huge (the banded row within SDI_SG_WARP_U: with
     * only two rows above it, a longer one would get a CTA stripe) */
    int64_t u[6] = {0, 5, 300, 4000, 0, 200000};
    int32_t lo[6] = {-1, 10, 0, 1000, -1, 0}, hi[6] = {-1, 20, 90000, 1128, -1, 99999};
    sdi_sg_rowinfo ri = {.m = 6, .n = 100000, .u = u, .lo = lo, .hi = hi, .b_row_max = 100};
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    c.one_phase_max_u = 512;
    c.fuse = 0;
    sdi_sg_schedule s;
    SDT_OK(sdi_sg_schedule_build(&c, &lim, &ri, &s));
    SDT_OK(sdi_sg_schedule_verify(&c, &lim, &ri, &s));
    SDT_CHECK(s.nempty == 2 && s.nbinrows == 4, "empty %d, binned %d", s.nempty, s.nbinrows);
    SDT_CHECK(s.nbins == 4, "%d bins", s.nbins);
    /* canonical order: tiny, ghash, gdense, global */
    const int want[4] = {SDI_SG_TINY, SDI_SG_GHASH, SDI_SG_GDENSE, SDI_SG_GLOBAL};
    for (int b = 0; b < s.nbins && b < 4; b++)
        SDT_CHECK(s.bins[b].kind == want[b], "bin %d is %s", b, sdi_sg_kind_name(s.bins[b].kind));
    /* one-phase: tiny (5) and ghash (300) rows; not banded (4225), not global */
    SDT_CHECK(s.ub != NULL && s.ub_total == 305, "staging %lld", (long long)s.ub_total);
    if (s.ub != NULL) {
        const int64_t want_ub[7] = {0, 0, 5, 305, 305, 305, 305};
        for (int i = 0; i <= 6; i++)
            SDT_CHECK(s.ub[i] == want_ub[i], "ub[%d] = %lld", i, (long long)s.ub[i]);
    }
    SDT_CHECK(!s.out_ub, "upper-bound output with two-phase bins");
    /* ... but C at a bound of nnz(C) before the kernels (out_ub set): Σ min(u, span) =
     * 5 + 300 + min(4000, 129) + min(200000, 100000) */
    SDT_CHECK(s.eager_cap == 100434, "eager output of %lld entries", (long long)s.eager_cap);
    SDT_CHECK(s.gwidth == 100000 && s.gslots == 1, "global width %lld slots %lld",
              (long long)s.gwidth, (long long)s.gslots);
    /* one global row of 2·10^5 products: parts mode, windows of ≤ 2^15 products */
    SDT_CHECK(s.gparts == 7 && s.bins[3].blocks == 7, "global parts %d, blocks %d", s.gparts,
              s.bins[3].blocks);
    SDT_CHECK(s.need_rowlo, "dense kinds need row origins");
    /* stage 2: NUM of the two two-phase bins + the copy */
    int st2 = 0, copies = 0;
    for (int l = 0; l < s.nlaunches; l++)
        if (s.launches[l].stage == 2) {
            st2++;
            copies += s.launches[l].segs[0].kind == SDI_SG_COPY;
        }
    SDT_CHECK(st2 == 3 && copies == 1, "stage 2: %d launches, %d copies", st2, copies);
    sdi_sg_schedule_free(&s);

    /* more global rows than the chunk allows: waves of chunk_rows CTAs, one per row */
    {
        int64_t ug[4] = {300000, 200000, 250000, 10};
        int32_t lg[4] = {0, 0, 0, 0}, hg[4] = {99999, 99999, 99999, 9};
        sdi_sg_rowinfo rg = {.m = 4, .n = 100000, .u = ug, .lo = lg, .hi = hg, .b_row_max = 10};
        sdi_spgemm_config cw = preset(SDI_SPGEMM_HYBRID);
        cw.chunk_rows = 2;
        sdi_sg_schedule sw;
        SDT_OK(sdi_sg_schedule_build(&cw, &lim, &rg, &sw));
        SDT_OK(sdi_sg_schedule_verify(&cw, &lim, &rg, &sw));
        SDT_CHECK(sw.gparts == 0 && sw.gslots == 2 && sw.grows == 3, "waves: parts %d slots %lld "
                  "rows %d", sw.gparts, (long long)sw.gslots, sw.grows);
        sdi_sg_schedule_free(&sw);
    }
    /* all one-phase with out_ub: no stage 2 at all */
    c.one_phase_max_u = 1 << 20;
    c.out_ub = 1;
    u[5] = 100;
    hi[5] = 50000;
    SDT_OK(sdi_sg_schedule_build(&c, &lim, &ri, &s));
    SDT_OK(sdi_sg_schedule_verify(&c, &lim, &ri, &s));
    SDT_CHECK(s.out_ub, "upper-bound output expected");
    for (int l = 0; l < s.nlaunches; l++)
        SDT_CHECK(s.launches[l].stage == 1, "launch %d in stage 2", l);
    sdi_sg_schedule_free(&s);

    /* forced kind that a row cannot fit: names the row */
    c = preset(SDI_SPGEMM_HYBRID);
    c.force_kind = SDI_SG_TINY;
    c.force_p = 8;
    SDT_STATUS(sdi_sg_schedule_build(&c, &lim, &ri, &s), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "row 2") != NULL, "message '%s'", sd_last_error());
    SDT_CHECK(s.binrows == NULL && s.nbins == 0, "zeroed on failure");
    /* B rows too long for int32 rounds */
    c = preset(SDI_SPGEMM_HYBRID);
    ri.b_row_max = 1ll << 30;
    SDT_STATUS(sdi_sg_schedule_build(&c, &lim, &ri, &s), SD_ERR_UNSUPPORTED);
    ri.b_row_max = 100;
    /* group tables too big for 256 threads: fewer groups per CTA */
    c.force_kind = SDI_SG_GHASH;
    c.force_g = 8;
    c.force_p = 12;
    int64_t u2[2] = {3000, 4000};
    int32_t lo2[2] = {0, 0}, hi2[2] = {4000, 4000};
    sdi_sg_rowinfo r2 = {.m = 2, .n = 5000, .u = u2, .lo = lo2, .hi = hi2, .b_row_max = 10};
    SDT_OK(sdi_sg_schedule_build(&c, &lim, &r2, &s));
    SDT_OK(sdi_sg_schedule_verify(&c, &lim, &r2, &s));
    SDT_CHECK(s.nbins == 1 && s.bins[0].threads < 256 && s.bins[0].threads % 32 == 0 &&
                  s.bins[0].smem_num <= lim.smem_max,
              "threads %d smem %lld", s.bins[0].threads, (long long)s.bins[0].smem_num);
    sdi_sg_schedule_free(&s);
    /* no rows */
    sdi_sg_rowinfo r0 = {.m = 0, .n = 0};
    c = preset(SDI_SPGEMM_TILED);
    SDT_OK(sdi_sg_schedule_build(&c, &lim, &r0, &s));
    SDT_CHECK(s.nlaunches == 0 && s.ntiles == 0 && s.nbins == 0, "empty product");
    sdi_sg_schedule_free(&s);
}

/* The wide CTA stripe: rows whose span passes the largest power-of-two stripe that fits
 * (2^15 at 256 threads) get a stripe as wide as C (n rounded up to 32) when that fits in
 * shared memory, instead of global stripes; wider C keeps the global fallback. */
static void test_wide_stripe(void)
{
    const sdi_sg_limits lim = h200_limits();
    const sdi_spgemm_config hy = preset(SDI_SPGEMM_HYBRID), ha = preset(SDI_SPGEMM_HASH);
    int32_t kind, g, p;
    /* Belcastro_mouse_gene's shape: 45,101 columns, rows of 5·10^6 products over them all */
    sdi_sg_classify(&hy, &lim, 45101, 5000000, 45101, 0, &kind, &g, &p);
    SDT_CHECK(kind == SDI_SG_CDENSE && p == -1410 && sdi_sg_stripe_cols(p) == 45120,
              "45,101 columns: %s p=%d", sdi_sg_kind_name(kind), p);
    sdi_sg_classify(&ha, &lim, 45101, 5000000, 45101, 0, &kind, &g, &p); /* the fallback */
    SDT_CHECK(kind == SDI_SG_CDENSE && p == -1410, "csr_hash: %s p=%d", sdi_sg_kind_name(kind), p);
    /* a power of two that fits is kept when C is nearly as wide: 30,000 columns take 2^15 */
    sdi_sg_classify(&hy, &lim, 30000, 5000000, 30000, 0, &kind, &g, &p);
    SDT_CHECK(kind == SDI_SG_CDENSE && p == 15, "30,000 columns: %s p=%d", sdi_sg_kind_name(kind), p);
    /* ... and replaced by C's width where it is a third wider or more (human_gene1's 22,283
     * columns: 22,304, not 32,768), from 2^13 columns up; off with SPARSEDITTO_SG_WIDE=0 */
    sdi_sg_classify(&hy, &lim, 22283, 5000000, 22283, 0, &kind, &g, &p);
    SDT_CHECK(kind == SDI_SG_CDENSE && p == -697 && sdi_sg_stripe_cols(p) == 22304,
              "22,283 columns: %s p=%d", sdi_sg_kind_name(kind), p);
    SDT_CHECK(sdi_sg_smem_bytes(SDI_SG_CDENSE, 0, -697, 256, SD_SG_PH_NUM) * 4 <
                  sdi_sg_smem_bytes(SDI_SG_CDENSE, 0, 15, 256, SD_SG_PH_NUM) * 3,
              "the narrower stripe saves a quarter of the shared memory");
    sdi_sg_classify(&hy, &lim, 5000, 100000, 5000, 0, &kind, &g, &p); /* 2^13: 5,024 < 6,144 */
    SDT_CHECK(kind == SDI_SG_CDENSE && p == -157, "5,000 columns: %s p=%d", sdi_sg_kind_name(kind), p);
    sdi_sg_classify(&hy, &lim, 2500, 100000, 2500, 0, &kind, &g, &p); /* 2^12: kept */
    SDT_CHECK(kind == SDI_SG_CDENSE && p == 12, "2,500 columns: %s p=%d", sdi_sg_kind_name(kind), p);
    /* too wide for shared memory: global */
    sdi_sg_classify(&hy, &lim, 70000, 5000000, 70000, 0, &kind, &g, &p);
    SDT_CHECK(kind == SDI_SG_GLOBAL, "70,000 columns: %s p=%d", sdi_sg_kind_name(kind), p);
    /* heavy rows split across CTAs still go to global stripes first */
    sdi_sg_classify(&hy, &lim, 45101, 5000000, 45101, SDI_SG_SPLIT_HEAVY, &kind, &g, &p);
    SDT_CHECK(kind == SDI_SG_GLOBAL, "split heavy: %s", sdi_sg_kind_name(kind));
    /* its shared memory: scratch + values + bitmap, within the limit */
    const int64_t sm = sdi_sg_smem_bytes(SDI_SG_CDENSE, 0, -1410, 256, SD_SG_PH_NUM);
    SDT_CHECK(sm - sdi_sg_smem_bytes(SDI_SG_CDENSE, 0, -1410, 256, SD_SG_PH_SYM) == 45120 * 4 &&
                  sm <= lim.smem_max,
              "wide stripe: %lld bytes of %d", (long long)sm, lim.smem_max);

    /* a schedule: short rows in hash tables, the wide rows in one CDENSE bin of 45,120 */
    enum { M = 300 };
    int64_t u[M];
    int32_t lo[M], hi[M];
    for (int i = 0; i < M; i++) {
        u[i] = i % 3 == 0 ? 200 : 50000 + i; /* under SDI_SG_HEAVY_U: not split across CTAs */
        lo[i] = i % 3 == 0 ? 100 : (int32_t)(i % 7);
        hi[i] = i % 3 == 0 ? 5000 : 45100 - (int32_t)(i % 5);
    }
    sdi_sg_rowinfo ri = {.m = M, .n = 45101, .u = u, .lo = lo, .hi = hi, .b_row_max = 700};
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c = preset(f);
        sdi_sg_schedule s;
        SDT_OK(sdi_sg_schedule_build(&c, &lim, &ri, &s));
        SDT_OK(sdi_sg_schedule_verify(&c, &lim, &ri, &s));
        int wide = -1, global = 0;
        for (int b = 0; b < s.nbins; b++) {
            if (s.bins[b].kind == SDI_SG_CDENSE && s.bins[b].p < 0)
                wide = b;
            global += s.bins[b].kind == SDI_SG_GLOBAL;
        }
        SDT_CHECK(wide >= 0 && s.bins[wide].p == -1410 && s.bins[wide].nrows == 200 && !global,
                  "%s: wide bin %d (%d rows), %d global bins", sdi_spgemm_family_name(f), wide,
                  wide >= 0 ? s.bins[wide].nrows : 0, global);
        char buf[512];
        sdi_sg_schedule_describe(&s, buf, sizeof buf);
        SDT_CHECK(strstr(buf, "cdense45120:200") != NULL, "%s: %s", sdi_spgemm_family_name(f), buf);
        sdi_sg_lowered low;
        SDT_OK(sdi_spgemm_lower(&s, &low));
        int found = 0;
        for (int k = 0; k < low.nunits; k++)
            found |= strstr(low.units[k].source, "sg_seg_cdense<45120, ") != NULL;
        SDT_CHECK(found, "%s: no unit instantiates the 45,120-column stripe", sdi_spgemm_family_name(f));
        sdi_sg_lowered_free(&low);
        sdi_sg_schedule_free(&s);
    }
    /* SPARSEDITTO_SG_WIDE=0 turns it off: global stripes, as before */
    setenv("SPARSEDITTO_SG_WIDE", "0", 1);
    sdi_config_reload();
    const sdi_sg_limits lim_off = h200_limits(); /* the switch is read with the limits */
    unsetenv("SPARSEDITTO_SG_WIDE");
    sdi_config_reload();
    sdi_sg_classify(&hy, &lim_off, 45101, 5000000, 45101, 0, &kind, &g, &p);
    SDT_CHECK(kind == SDI_SG_GLOBAL, "SPARSEDITTO_SG_WIDE=0: %s p=%d", sdi_sg_kind_name(kind), p);
    sdi_sg_classify(&hy, &lim_off, 22283, 5000000, 22283, 0, &kind, &g, &p);
    SDT_CHECK(kind == SDI_SG_CDENSE && p == 15, "SPARSEDITTO_SG_WIDE=0, 22,283 columns: %s p=%d",
              sdi_sg_kind_name(kind), p);
    /* forced: a wide stripe by force_p = -W/32, and out of range */
    sdi_spgemm_config fc = preset(SDI_SPGEMM_HYBRID);
    fc.force_kind = SDI_SG_CDENSE;
    fc.force_p = -1410;
    SDT_OK(sdi_spgemm_config_check(&fc));
    fc.force_p = 0;
    SDT_STATUS(sdi_spgemm_config_check(&fc), SD_ERR_INVALID_ARG);
}

static void test_smem_formulas(void)
{
    /* must match sizeof of the device scratch structs: T/32+1 partials + 16 B per thread */
    SDT_CHECK(sdi_sg_smem_bytes(SDI_SG_GLOBAL, 0, 0, 256, SD_SG_PH_NUM) == 8 * 9 + 16 * 256,
              "global scratch");
    SDT_CHECK(sdi_sg_smem_bytes(SDI_SG_GHASH, 16, 8, 256, SD_SG_PH_SYM) == 16 * 256 * 4, "ghash sym");
    SDT_CHECK(sdi_sg_smem_bytes(SDI_SG_GHASH, 16, 8, 256, SD_SG_PH_NUM) == 16 * 256 * 8, "ghash num");
    SDT_CHECK(sdi_sg_smem_bytes(SDI_SG_GDENSE, 32, 11, 256, SD_SG_PH_NUM) == 8 * (2048 * 4 + 256),
              "gdense num");
    SDT_CHECK(sdi_sg_smem_bytes(SDI_SG_TINY, 0, 32, 256, SD_SG_PH_NUM) == 0, "tiny");
    const sdi_sg_limits lim = h200_limits();
    SDT_CHECK(lim.smem_max == 227 * 1024 - 1024, "H200 limit %d", lim.smem_max);
    SDT_CHECK(sdi_sg_smem_bytes(SDI_SG_CHASH, 0, 14, 512, SD_SG_PH_NUM) <= lim.smem_max,
              "chash 2^14 fits at 512 threads");
    SDT_CHECK(sdi_sg_smem_bytes(SDI_SG_CDENSE, 0, 15, 512, SD_SG_PH_NUM) <= lim.smem_max,
              "cdense 2^15 fits at 512 threads");
}

/* Residency: CTAs an SM by threads (2048), CTAs (32) and shared memory (228 KiB, 1 KiB
 * reserved a CTA), checked by hand for the H200; a schedule's launches carry theirs, and a
 * fused launch the residency of its largest segment's shared memory. */
static void test_residency(void)
{
    const sdi_sg_limits lim = h200_limits();
    const struct {
        int threads;
        int64_t smem;
        int32_t want;
    } cases[] = {{256, 135240, 1}, {256, 96172, 2}, {256, 36936, 6}, {256, 0, 8},
                 {224, 229376, 1}, {128, 0, 16}, {64, 0, 32}, {32, 0, 32}, {512, 6956, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int32_t got = sdi_sg_resident_ctas(&lim, cases[i].threads, cases[i].smem);
        SDT_CHECK(got == cases[i].want, "T=%d, %lld bytes: %d CTAs, want %d", cases[i].threads,
                  (long long)cases[i].smem, got, cases[i].want);
    }
    SDT_CHECK(sdi_sg_resident_ctas(&lim, 0, 0) == 0, "no threads: no CTA");
    rows_t r;
    SDT_CHECK(rows_make(&r, 50000, 1 << 20, 11), "rows");
    sdi_spgemm_config c = preset(SDI_SPGEMM_TILED); /* fuse 2: segments of several sizes */
    sdi_sg_schedule s;
    SDT_OK(sdi_sg_schedule_build(&c, &lim, &r.ri, &s));
    for (int l = 0; l < s.nlaunches; l++) {
        const sdi_sg_launch *L = &s.launches[l];
        int64_t most = 0;
        for (int q = 0; q < L->nsegs; q++)
            most = L->segs[q].smem > most ? L->segs[q].smem : most;
        SDT_CHECK(L->resident >= 1 && L->resident == sdi_sg_resident_ctas(&lim, L->threads, most),
                  "launch %d: %d resident CTAs, its largest segment %lld bytes", l, L->resident,
                  (long long)most);
    }
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_sg_schedule_json(&s, &j);
    SDT_OK(sdi_json_finish(&j));
    SDT_CHECK(strstr(j.buf, "\"resident_warps\":") != NULL, "schedule JSON: %.200s", j.buf);
    sdi_json_free(&j);
    sdi_sg_schedule_free(&s);
    rows_free(&r);
}

/* SPARSEDITTO_SG_FUSE_MAX caps the segments of a fused launch (smaller NVRTC units); the
 * schedule stays valid and covers the same rows. */
static void test_fuse_cap(void)
{
    rows_t r;
    SDT_CHECK(rows_make(&r, 50000, 1 << 20, 11), "rows");
    const sdi_sg_limits lim = h200_limits();
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    c.fuse = 2;
    sdi_sg_schedule s;
    SDT_OK(sdi_sg_schedule_build(&c, &lim, &r.ri, &s));
    int most = 0;
    for (int l = 0; l < s.nlaunches; l++)
        most = s.launches[l].nsegs > most ? s.launches[l].nsegs : most;
    const int nl = s.nlaunches;
    sdi_sg_schedule_free(&s);
    SDT_CHECK(most > 3, "uncapped: a launch of %d segments", most);
    setenv("SPARSEDITTO_SG_FUSE_MAX", "3", 1);
    sdi_config_reload();
    SDT_OK(sdi_sg_schedule_build(&c, &lim, &r.ri, &s));
    unsetenv("SPARSEDITTO_SG_FUSE_MAX");
    sdi_config_reload();
    for (int l = 0; l < s.nlaunches; l++)
        SDT_CHECK(s.launches[l].nsegs <= 3, "launch %d: %d segments", l, s.launches[l].nsegs);
    SDT_CHECK(s.nlaunches > nl, "capped: %d launches, uncapped %d", s.nlaunches, nl);
    SDT_OK(sdi_sg_schedule_verify(&c, &lim, &r.ri, &s));
    sdi_sg_schedule_free(&s);
    rows_free(&r);
}

/* The search's edits of its winner (the SpGEMM families' edits, src/plan/families/spgemm_shared.c) build valid schedules:
 * hash tables at load 100 with group tables of at most 2^10 slots hold each row's bound
 * (verify checks every row fits) in fewer slots than the preset's, no group table is
 * larger than 2^10 (larger ones are CTA tables); warp_brow reaches the schedule. */
static void test_winner_edit_schedules(void)
{
    rows_t r;
    SDT_CHECK(rows_make(&r, 50000, 1 << 20, 11), "rows");
    const sdi_sg_limits lim = h200_limits();
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c = preset(f), e = c;
        e.load_pct = 100;
        if (e.ghash_max_lcap > 10)
            e.ghash_max_lcap = 10;
        e.warp_brow = -1;
        sdi_sg_schedule s0, s1;
        SDT_OK(sdi_sg_schedule_build(&c, &lim, &r.ri, &s0));
        sd_status st = sdi_sg_schedule_build(&e, &lim, &r.ri, &s1);
        SDT_OK(st);
        if (st == SD_OK) {
            SDT_OK(sdi_sg_schedule_verify(&e, &lim, &r.ri, &s1));
            SDT_CHECK(s1.warp_brow == -1 && s0.warp_brow == 0, "%s: warp_brow %d / %d",
                      sdi_spgemm_family_name(f), s1.warp_brow, s0.warp_brow);
            /* shared memory of the hash bins, summed over their rows (log2 slots) */
            int64_t w0 = 0, w1 = 0;
            for (int b = 0; b < s0.nbins; b++)
                if (s0.bins[b].kind == SDI_SG_GHASH || s0.bins[b].kind == SDI_SG_CHASH)
                    w0 += (int64_t)s0.bins[b].nrows << s0.bins[b].p;
            for (int b = 0; b < s1.nbins; b++) {
                if (s1.bins[b].kind == SDI_SG_GHASH || s1.bins[b].kind == SDI_SG_CHASH)
                    w1 += (int64_t)s1.bins[b].nrows << s1.bins[b].p;
                SDT_CHECK(s1.bins[b].kind != SDI_SG_GHASH || s1.bins[b].p <= 10,
                          "%s: a group table of 2^%d slots", sdi_spgemm_family_name(f),
                          s1.bins[b].p);
            }
            SDT_CHECK(w0 == 0 || w1 < w0, "%s: hash slots at load 100 %lld, at 50 %lld",
                      sdi_spgemm_family_name(f), (long long)w1, (long long)w0);
            sdi_sg_lowered low;
            if (sdi_spgemm_lower(&s1, &low) == SD_OK) {
                SDT_CHECK(low.nunits > 0 &&
                              strstr(low.units[0].source, "#define SG_WARP_BROW 0\n") != NULL,
                          "%s: warp_brow -1 not in the units", sdi_spgemm_family_name(f));
                sdi_sg_lowered_free(&low);
            }
            sdi_sg_schedule_free(&s1);
        }
        sdi_sg_schedule_free(&s0);
    }
    rows_free(&r);
}

static void test_enumerate(void)
{
    rows_t r;
    SDT_CHECK(rows_make(&r, 20000, 100000, 3), "rows");
    sdi_sg_summary sm;
    sdi_sg_summarize(&r.ri, &sm);
    SDT_CHECK(sm.u_total > 0 && sm.frac_tiny > 0 && sm.frac_narrow > 0, "summary");
    sdi_spgemm_config *list = NULL;
    int n = 0;
    SDT_OK(sdi_spgemm_enumerate(&sm, 0, 0, 64, &list, &n));
    SDT_CHECK(n == SDI_SPGEMM_NFAMILIES, "level 0: %d candidates", n);
    sdi_free(list);
    SDT_OK(sdi_spgemm_enumerate(&sm, 0, 1, 64, &list, &n));
    SDT_CHECK(n > SDI_SPGEMM_NFAMILIES && n <= 4 * SDI_SPGEMM_NFAMILIES, "level 1: %d", n);
    for (int q = 0; q < n; q++) {
        SDT_OK(sdi_spgemm_config_check(&list[q]));
        for (int w = 0; w < q; w++)
            SDT_CHECK(memcmp(&list[q], &list[w], sizeof list[q]) != 0, "duplicate %d %d", q, w);
        check_schedule("enumerated", &list[q], &r);
    }
    sdi_free(list);
    /* A small product's level-1 sweep has a warp per row with one phase up to 32 products
     * within the three entries a family takes at the default budget (src/tune/search.c). */
    rows_t small;
    SDT_CHECK(rows_make(&small, 1000, 100000, 5), "rows");
    sdi_sg_summary ss;
    sdi_sg_summarize(&small.ri, &ss);
    rows_free(&small);
    SDT_CHECK(ss.u_total < 4e6, "a small product: %g", ss.u_total);
    SDT_OK(sdi_spgemm_enumerate(&ss, 1u << SDI_SPGEMM_DENSE, 1, 3, &list, &n));
    bool warp_one32 = false;
    for (int q = 0; q < n; q++)
        warp_one32 |= list[q].tiny_max == 0 && list[q].min_lanes == 32 &&
                      list[q].one_phase_max_u == 32 && list[q].fuse == 1;
    SDT_CHECK(n == 3 && warp_one32, "level 1, first three: %d, warp + one phase <= 32: %d", n,
              warp_one32);
    sdi_free(list);
    SDT_OK(sdi_spgemm_enumerate(&sm, 1u << SDI_SPGEMM_DENSE, 2, 5, &list, &n));
    SDT_CHECK(n == 5, "cap 5: %d", n);
    for (int q = 0; q < n; q++)
        SDT_CHECK(list[q].family == SDI_SPGEMM_DENSE, "mask");
    sdi_free(list);
    SDT_STATUS(sdi_spgemm_enumerate(&sm, 0, 1, 0, &list, &n), SD_ERR_INVALID_ARG);
    rows_free(&r);
}

/* Schedule building runs over row ranges in parallel: the schedule (bins, launches, the
 * rows of every bin in row order, staging offsets) is the same whatever the thread count,
 * and a forced kind that a row cannot take names the first such row. */
static bool same_schedule(const sdi_sg_schedule *x, const sdi_sg_schedule *y, int32_t m)
{
    return x->nbins == y->nbins && x->nbinrows == y->nbinrows && x->nempty == y->nempty &&
           x->nlaunches == y->nlaunches && x->u_total == y->u_total && x->u_max == y->u_max &&
           x->ub_total == y->ub_total && x->ws_bytes == y->ws_bytes && x->gslots == y->gslots &&
           memcmp(x->bins, y->bins, sizeof x->bins[0] * (size_t)x->nbins) == 0 &&
           memcmp(x->binrows, y->binrows, sizeof x->binrows[0] * (size_t)x->nbinrows) == 0 &&
           (x->ub == NULL) == (y->ub == NULL) &&
           (x->ub == NULL || memcmp(x->ub, y->ub, sizeof x->ub[0] * ((size_t)m + 1)) == 0);
}

static void test_thread_invariance(void)
{
    rows_t r;
    SDT_CHECK(rows_make(&r, 600000, 1 << 20, 21), "rows");
    const sdi_sg_limits lim = h200_limits();
    const int keep = omp_get_max_threads();
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c = preset(f);
        c.one_phase_max_u = 512;
        sdi_sg_schedule one, many;
        omp_set_num_threads(1);
        SDT_OK(sdi_sg_schedule_build(&c, &lim, &r.ri, &one));
        for (int t = 2; t <= 7; t += 5) {
            omp_set_num_threads(t);
            SDT_OK(sdi_sg_schedule_build(&c, &lim, &r.ri, &many));
            SDT_CHECK(same_schedule(&one, &many, r.m), "%s: %d threads build the 1-thread schedule",
                      sdi_spgemm_family_name(f), t);
            SDT_OK(sdi_sg_schedule_verify(&c, &lim, &r.ri, &many));
            sdi_sg_schedule_free(&many);
        }
        sdi_sg_schedule_free(&one);
    }
    /* Forced tiny lists of 8: the first row with more products is named, at any count. */
    int32_t first = -1;
    for (int32_t i = 0; i < r.m && first < 0; i++)
        if (r.u[i] > 8)
            first = i;
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    c.force_kind = SDI_SG_TINY;
    c.force_p = 8;
    char want[32];
    snprintf(want, sizeof want, "row %d ", (int)first);
    for (int t = 1; t <= 7; t += 3) {
        omp_set_num_threads(t);
        sdi_sg_schedule s;
        SDT_STATUS(sdi_sg_schedule_build(&c, &lim, &r.ri, &s), SD_ERR_INVALID_ARG);
        SDT_CHECK(strstr(sd_last_error(), want) != NULL, "%d threads: %s", t, sd_last_error());
        sdi_error_clear();
    }
    omp_set_num_threads(keep);
    rows_free(&r);
}

/* The CTA-size transfer of large products: only when the fastest family's best runs
 * another T than its preset and beat the preset by SDI_SG_TRANSFER_GAIN; the others' bests
 * get that T unless they have it; illegal sizes are dropped. */
static void test_transfer_threads(void)
{
    sdi_spgemm_config won = preset(SDI_SPGEMM_DENSE), bests[3], out[3];
    won.threads = won.threads == 512 ? 256 : 512;
    bests[0] = preset(SDI_SPGEMM_HASH);
    bests[1] = preset(SDI_SPGEMM_HYBRID);
    bests[2] = preset(SDI_SPGEMM_TILED);
    bests[2].threads = won.threads; /* already there */
    /* Belcastro_human_gene1: 810 -> 472 ms at T = 512. */
    int n = sdi_spgemm_transfer_threads(&won, 472.0, 810.0, bests, 3, out);
    SDT_CHECK(n == 2, "two families carried (%d)", n);
    for (int i = 0; i < n; i++)
        SDT_CHECK(out[i].threads == won.threads && out[i].family == bests[i].family &&
                      out[i].load_pct == bests[i].load_pct,
                  "candidate %d: the family's best at T = %d", i, won.threads);
    SDT_CHECK(sdi_spgemm_transfer_threads(&won, 0.95 * 810.0, 810.0, bests, 3, out) == 0,
              "a 5 %% gain is not carried");
    sdi_spgemm_config same = preset(SDI_SPGEMM_DENSE);
    SDT_CHECK(sdi_spgemm_transfer_threads(&same, 472.0, 810.0, bests, 3, out) == 0,
              "the preset's own T is not an edit");
    SDT_CHECK(sdi_spgemm_transfer_threads(&won, 472.0, 0.0, bests, 3, out) == 0,
              "no preset time: nothing carried");
    sdi_spgemm_config odd = won;
    odd.threads = 96; /* not a legal CTA size */
    SDT_CHECK(sdi_spgemm_transfer_threads(&odd, 472.0, 810.0, bests, 2, out) == 0,
              "an illegal size is dropped");
}

/* Every allocation of schedule building and lowering may fail: a clean status, no leak. */
static void test_alloc_failures(void)
{
    rows_t r;
    SDT_CHECK(rows_make(&r, 3000, 50000, 9), "rows");
    const sdi_sg_limits lim = h200_limits();
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    const long long live0 = sdi_alloc_live_bytes();
    int succeeded = 0;
    for (long k = 0; k < 400 && !succeeded; k++) { /* the linked form allocates a part per segment */
        sdi_alloc_fail_after(k);
        sdi_sg_schedule s;
        sd_status st = sdi_sg_schedule_build(&c, &lim, &r.ri, &s);
        sdi_sg_lowered low;
        memset(&low, 0, sizeof low);
        if (st == SD_OK)
            st = sdi_spgemm_lower(&s, &low);
        sdi_alloc_fail_after(-1);
        SDT_CHECK(st == SD_OK || st == SD_ERR_OUT_OF_MEMORY, "k=%ld: %s", k, sd_status_string(st));
        succeeded = st == SD_OK;
        sdi_sg_lowered_free(&low);
        sdi_sg_schedule_free(&s);
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "k=%ld: %lld bytes leaked", k,
                  sdi_alloc_live_bytes() - live0);
    }
    SDT_CHECK(succeeded, "never succeeded");
    rows_free(&r);
}

int main(void)
{
    sdt_init("test_spgemm_bins");
    SDT_RUN(test_presets_and_checks);
    SDT_RUN(test_row_rules);
    SDT_RUN(test_cta_threshold);
    SDT_RUN(test_wide_stripe);
    SDT_RUN(test_smem_formulas);
    SDT_RUN(test_schedule_details);
    SDT_RUN(test_schedules);
    SDT_RUN(test_fuse_cap);
    SDT_RUN(test_residency);
    SDT_RUN(test_winner_edit_schedules);
    SDT_RUN(test_enumerate);
    SDT_RUN(test_thread_invariance);
    SDT_RUN(test_transfer_threads);
    SDT_RUN(test_alloc_failures);
    return sdt_finish();
}
