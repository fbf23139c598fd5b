/* tests/cpu/test_pcsr.c: PCSR (ParamSpMM) and every SpMM format builder (split chunks,
 * row windows, column windows, BSR, blocked-ELL, tensor-core tiles) round-trip to CSR,
 * with their structural invariants, on generator families and edge-case matrices; the
 * SpMM plan families' legality and enumeration; allocation-failure sweeps without leaks. */
#include <omp.h>
#include <string.h>

#include "formats/spmm_formats.h"
#include "gen/gen.h"
#include "plan/spmm.h"
#include "sdt.h"

/* Matrices every builder sees: generator families plus hand-made edge cases. */
static const char *const specs[] = {
    "stencil2d:n=13",
    "banded:n=300,bw=5,fill=0.6",
    "blockdiag:n=200,b=7",
    "uniform:rows=300,cols=170,deg=6",
    "uniform:rows=40,cols=900,deg=30",
    "powerlaw:rows=700,deg=6,alpha=1.8",
    "rmat:scale=9,ef=8",
    "bimodal:rows=500,short=3,long=300,frac=0.04",
    "knn:n=400,k=6",
};
#define NSPECS ((int)(sizeof specs / sizeof specs[0]))
#define NEDGE 6

/* Edge case e: 0×0, 1×1, 4×6 with empty rows, a dense row among empty ones, 1×n, n×1. */
static sd_status edge_matrix(int e, sd_csr *out)
{
    static const int rows[NEDGE] = {0, 1, 4, 9, 1, 37};
    static const int cols[NEDGE] = {0, 1, 6, 300, 53, 1};
    sdi_coo c;
    sd_status s = sdi_coo_init(&c, rows[e], cols[e], 16);
    if (s != SD_OK)
        return s;
    switch (e) {
    case 1: s = sdi_coo_push(&c, 0, 0, 2.0f); break;
    case 2:
        s = sdi_coo_push(&c, 1, 0, 1.0f);
        if (s == SD_OK) s = sdi_coo_push(&c, 1, 5, -1.0f);
        if (s == SD_OK) s = sdi_coo_push(&c, 3, 2, 0.0f); /* explicit zero kept */
        break;
    case 3:
        for (int j = 0; j < 300 && s == SD_OK; j++)
            s = sdi_coo_push(&c, 4, j, (float)(j % 5) - 2.0f);
        if (s == SD_OK) s = sdi_coo_push(&c, 8, 299, 1.0f);
        break;
    case 4:
        for (int j = 0; j < 53 && s == SD_OK; j += 2)
            s = sdi_coo_push(&c, 0, j, 1.0f);
        break;
    case 5:
        for (int i = 0; i < 37 && s == SD_OK; i += 3)
            s = sdi_coo_push(&c, i, 0, 1.0f);
        break;
    default: break;
    }
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    return s;
}

/* Matrix number m of the test set (NSPECS generated, then NEDGE edge cases). */
static int load_matrix(int m, sd_csr *a, char *label, size_t cap)
{
    sd_status s;
    if (m < NSPECS) {
        s = sdi_gen(specs[m], sdt_seed + (unsigned)m, a);
        snprintf(label, cap, "%s", specs[m]);
        if (s == SD_OK)
            sdi_gen_values(a, SDI_VALUES_SMALL_INT, sdt_seed + 7u * (unsigned)m);
    } else {
        s = edge_matrix(m - NSPECS, a);
        snprintf(label, cap, "edge case %d", m - NSPECS);
    }
    SDT_CHECK(s == SD_OK, "%s: %s", label, sd_last_error());
    return s == SD_OK;
}

static bool same_csr(const sd_csr *a, const sd_csr *b)
{
    if (!sdi_csr_same_pattern(a, b))
        return false;
    return a->nnz == 0 || memcmp(a->vals, b->vals, (size_t)a->nnz * sizeof(float)) == 0;
}

/* ------------------------------------------------------------------ PCSR */

static void check_pcsr(const sd_csr *a, const char *label, int v, int s, int bound)
{
    sdi_pcsr p;
    sd_status st = sdi_pcsr_build(a, v, s, bound, &p);
    SDT_CHECK(st == SD_OK, "%s V=%d S=%d bound=%d: %s", label, v, s, bound, sd_last_error());
    if (st != SD_OK)
        return;
    /* Slots: every row padded to a multiple of V; PR_V agrees with the shortcut. */
    int64_t want_slots = 0, want_prows = 0;
    int32_t want_split = 0;
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t len = a->rowptr[i + 1] - a->rowptr[i];
        int64_t padded = (len + v - 1) / v * v;
        want_slots += padded;
        int64_t pieces = (s && padded > bound) ? (padded + bound - 1) / bound : 1;
        want_prows += pieces;
        want_split += pieces > 1;
    }
    SDT_CHECK(p.slots == want_slots, "%s: slots %lld, want %lld", label, (long long)p.slots,
              (long long)want_slots);
    SDT_CHECK(p.prows == want_prows, "%s: PCSR rows %lld, want %lld", label, (long long)p.prows,
              (long long)want_prows);
    SDT_CHECK(p.nsplit == want_split, "%s: split rows %d, want %d", label, p.nsplit, want_split);
    double pr = a->nnz > 0 ? (double)want_slots / (double)a->nnz : 0.0;
    SDT_CHECK(fabs(sdi_pcsr_padding_ratio(a, v) - pr) < 1e-12, "%s: PR_%d %g vs %g", label, v,
              sdi_pcsr_padding_ratio(a, v), pr);
    sdi_pcsr_features f;
    sdi_pcsr_describe(&p, &f);
    SDT_CHECK(fabs(f.pr - pr) < 1e-12, "%s: described PR %g", label, f.pr);
    /* Row pointers: multiples of V, at most bound slots per PCSR row with S. */
    int bad = 0;
    for (int64_t q = 0; q < p.prows && !bad; q++) {
        int64_t l = p.rowptr[q + 1] - p.rowptr[q];
        if (p.rowptr[q] % v != 0 || l < 0 || (s && l > bound))
            bad = 1;
        if (s) {
            int32_t r = p.trow[q] < 0 ? -p.trow[q] - 1 : p.trow[q];
            int64_t len = a->rowptr[r + 1] - a->rowptr[r];
            bool split = (len + v - 1) / v * v > bound;
            if ((p.trow[q] < 0) != split)
                bad = 2;
        }
    }
    SDT_CHECK(!bad, "%s V=%d S=%d: row pointer / target row invariant %d broken", label, v, s,
              bad);
    SDT_CHECK(p.rowptr[p.prows] == p.slots, "%s: last row pointer", label);
    /* Slot sources: real slots carry their CSR entry, padding repeats the last column. */
    bad = 0;
    for (int64_t q = 0; q < p.slots && !bad; q++) {
        if (p.src[q] >= 0) {
            if (p.colidx[q] != a->colind[p.src[q]] || p.val[q] != a->vals[p.src[q]])
                bad = 1;
        } else if (p.val[q] != 0.0f || q == 0 || p.colidx[q] != p.colidx[q - 1]) {
            bad = 2;
        }
    }
    SDT_CHECK(!bad, "%s V=%d S=%d: slot source invariant %d broken", label, v, s, bad);
    sd_csr back;
    st = sdi_pcsr_to_csr(&p, &back);
    SDT_CHECK(st == SD_OK, "%s: to_csr: %s", label, sd_last_error());
    if (st == SD_OK) {
        SDT_CHECK(same_csr(a, &back), "%s V=%d S=%d bound=%d: round trip differs", label, v, s,
                  bound);
        sd_csr_free(&back);
    }
    /* Values refresh through the sources. */
    if (a->nnz > 0) {
        float *nv = sdi_malloc_array((size_t)a->nnz, sizeof *nv);
        float *dst = sdi_malloc_array((size_t)(p.slots > 0 ? p.slots : 1), sizeof *dst);
        if (nv && dst) {
            for (int64_t k = 0; k < a->nnz; k++)
                nv[k] = (float)(k % 7) + 0.5f;
            sdi_spmm_gather_values(p.src, p.slots, nv, dst);
            int badv = 0;
            for (int64_t q = 0; q < p.slots; q++)
                if (dst[q] != (p.src[q] >= 0 ? nv[p.src[q]] : 0.0f))
                    badv = 1;
            SDT_CHECK(!badv, "%s: value gather", label);
        }
        sdi_free(nv);
        sdi_free(dst);
    }
    sdi_pcsr_free(&p);
}

static void test_pcsr_round_trip(void)
{
    for (int m = 0; m < NSPECS + NEDGE; m++) {
        sd_csr a;
        char label[128];
        if (!load_matrix(m, &a, label, sizeof label))
            continue;
        for (int v = 1; v <= 2; v++) {
            check_pcsr(&a, label, v, 0, 0);
            check_pcsr(&a, label, v, 1, v);       /* every PCSR row a single vector */
            check_pcsr(&a, label, v, 1, 4 * v);
            check_pcsr(&a, label, v, 1, 128 * v); /* the plan default */
        }
        sd_csr_free(&a);
    }
}

/* The build runs row ranges on a team of threads: the same arrays as on one thread, on a
 * matrix large enough for a team (300,000 rows) with long rows to split. */
static bool pcsr_same(const sdi_pcsr *x, const sdi_pcsr *y)
{
    if (x->prows != y->prows || x->slots != y->slots || x->nsplit != y->nsplit ||
        (x->trow == NULL) != (y->trow == NULL))
        return false;
    const size_t sl = (size_t)x->slots, pr = (size_t)x->prows;
    return memcmp(x->rowptr, y->rowptr, (pr + 1) * sizeof *x->rowptr) == 0 &&
           memcmp(x->colidx, y->colidx, sl * sizeof *x->colidx) == 0 &&
           memcmp(x->val, y->val, sl * sizeof *x->val) == 0 &&
           memcmp(x->src, y->src, sl * sizeof *x->src) == 0 &&
           (x->trow == NULL || (memcmp(x->trow, y->trow, pr * sizeof *x->trow) == 0 &&
                                memcmp(x->split_rows, y->split_rows,
                                       (size_t)x->nsplit * sizeof *x->split_rows) == 0));
}

static void test_pcsr_threads(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=300000,deg=5,alpha=1.8,max=3000", 11, &a));
    const int threads0 = omp_get_max_threads();
    for (int v = 1; v <= 2; v++)
        for (int s = 0; s <= 1; s++) {
            sdi_pcsr one, many;
            omp_set_num_threads(1);
            SDT_OK(sdi_pcsr_build(&a, v, s, 64 * v, &one));
            omp_set_num_threads(4);
            SDT_OK(sdi_pcsr_build(&a, v, s, 64 * v, &many));
            SDT_CHECK(pcsr_same(&one, &many), "V=%d S=%d: 4 threads built other arrays", v, s);
            SDT_CHECK(!s || one.nsplit > 0, "V=%d S=%d: no row split", v, s);
            sdi_pcsr_free(&one);
            sdi_pcsr_free(&many);
        }
    /* A failed allocation inside the team: a status and a message on the calling thread
     * (errors are thread-local), nothing leaked. */
    omp_set_num_threads(4);
    long long live0 = sdi_alloc_live_bytes();
    for (long n = 0; n < 7; n++) {
        sdi_pcsr p;
        sdi_alloc_fail_after(n);
        sd_status st = sdi_pcsr_build(&a, 2, 1, 128, &p);
        sdi_alloc_fail_after(-1);
        SDT_CHECK(st == SD_ERR_OUT_OF_MEMORY && strstr(sd_last_error(), "PCSR") != NULL,
                  "failure at allocation %ld: status %d, '%s'", n, st, sd_last_error());
        sdi_pcsr_free(&p);
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "leak after failing at allocation %ld", n);
    }
    omp_set_num_threads(threads0);
    sd_csr_free(&a);
}

/* Block and window counts (the sweeps' screens) in parallel: the same sums and maxima with
 * one thread and with four, and the builders' (serial) numbers; a failed mark allocation
 * inside the team is a status on the calling thread, nothing leaked. */
static void test_counts_threads(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=300000,deg=5,alpha=1.8,max=3000", 12, &a));
    const int threads0 = omp_get_max_threads();
    static const int sizes[][2] = {{1, 1}, {2, 2}, {4, 4}, {16, 8}, {3, 7}};
    for (int q = 0; q < 5; q++) {
        const int bm = sizes[q][0], bn = sizes[q][1];
        int64_t nb1 = -1, w1 = -1, nb4 = -2, w4 = -2, ns1 = -1, ns4 = -2;
        omp_set_num_threads(1);
        SDT_OK(sdi_spmm_blocks_count(&a, bm, bn, &nb1, &w1));
        SDT_OK(sdi_spmm_colwin_count(&a, bm, 8 * bn, &ns1));
        omp_set_num_threads(4);
        SDT_OK(sdi_spmm_blocks_count(&a, bm, bn, &nb4, &w4));
        SDT_OK(sdi_spmm_colwin_count(&a, bm, 8 * bn, &ns4));
        SDT_CHECK(nb1 == nb4 && w1 == w4, "blocks %dx%d: 1 thread %lld / %lld, 4 threads %lld / %lld",
                  bm, bn, (long long)nb1, (long long)w1, (long long)nb4, (long long)w4);
        SDT_CHECK(ns1 == ns4, "windows %dx%d: 1 thread %lld, 4 threads %lld", bm, 8 * bn,
                  (long long)ns1, (long long)ns4);
        sdi_spmm_blocks b;
        SDT_OK(sdi_spmm_blocks_build(&a, bm, bn, 0, 0, &b));
        SDT_CHECK(b.nblocks == nb4, "blocks %dx%d: built %lld, counted %lld", bm, bn,
                  (long long)b.nblocks, (long long)nb4);
        sdi_spmm_blocks_free(&b);
        sdi_spmm_colwin c;
        SDT_OK(sdi_spmm_colwin_build(&a, bm, 8 * bn, &c));
        SDT_CHECK(c.nseg == ns4, "windows %dx%d: built %lld, counted %lld", bm, 8 * bn,
                  (long long)c.nseg, (long long)ns4);
        sdi_spmm_colwin_free(&c);
    }
    long long live0 = sdi_alloc_live_bytes();
    for (long n = 0; n < 3; n++) {
        int64_t nb = 0, w = 0;
        sdi_alloc_fail_after(n);
        sd_status st = sdi_spmm_blocks_count(&a, 2, 2, &nb, &w);
        sdi_alloc_fail_after(-1);
        SDT_CHECK(st == SD_ERR_OUT_OF_MEMORY && strstr(sd_last_error(), "marks") != NULL,
                  "failure at allocation %ld: status %d, '%s'", n, st, sd_last_error());
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "leak after failing at allocation %ld", n);
    }
    omp_set_num_threads(threads0);
    sd_csr_free(&a);
}

static void test_pcsr_example(void)
{
    /* Rows of lengths 3, 0, 4, 1 with V = 2: padding 1 + 0 + 0 + 1 → PR_2 = 10 / 8. */
    int64_t rp[] = {0, 3, 3, 7, 8};
    int32_t ci[] = {0, 2, 5, 1, 2, 3, 4, 6};
    float v[] = {1, 2, 3, 4, 5, 6, 7, 8};
    sd_csr a = {4, 7, 8, rp, ci, v};
    SDT_CHECK(fabs(sdi_pcsr_padding_ratio(&a, 2) - 10.0 / 8.0) < 1e-12, "PR_2");
    SDT_CHECK(fabs(sdi_pcsr_padding_ratio(&a, 1) - 1.0) < 1e-12, "PR_1");
    sdi_pcsr p;
    SDT_OK(sdi_pcsr_build(&a, 2, 1, 2, &p));
    /* bound 2: row 0 (4 slots) → 2 PCSR rows, row 1 → 1 empty, row 2 → 2, row 3 → 1. */
    SDT_CHECK(p.prows == 6, "prows %lld", (long long)p.prows);
    int32_t want_trow[] = {-1, -1, 1, -3, -3, 3};
    for (int q = 0; q < 6 && p.prows == 6; q++)
        SDT_CHECK(p.trow[q] == want_trow[q], "trow[%d] = %d, want %d", q, p.trow[q],
                  want_trow[q]);
    SDT_CHECK(p.nsplit == 2 && p.split_rows[0] == 0 && p.split_rows[1] == 2, "split rows");
    SDT_CHECK(p.colidx[3] == 5 && p.val[3] == 0.0f && p.src[3] == -1, "padding slot");
    sdi_pcsr_free(&p);
    SDT_STATUS(sdi_pcsr_build(&a, 3, 0, 0, &p), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_pcsr_build(&a, 2, 1, 3, &p), SD_ERR_INVALID_ARG);
}

/* ------------------------------------------------------------------ other builders */

static void check_split(const sd_csr *a, const char *label, int t, int ch, int mode)
{
    sdi_spmm_split sp;
    sd_status s = sdi_spmm_split_build(a, t, ch, mode, &sp);
    SDT_CHECK(s == SD_OK, "%s split T=%d CH=%d: %s", label, t, ch, sd_last_error());
    if (s != SD_OK)
        return;
    sd_csr back;
    s = sdi_spmm_split_to_csr(a, &sp, &back);
    SDT_CHECK(s == SD_OK, "%s split T=%d CH=%d mode %d: %s", label, t, ch, mode,
              sd_last_error());
    if (s == SD_OK) {
        SDT_CHECK(same_csr(a, &back), "%s split T=%d CH=%d: round trip differs", label, t, ch);
        sd_csr_free(&back);
    }
    if (mode == SDI_SPMM_SPLIT_FIXUP && sp.nlong > 0)
        SDT_CHECK(sp.long_first[sp.nlong] == sp.nchunks, "%s: long_first end", label);
    sdi_spmm_split_free(&sp);
}

static void check_windows(const sd_csr *a, const char *label, int rows, int cap)
{
    sdi_spmm_windows w;
    sd_status s = sdi_spmm_windows_build(a, rows, cap, &w);
    SDT_CHECK(s == SD_OK, "%s windows: %s", label, sd_last_error());
    if (s != SD_OK)
        return;
    int bad = 0;
    SDT_CHECK(w.nwin == 0 ? a->rows == 0 : (w.win_ptr[0] == 0 && w.win_ptr[w.nwin] == a->rows),
              "%s windows: cover", label);
    for (int32_t q = 0; q < w.nwin && !bad; q++) {
        int32_t r0 = w.win_ptr[q], r1 = w.win_ptr[q + 1];
        int64_t n = a->rowptr[r1] - a->rowptr[r0];
        if (r1 <= r0 || r1 - r0 > rows || (r1 - r0 > 1 && n > cap))
            bad = 1;
        /* greedy: the next row would not have fit */
        if (r1 < a->rows && r1 - r0 < rows && a->rowptr[r1 + 1] - a->rowptr[r0] <= cap)
            bad = 2;
    }
    SDT_CHECK(!bad, "%s windows rows=%d cap=%d: invariant %d broken", label, rows, cap, bad);
    sdi_spmm_windows_free(&w);
}

static void check_colwin(const sd_csr *a, const char *label, int panel, int width)
{
    sdi_spmm_colwin c;
    sd_status s = sdi_spmm_colwin_build(a, panel, width, &c);
    SDT_CHECK(s == SD_OK, "%s colwin: %s", label, sd_last_error());
    if (s != SD_OK)
        return;
    int64_t nseg = -1;
    SDT_OK(sdi_spmm_colwin_count(a, panel, width, &nseg));
    SDT_CHECK(nseg == c.nseg, "%s colwin: count %lld vs %lld", label, (long long)nseg,
              (long long)c.nseg);
    sd_csr back;
    s = sdi_spmm_colwin_to_csr(&c, &back);
    SDT_CHECK(s == SD_OK, "%s colwin: %s", label, sd_last_error());
    if (s == SD_OK) {
        SDT_CHECK(same_csr(a, &back), "%s colwin %dx%d: round trip differs", label, panel,
                  width);
        sd_csr_free(&back);
    }
    sdi_spmm_colwin_free(&c);
}

static void check_blocks(const sd_csr *a, const char *label, int bm, int bn, int ell, int tc)
{
    int64_t nb = 0, widest = 0;
    SDT_OK(sdi_spmm_blocks_count(a, bm, bn, &nb, &widest));
    int w = ell ? (int)(widest > 0 ? widest : 1) + (ell > 1 ? 1 : 0) : 0;
    sdi_spmm_blocks b;
    sd_status s = sdi_spmm_blocks_build(a, bm, bn, w, tc, &b);
    SDT_CHECK(s == SD_OK, "%s blocks %dx%d ell=%d: %s", label, bm, bn, w, sd_last_error());
    if (s != SD_OK)
        return;
    SDT_CHECK(ell || b.nblocks == nb, "%s: BSR blocks %lld vs count %lld", label,
              (long long)b.nblocks, (long long)nb);
    sd_csr back;
    s = sdi_spmm_blocks_to_csr(&b, &back);
    SDT_CHECK(s == SD_OK, "%s blocks: %s", label, sd_last_error());
    if (s == SD_OK) {
        SDT_CHECK(same_csr(a, &back), "%s blocks %dx%d ell=%d tc=%d: round trip differs", label,
                  bm, bn, w, tc);
        sd_csr_free(&back);
    }
    sdi_spmm_blocks_free(&b);
}

static void test_builders_round_trip(void)
{
    for (int m = 0; m < NSPECS + NEDGE; m++) {
        sd_csr a;
        char label[128];
        if (!load_matrix(m, &a, label, sizeof label))
            continue;
        check_split(&a, label, 1, 1, 0);
        check_split(&a, label, 8, 4, 0);
        check_split(&a, label, 8, 4, 1);
        check_split(&a, label, 64, 64, 1);
        check_split(&a, label, 256, 32, 0);
        check_windows(&a, label, 1, 32);
        check_windows(&a, label, 16, 64);
        check_windows(&a, label, 128, 1024);
        check_colwin(&a, label, 1, 1);
        check_colwin(&a, label, 16, 32);
        check_colwin(&a, label, 64, 7);
        static const int bs[] = {1, 2, 3, 4, 8, 16};
        for (int q = 0; q < 6; q++) {
            check_blocks(&a, label, bs[q], bs[q], 0, 0);
            check_blocks(&a, label, bs[q], bs[q], 1, 0);
        }
        check_blocks(&a, label, 16, 8, 0, 0);
        check_blocks(&a, label, 16, 8, 0, 1);
        check_blocks(&a, label, 16, 8, 2, 1); /* blocked-ELL with a spare column */
        sd_csr_free(&a);
    }
}

static void test_tc_slots(void)
{
    /* The fragment map is a bijection of the 16×8 tile. */
    int seen[16][8];
    memset(seen, 0, sizeof seen);
    for (int e = 0; e < 128; e++) {
        int r, c;
        sdi_spmm_tc_slot(e, &r, &c);
        SDT_CHECK(r >= 0 && r < 16 && c >= 0 && c < 8, "slot %d -> (%d, %d)", e, r, c);
        if (r >= 0 && r < 16 && c >= 0 && c < 8)
            seen[r][c]++;
    }
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++)
            SDT_CHECK(seen[r][c] == 1, "(%d, %d) seen %d times", r, c, seen[r][c]);
}

/* ------------------------------------------------------------------ plan families */

static void test_plan_families(void)
{
    static const int ks[] = {1, 3, 8, 32, 33, 128, 256, 300};
    for (int m = 0; m < NSPECS + NEDGE; m += 2) {
        sd_csr a;
        char label[128];
        if (!load_matrix(m, &a, label, sizeof label))
            continue;
        sdi_spmm_stats st;
        sdi_spmm_stats_compute(&a, &st);
        for (int q = 0; q < 8; q++) {
            for (int t = 0; t < SDI_SPMM_NTEMPLATES; t++) {
                sdi_spmm_config c;
                sd_status s = sdi_spmm_config_default(t, ks[q], &st, &c);
                SDT_CHECK(s == SD_OK, "%s: default %s K=%d: %s", label,
                          sdi_spmm_template_name(t), ks[q], sd_last_error());
                if (s == SD_OK)
                    SDT_CHECK(sdi_spmm_ktile(&c) * sdi_spmm_ktiles(&c) >= ks[q],
                              "%s: tiles cover K", label);
            }
            sdi_spmm_config *cands = NULL;
            int n = 0;
            SDT_OK(sdi_spmm_enumerate(&a, ks[q], 0, 1, 0, &cands, &n));
            SDT_CHECK(n >= 3, "%s K=%d: only %d candidates", label, ks[q], n);
            for (int i = 0; i < n; i++)
                SDT_CHECK(sdi_spmm_config_check(&cands[i], &st) == SD_OK, "%s: candidate %d "
                          "illegal: %s", label, i, sd_last_error());
            int seen_row = 0;
            for (int i = 0; i < n; i++)
                seen_row |= cands[i].tmpl == SDI_SPMM_CSR_ROW;
            SDT_CHECK(seen_row, "%s K=%d: no csr_row candidate", label, ks[q]);
            sdi_free(cands);
            /* A cap keeps every template represented first. */
            SDT_OK(sdi_spmm_enumerate(&a, ks[q], 0, 2, 4, &cands, &n));
            SDT_CHECK(n <= 4, "cap");
            sdi_free(cands);
            SDT_OK(sdi_spmm_enumerate_pcsr(&a, ks[q], ks[q] < 32, &cands, &n));
            SDT_CHECK(n >= 4, "%s K=%d: %d PCSR configurations", label, ks[q], n);
            for (int i = 0; i < n; i++)
                SDT_CHECK(cands[i].tmpl == SDI_SPMM_PCSR &&
                              sdi_spmm_config_check(&cands[i], &st) == SD_OK,
                          "pcsr candidate %d", i);
            sdi_free(cands);
        }
        sd_csr_free(&a);
    }
    /* Illegal members are named. */
    sdi_spmm_stats st;
    memset(&st, 0, sizeof st);
    sdi_spmm_config c;
    SDT_OK(sdi_spmm_config_default(SDI_SPMM_CSR_ROW, 32, &st, &c));
    c.vec = 4;
    c.k = 30;
    SDT_STATUS(sdi_spmm_config_check(&c, &st), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "vec") != NULL, "message '%s'", sd_last_error());
    SDT_OK(sdi_spmm_config_default(SDI_SPMM_CSR_ROW, 32, &st, &c));
    c.nzpar = 16;
    SDT_STATUS(sdi_spmm_config_check(&c, &st), SD_ERR_INVALID_ARG);
    SDT_CHECK(sdi_spmm_template_from_name("pcsr") == SDI_SPMM_PCSR, "name lookup");
    SDT_CHECK(sdi_spmm_template_from_name("nope") == -1, "unknown name");
}

/* ------------------------------------------------------------------ failures */

static void test_alloc_failures(void)
{
    sd_csr a;
    char label[128];
    if (!load_matrix(7, &a, label, sizeof label))
        return;
    long long live0 = sdi_alloc_live_bytes();
    int succeeded = 0;
    for (long n = 0; n < 200 && !succeeded; n++) {
        sdi_alloc_fail_after(n);
        sdi_pcsr p;
        sdi_spmm_split sp;
        sdi_spmm_colwin cw;
        sdi_spmm_blocks bk;
        sd_status s1 = sdi_pcsr_build(&a, 2, 1, 8, &p);
        /* the message is the caller's (the build allocates inside a team of threads) */
        SDT_CHECK(s1 == SD_OK || strstr(sd_last_error(), "PCSR") != NULL,
                  "pcsr failure at %ld names PCSR: '%s'", n, sd_last_error());
        sd_status s2 = sdi_spmm_split_build(&a, 16, 8, 1, &sp);
        sd_status s3 = sdi_spmm_colwin_build(&a, 16, 16, &cw);
        sd_status s4 = sdi_spmm_blocks_build(&a, 4, 4, 0, 0, &bk);
        sdi_alloc_fail_after(-1);
        succeeded = s1 == SD_OK && s2 == SD_OK && s3 == SD_OK && s4 == SD_OK;
        SDT_CHECK(s1 == SD_OK || s1 == SD_ERR_OUT_OF_MEMORY, "pcsr status %d", s1);
        sdi_pcsr_free(&p);
        sdi_spmm_split_free(&sp);
        sdi_spmm_colwin_free(&cw);
        sdi_spmm_blocks_free(&bk);
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "leak after failing at allocation %ld", n);
    }
    SDT_CHECK(succeeded, "never succeeded");
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_pcsr");
    SDT_RUN(test_pcsr_example);
    SDT_RUN(test_pcsr_round_trip);
    SDT_RUN(test_pcsr_threads);
    SDT_RUN(test_counts_threads);
    SDT_RUN(test_builders_round_trip);
    SDT_RUN(test_tc_slots);
    SDT_RUN(test_plan_families);
    SDT_RUN(test_alloc_failures);
    return sdt_finish();
}
