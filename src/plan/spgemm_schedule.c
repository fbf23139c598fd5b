/* src/plan/spgemm_schedule.c: binning a SpGEMM product under one configuration: every row
 * by its upper bound u(i) and column span into a bin (sdi_sg_classify's accumulator), the
 * bins' one-phase decision within the workspace budget, the global stripes, and the
 * launches of both stages (sdi_sg_schedule_build). Checked by spgemm_schedule_verify.c. */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>

#include "spgemm.h"

_Static_assert(sizeof ((sdi_sg_schedule *)0)->config_text >= SDI_SPGEMM_CONFIG_TEXT,
               "a schedule holds any configuration's line");

static int is_group_kind(int kind) { return kind == SDI_SG_GHASH || kind == SDI_SG_GDENSE; }

int sdi_sg_row_fits(int kind, int p, int64_t u, int64_t span, int64_t gwidth)
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

int64_t sdi_sg_row_span(const sdi_sg_rowinfo *ri, int32_t i)
{
    const int64_t span = ri->u[i] > 0 ? (int64_t)ri->hi[i] - ri->lo[i] + 1 : 0;
    return span < ri->n ? span : ri->n;
}

int64_t sdi_sg_rows_per_cta(int kind, int g, int threads)
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

int64_t sdi_sg_c_bound(const sdi_sg_rowinfo *ri)
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
    s->bt_gather = c->bt_gather;
    sdi_spgemm_config_describe(c, s->config_text, sizeof s->config_text);
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
            const int64_t span = sdi_sg_row_span(ri, i);
            int32_t kind, g, p;
            sdi_sg_classify(c, lim, ri->n, u, span, flags, &kind, &g, &p);
            if (c->force_kind >= 0 && !sdi_sg_row_fits(kind, p, u, span, -1) && my_bad == INT64_MAX)
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
        const int64_t span = sdi_sg_row_span(ri, i);
        int32_t kind, g, p;
        sdi_sg_classify(c, lim, ri->n, ri->u[i], span, flags, &kind, &g, &p);
        SD_FREE_ALL;
        const long long size = (long long)sdi_sg_kind_size(kind, p);
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
        const int64_t bound = sdi_sg_c_bound(ri);
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
            const int64_t rpc = sdi_sg_rows_per_cta(bn->kind, bn->g, bn->threads);
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

bool sdi_sg_schedule_uses_atomics(const sdi_sg_schedule *s)
{
    for (int b = 0; b < s->nbins; b++)
        if (s->bins[b].nrows > 0 && s->bins[b].kind != SDI_SG_TINY && s->bins[b].kind != SDI_SG_COPY)
            return true;
    return false;
}
