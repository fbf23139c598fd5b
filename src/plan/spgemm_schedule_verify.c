/* src/plan/spgemm_schedule_verify.c: a SpGEMM schedule's invariants (sdi_sg_schedule_verify,
 * for tests and debug builds) and its forms for reports: the one-line summary of its bins
 * and its JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "spgemm.h"

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
            const int64_t span = sdi_sg_row_span(ri, i);
            if (u <= 0)
                FAIL("row %d has no products but sits in bin %d", i, b);
            if (!sdi_sg_row_fits(bn->kind, bn->p, u, span, s->gwidth))
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
        } else if ((int64_t)bn->blocks * sdi_sg_rows_per_cta(bn->kind, bn->g, bn->threads) < bn->nrows) {
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
    if (s->eager_cap > 0 && (s->out_ub || s->eager_cap != sdi_sg_c_bound(ri)))
        FAIL("eager output of %lld entries (bound %lld, ub-out %d)", (long long)s->eager_cap,
             (long long)sdi_sg_c_bound(ri), s->out_ub);
#undef FAIL
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

