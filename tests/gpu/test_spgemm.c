/* tests/gpu/test_spgemm.c: the SpGEMM mechanism library on a GPU: every accumulator
 * (forced onto products that exercise it) and every plan family validated against the
 * CPU reference: tiny rows, one row of 10^5 products, empty rows, rectangular A·Aᵀ
 * (device transpose incl. its merge path), cancellation and explicit zeros (entries
 * kept), products processed in waves larger than the workspace's chunk, general A·B,
 * repeated calls, real matrices. Small-integer values make FP32 sums exact, so values
 * are compared exactly (a dropped or doubled product cannot hide); real matrices use
 * the bound of docs/ARCHITECTURE.md "Validation". A failure names the row, its bin and
 * accumulator. Exit 77 without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "gen/gen.h"
#include "ref/ref.h"
#include "lower/spgemm_units.h"
#include "runtime/device_memory.h"
#include "runtime/spgemm_exec.h"
#include "sdt.h"

static sd_context *g_ctx;
static int g_cases, g_case_failures;

/* ------------------------------------------------------------------ matrices */

/* Row i holds columns (i·mul[j] + off[j]) mod cols, j < d (duplicates merged). */
static sd_status make_circulant(int32_t rows, int32_t cols, int d, const int *mul, const int *off,
                                sd_csr *out)
{
    sdi_coo c;
    sd_status s = sdi_coo_init(&c, rows, cols, (int64_t)rows * d);
    if (s != SD_OK)
        return s;
    for (int32_t i = 0; i < rows && s == SD_OK; i++)
        for (int j = 0; j < d && s == SD_OK; j++)
            s = sdi_coo_push(&c, i, (int32_t)(((int64_t)i * mul[j] + off[j]) % cols), 1.0f);
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    return s;
}

/* d columns per row spread over the whole width (distinct multipliers and offsets). */
static sd_status make_spread(int32_t n, int d, sd_csr *out)
{
    int mul[256], off[256];
    for (int j = 0; j < d && j < 256; j++) {
        mul[j] = 1 + 2 * j;
        off[j] = (int)((j * 2654435761u) % (unsigned)n);
    }
    return make_circulant(n, n, d < 256 ? d : 256, mul, off, out);
}

static sd_status gen(const char *spec, uint64_t seed, sd_csr *out)
{
    sd_status s = sdi_gen(spec, seed, out);
    if (s == SD_OK)
        sdi_gen_values(out, SDI_VALUES_SMALL_INT, seed + 1);
    return s;
}

static sd_status from_triplets(int32_t rows, int32_t cols, int n, const int *ri, const int *ci,
                               const float *v, sd_csr *out)
{
    sdi_coo c;
    sd_status s = sdi_coo_init(&c, rows, cols, n);
    for (int k = 0; k < n && s == SD_OK; k++)
        s = sdi_coo_push(&c, ri[k], ci[k], v[k]);
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    return s;
}

/* ------------------------------------------------------------------ checking */

/* The bin holding row r (−1 if the row has no products). */
static int bin_of_row(const sdi_sg_schedule *s, int32_t r)
{
    for (int b = 0; b < s->nbins; b++)
        for (int32_t x = s->bins[b].first; x < s->bins[b].first + s->bins[b].nrows; x++)
            if (s->binrows[x] == r)
                return b;
    return -1;
}

static void name_row(const sdi_sg_schedule *s, int32_t r, char *buf, size_t cap)
{
    const int b = bin_of_row(s, r);
    if (b < 0) {
        snprintf(buf, cap, "row %d (no bin: no products)", r);
        return;
    }
    const sdi_sg_bin *bn = &s->bins[b];
    snprintf(buf, cap, "row %d in bin %d: %s lanes=%d size=2^%d %s T=%d (u_max %lld)", r, b,
             sdi_sg_kind_name(bn->kind), bn->g, bn->p, bn->one_phase ? "one-phase" : "two-phase",
             bn->threads, (long long)bn->u_max);
}

/* Compares got (host copy of the device result) with want: exact structure, strictly
 * increasing columns, exact values when `exact`, else the bound of docs/ARCHITECTURE.md
 * "Validation". */
static int compare(const char *label, const sdi_sg_schedule *sched, const sd_csr *got,
                   const sdi_ref_csr *want, int exact)
{
    char where[256];
    if (got->rows != want->rows || got->cols != want->cols || got->nnz != want->nnz) {
        SDT_CHECK(0, "%s: got %dx%d nnz %lld, want %dx%d nnz %lld", label, got->rows, got->cols,
                  (long long)got->nnz, want->rows, want->cols, (long long)want->nnz);
        /* name the first row whose count differs */
        for (int32_t i = 0; i < got->rows && i < want->rows; i++) {
            int64_t gl = got->rowptr[i + 1] - got->rowptr[i];
            int64_t wl = want->rowptr[i + 1] - want->rowptr[i];
            if (gl != wl) {
                name_row(sched, i, where, sizeof where);
                fprintf(stderr, "    first differing count: %s: got %lld entries, want %lld\n",
                        where, (long long)gl, (long long)wl);
                break;
            }
        }
        return 0;
    }
    for (int32_t i = 0; i < got->rows; i++) {
        if (got->rowptr[i + 1] != want->rowptr[i + 1]) {
            name_row(sched, i, where, sizeof where);
            SDT_CHECK(0, "%s: %s: row pointer %lld, want %lld", label, where,
                      (long long)got->rowptr[i + 1], (long long)want->rowptr[i + 1]);
            return 0;
        }
        for (int64_t p = got->rowptr[i]; p < got->rowptr[i + 1]; p++) {
            if (p > got->rowptr[i] && got->colind[p] <= got->colind[p - 1]) {
                name_row(sched, i, where, sizeof where);
                SDT_CHECK(0, "%s: %s: columns not increasing at entry %lld (%d after %d)", label,
                          where, (long long)(p - got->rowptr[i]), got->colind[p], got->colind[p - 1]);
                return 0;
            }
            if (got->colind[p] != want->colind[p]) {
                name_row(sched, i, where, sizeof where);
                SDT_CHECK(0, "%s: %s: entry %lld has column %d, want %d", label, where,
                          (long long)(p - got->rowptr[i]), got->colind[p], want->colind[p]);
                return 0;
            }
            if (exact && (double)got->vals[p] != want->vals[p]) {
                name_row(sched, i, where, sizeof where);
                SDT_CHECK(0, "%s: %s: column %d value %.9g, want %.9g (exact)", label, where,
                          got->colind[p], got->vals[p], want->vals[p]);
                return 0;
            }
        }
    }
    sdi_validation v;
    sd_status s = sdi_validate_spgemm(got, want, &v);
    if (s != SD_OK) {
        if (v.row >= 0)
            name_row(sched, (int32_t)v.row, where, sizeof where);
        else
            snprintf(where, sizeof where, "(no row)");
        SDT_CHECK(0, "%s: validation: %s; worst at %s", label, v.reason, where);
        return 0;
    }
    return 1;
}

static sd_status download(const sd_device_csr *d, sd_csr *h)
{
    sd_status s = sdi_csr_alloc(h, d->rows, d->cols, d->nnz);
    if (s != SD_OK)
        return s;
    s = sdi_copy_to_host(g_ctx, h->rowptr, d->rowptr, ((size_t)d->rows + 1) * 8, "C row pointers");
    if (s == SD_OK && d->nnz > 0)
        s = sdi_copy_to_host(g_ctx, h->colind, d->colind, (size_t)d->nnz * 4, "C columns");
    if (s == SD_OK && d->nnz > 0)
        s = sdi_copy_to_host(g_ctx, h->vals, d->vals, (size_t)d->nnz * 4, "C values");
    return s;
}

/* The executor of cfg on op: scheduled under the device's limits and lowered
 * (sdi_spgemm_lower_config), then adopted (the schedule moves in, the units are read);
 * what remains of the lowering is freed here. */
static sd_status executor(sdi_spgemm_operands *op, const sdi_spgemm_config *cfg,
                          sdi_spgemm_exec **e)
{
    *e = NULL;
    sdi_sg_limits lim;
    sdi_sg_limits_from_props(&g_ctx->props, &lim);
    sdi_lowered low;
    sd_status s = sdi_spgemm_lower_config(&lim, sdi_spgemm_operands_rowinfo(op), cfg, &low);
    if (s == SD_OK)
        s = sdi_spgemm_exec_adopt(g_ctx, op, &low.sg, &low.sg_units, e);
    sdi_lowered_free(&low);
    return s;
}

/* C = A·B (b given), A·Aᵀ (aat) or A·A under cfg, `calls` times; every result checked.
 * want_kind ≥ 0: the schedule must contain a bin of that kind. */
static int run_case(const char *label, const sd_csr *a, const sd_csr *b, int aat,
                    const sdi_spgemm_config *cfg, int calls, int exact, int want_kind)
{
    sdi_spgemm_operands *op = NULL;
    sdi_spgemm_exec *e = NULL;
    sdi_ref_csr want;
    sd_csr bt, got;
    sd_device_csr dc;
    memset(&want, 0, sizeof want);
    memset(&bt, 0, sizeof bt);
    memset(&got, 0, sizeof got);
    memset(&dc, 0, sizeof dc);
    int ok = 0;
    char cfgtext[256];
    sdi_spgemm_config_describe(cfg, cfgtext, sizeof cfgtext);
    g_cases++;
    const sd_csr *bref = b != NULL ? b : a;
    if (b == NULL && aat) {
        if (sdi_csr_transpose(a, &bt) != SD_OK) {
            SDT_CHECK(0, "%s: host transpose: %s", label, sd_last_error());
            goto done;
        }
        bref = &bt;
    }
    if (sdi_ref_spgemm(a, bref, &want) != SD_OK) {
        SDT_CHECK(0, "%s: reference: %s", label, sd_last_error());
        goto done;
    }
    sd_status s = sdi_spgemm_operands_create(g_ctx, a, b, b != NULL ? 0 : aat, &op);
    SDT_CHECK(s == SD_OK, "%s: operands: %s", label, sd_last_error());
    if (s != SD_OK)
        goto done;
    s = executor(op, cfg, &e);
    SDT_CHECK(s == SD_OK, "%s [%s]: executor: %s", label, cfgtext, sd_last_error());
    if (s != SD_OK)
        goto done;
    const sdi_sg_schedule *sched = sdi_spgemm_exec_schedule(e);
    if (want_kind >= 0) {
        int found = 0;
        for (int q = 0; q < sched->nbins; q++)
            found |= sched->bins[q].kind == want_kind;
        SDT_CHECK(found, "%s: no %s bin in the schedule (%s)", label, sdi_sg_kind_name(want_kind),
                  sdi_spgemm_exec_get_info(e)->bins);
        if (!found)
            goto done;
    }
    ok = 1;
    for (int call = 0; call < calls && ok; call++) {
        s = sdi_spgemm_exec_run(e, g_ctx->stream, SDI_SG_ALLOC_ASYNC, &dc);
        if (s == SD_OK)
            s = sdi_stream_sync(g_ctx, "the SpGEMM test", label);
        SDT_CHECK(s == SD_OK, "%s [%s] call %d: %s", label, cfgtext, call, sd_last_error());
        if (s != SD_OK) {
            ok = 0;
            break;
        }
        s = download(&dc, &got);
        SDT_CHECK(s == SD_OK, "%s: download: %s", label, sd_last_error());
        if (s != SD_OK || !compare(label, sched, &got, &want, exact)) {
            ok = 0;
            fprintf(stderr, "    %s [%s] call %d: bins %s\n", label, cfgtext, call,
                    sdi_spgemm_exec_get_info(e)->bins);
        }
        sd_csr_free(&got);
        sdi_spgemm_output_free(&dc, g_ctx->stream);
    }
    if (ok) {
        const sdi_spgemm_exec_info *in = sdi_spgemm_exec_get_info(e);
        printf("  ok %-28s nnz(C) %-9lld %s | %s\n", label, (long long)in->nnz_c, cfgtext, in->bins);
    }
done:
    if (!ok)
        g_case_failures++;
    sdi_spgemm_output_free(&dc, g_ctx->stream);
    sd_csr_free(&got);
    sdi_spgemm_exec_destroy(e);
    sdi_spgemm_operands_destroy(op);
    sdi_ref_csr_free(&want);
    sd_csr_free(&bt);
    return ok;
}

static sdi_spgemm_config preset(int family)
{
    sdi_spgemm_config c;
    sdi_spgemm_config_default(family, &c);
    return c;
}

static sdi_spgemm_config forced(int kind, int g, int p)
{
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    c.force_kind = kind;
    c.force_g = g;
    c.force_p = p;
    return c;
}

/* ------------------------------------------------------------------ accumulators */

static void test_tiny_rows(void)
{
    sd_csr a2, a5;
    const int mul[5] = {1, 3, 5, 7, 11}, off[5] = {0, 17, 101, 333, 999};
    SDT_OK(make_circulant(5000, 5000, 2, mul, off, &a2)); /* u = 4 */
    SDT_OK(make_circulant(5000, 5000, 5, mul, off, &a5)); /* u = 25 */
    sdi_gen_values(&a2, SDI_VALUES_SMALL_INT, 7);
    sdi_gen_values(&a5, SDI_VALUES_SMALL_INT, 8);
    for (int ph = 0; ph < 2; ph++) {
        sdi_spgemm_config c = forced(SDI_SG_TINY, 0, 8);
        c.one_phase_max_u = ph ? 1000 : 0;
        run_case(ph ? "tiny8 one-phase" : "tiny8 two-phase", &a2, NULL, 0, &c, 1, 1, SDI_SG_TINY);
        c.force_p = 32;
        run_case(ph ? "tiny32 one-phase" : "tiny32 two-phase", &a5, NULL, 0, &c, 1, 1,
                 SDI_SG_TINY);
    }
    sdi_spgemm_config c = preset(SDI_SPGEMM_TILED);
    run_case("tiny by rules", &a5, NULL, 0, &c, 1, 1, SDI_SG_TINY);
    sd_csr_free(&a2);
    sd_csr_free(&a5);
}

static void test_group_hash(void)
{
    static const int sizes[][3] = {/* d (u = d²), lanes, log2 capacity */
                                   {8, 8, 6},   {8, 16, 7},  {16, 16, 8}, {16, 32, 9},
                                   {32, 32, 10}, {45, 32, 11}, {64, 32, 12}, {11, 8, 7}};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        sd_csr a;
        SDT_OK(make_spread(6000, sizes[t][0], &a));
        sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 100 + t);
        for (int ph = 0; ph < 2; ph++) {
            sdi_spgemm_config c = forced(SDI_SG_GHASH, sizes[t][1], sizes[t][2]);
            c.one_phase_max_u = ph ? 1 << 20 : 0;
            char label[64];
            snprintf(label, sizeof label, "ghash g%d cap%d %s", sizes[t][1], 1 << sizes[t][2],
                     ph ? "1p" : "2p");
            run_case(label, &a, NULL, 0, &c, 1, 1, SDI_SG_GHASH);
        }
        sd_csr_free(&a);
    }
}

static void test_group_dense(void)
{
    static const int sizes[][3] = {/* band half-width, lanes, log2 W */
                                   {8, 8, 6}, {30, 16, 7}, {60, 32, 8}, {200, 32, 11}, {3, 8, 5}};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        char spec[64];
        snprintf(spec, sizeof spec, "banded:n=4000,bw=%d", sizes[t][0]);
        sd_csr a;
        SDT_OK(gen(spec, 200 + t, &a));
        for (int ph = 0; ph < 2; ph++) {
            sdi_spgemm_config c = forced(SDI_SG_GDENSE, sizes[t][1], sizes[t][2]);
            c.one_phase_max_u = ph ? 1 << 20 : 0;
            char label[64];
            snprintf(label, sizeof label, "gdense g%d W%d %s", sizes[t][1], 1 << sizes[t][2],
                     ph ? "1p" : "2p");
            run_case(label, &a, NULL, 0, &c, 1, 1, SDI_SG_GDENSE);
        }
        sd_csr_free(&a);
    }
}

static void test_cta_hash(void)
{
    static const int sizes[][2] = {{32, 10}, {90, 13}, {128, 14}, {20, 9}};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        sd_csr a;
        SDT_OK(make_spread(20000, sizes[t][0], &a));
        sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 300 + t);
        for (int ph = 0; ph < 2; ph++) {
            sdi_spgemm_config c = forced(SDI_SG_CHASH, 0, sizes[t][1]);
            c.one_phase_max_u = ph ? 1 << 20 : 0;
            if (t == 3)
                c.threads = 128;
            char label[64];
            snprintf(label, sizeof label, "chash cap%d T%d %s", 1 << sizes[t][1], c.threads,
                     ph ? "1p" : "2p");
            run_case(label, &a, NULL, 0, &c, 1, 1, SDI_SG_CHASH);
        }
        sd_csr_free(&a);
    }
}

static void test_cta_dense(void)
{
    static const int sizes[][2] = {{500, 12}, {1000, 13}, {20, 7}, {4000, 15}};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        char spec[64];
        snprintf(spec, sizeof spec, "banded:n=%d,bw=%d,fill=0.3", t == 3 ? 12000 : 6000,
                 sizes[t][0]);
        sd_csr a;
        SDT_OK(gen(spec, 400 + t, &a));
        for (int ph = 0; ph < 2; ph++) {
            sdi_spgemm_config c = forced(SDI_SG_CDENSE, 0, sizes[t][1]);
            c.one_phase_max_u = ph ? 1 << 30 : 0;
            if (t == 2)
                c.threads = 512;
            char label[64];
            snprintf(label, sizeof label, "cdense W%d T%d %s", 1 << sizes[t][1], c.threads,
                     ph ? "1p" : "2p");
            run_case(label, &a, NULL, 0, &c, 1, 1, SDI_SG_CDENSE);
        }
        sd_csr_free(&a);
    }
}

static void test_global(void)
{
    sd_csr a;
    SDT_OK(gen("uniform:rows=3000,cols=3000,deg=20", 501, &a));
    for (int ph = 0; ph < 2; ph++) {
        sdi_spgemm_config c = forced(SDI_SG_GLOBAL, 0, 0);
        c.one_phase_max_u = ph ? 1 << 20 : 0;
        run_case(ph ? "global 1p" : "global 2p", &a, NULL, 0, &c, 2, 1, SDI_SG_GLOBAL);
        c.chunk_rows = 3; /* three rows in flight: the rest in waves */
        run_case(ph ? "global 1p waves of 3" : "global 2p waves of 3", &a, NULL, 0, &c, 1, 1,
                 SDI_SG_GLOBAL);
    }
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ shapes */

/* One row with 10^5 intermediate products: row 0 of A holds columns 0 … 999, rows
 * 0 … 999 hold 100 random columns each. n decides the route: a CTA stripe in shared
 * memory (span ≤ 32768) or a global stripe. */
static sd_status make_huge_row(int32_t n, uint64_t seed, sd_csr *out)
{
    sdi_coo c;
    sd_status s = sdi_coo_init(&c, n, n, 200000);
    sdi_rng r;
    sdi_rng_seed(&r, seed, 1, 0);
    for (int32_t j = 0; j < 1000 && s == SD_OK; j++)
        s = sdi_coo_push(&c, 0, j, 1.0f);
    for (int32_t i = 1; i < n && s == SD_OK; i++) {
        const int len = i < 1000 ? 100 : 3;
        for (int q = 0; q < len && s == SD_OK; q++)
            s = sdi_coo_push(&c, i, (int32_t)sdi_rng_below(&r, (uint64_t)n), 1.0f);
    }
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    if (s == SD_OK)
        sdi_gen_values(out, SDI_VALUES_SMALL_INT, seed);
    return s;
}

static void test_huge_row(void)
{
    sd_csr a, b;
    SDT_OK(make_huge_row(20000, 601, &a));
    SDT_OK(make_huge_row(100000, 602, &b));
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c = preset(f);
        char label[64];
        snprintf(label, sizeof label, "huge row n=2e4 %s", sdi_spgemm_family_name(f));
        run_case(label, &a, NULL, 0, &c, 1, 1, -1);
        snprintf(label, sizeof label, "huge row n=1e5 %s", sdi_spgemm_family_name(f));
        run_case(label, &b, NULL, 0, &c, 1, 1, SDI_SG_GLOBAL);
    }
    /* the one heavy row is split over several CTAs (parts mode of the global stripes) */
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    run_case("huge row split over CTAs", &a, NULL, 0, &c, 2, 1, SDI_SG_GLOBAL);
    /* the same row in one CTA's shared-memory stripe */
    c = forced(SDI_SG_CDENSE, 0, 15);
    run_case("huge row cdense 32768", &a, NULL, 0, &c, 1, 1, SDI_SG_CDENSE);
    sd_csr_free(&a);
    sd_csr_free(&b);
}

/* Empty rows of A, and non-empty rows of A that reach only empty rows of B. */
static void test_empty_rows(void)
{
    sdi_coo co;
    SDT_OK(sdi_coo_init(&co, 3000, 3000, 20000));
    sdi_rng r;
    sdi_rng_seed(&r, 701, 1, 0);
    for (int32_t i = 1000; i < 3000; i++) {
        const int len = 1 + (int)sdi_rng_below(&r, 8);
        for (int q = 0; q < len; q++) {
            /* rows 2000 … 2499 reach only columns < 1000 (empty rows) */
            int32_t col = i >= 2000 && i < 2500 ? (int32_t)sdi_rng_below(&r, 1000)
                                                 : (int32_t)sdi_rng_below(&r, 3000);
            SDT_OK(sdi_coo_push(&co, i, col, 1.0f));
        }
    }
    sd_csr a;
    SDT_OK(sdi_coo_to_csr(&co, &a, NULL));
    sdi_coo_free(&co);
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 702);
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c = preset(f);
        char label[64];
        snprintf(label, sizeof label, "empty rows %s", sdi_spgemm_family_name(f));
        run_case(label, &a, NULL, 0, &c, 2, 1, -1);
    }
    /* all rows empty, 1×1, 0×0 */
    sd_csr z, one, none;
    int64_t zrp[4] = {0, 0, 0, 0};
    z.rows = z.cols = 3;
    z.nnz = 0;
    z.rowptr = zrp;
    z.colind = NULL;
    z.vals = NULL;
    int64_t orp[2] = {0, 1};
    int32_t oci[1] = {0};
    float ov[1] = {-2.0f};
    one.rows = one.cols = 1;
    one.nnz = 1;
    one.rowptr = orp;
    one.colind = oci;
    one.vals = ov;
    int64_t nrp[1] = {0};
    none.rows = none.cols = 0;
    none.nnz = 0;
    none.rowptr = nrp;
    none.colind = NULL;
    none.vals = NULL;
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    run_case("all rows empty", &z, NULL, 0, &c, 1, 1, -1);
    run_case("1x1", &one, NULL, 0, &c, 1, 1, -1);
    run_case("0x0", &none, NULL, 0, &c, 1, 1, -1);
    c = preset(SDI_SPGEMM_HASH);
    run_case("1x1 csr_hash", &one, NULL, 0, &c, 1, 1, -1);
    sd_csr_free(&a);
}

/* Rectangular A·Aᵀ: Aᵀ built on the device; column 0 is full (a row of Aᵀ longer than
 * the shared-memory sort: the merge path), columns 1 … 40 hold 40 % of the rows. */
static void test_aat(void)
{
    sdi_coo co;
    SDT_OK(sdi_coo_init(&co, 6000, 700, 60000));
    sdi_rng r;
    sdi_rng_seed(&r, 801, 1, 0);
    for (int32_t i = 0; i < 6000; i++) {
        SDT_OK(sdi_coo_push(&co, i, 0, 1.0f));
        if (sdi_rng_below(&r, 10) < 4)
            SDT_OK(sdi_coo_push(&co, i, 1 + (int32_t)sdi_rng_below(&r, 40), 1.0f));
        const int len = (int)sdi_rng_below(&r, 6);
        for (int q = 0; q < len; q++)
            SDT_OK(sdi_coo_push(&co, i, 41 + (int32_t)sdi_rng_below(&r, 659), 1.0f));
    }
    sd_csr a;
    SDT_OK(sdi_coo_to_csr(&co, &a, NULL));
    sdi_coo_free(&co);
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 802);
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        for (int gth = 0; gth < 2; gth++) {
            sdi_spgemm_config c = preset(f);
            c.bt_gather = gth;
            char label[64];
            snprintf(label, sizeof label, "A*At 6000x700 %s g%d", sdi_spgemm_family_name(f), gth);
            run_case(label, &a, NULL, 1, &c, 1, 1, -1);
        }
    }
    sd_csr p;
    SDT_OK(gen("powerlaw:rows=5000,cols=1200,deg=6", 803, &p));
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    run_case("A*At powerlaw 5000x1200", &p, NULL, 1, &c, 2, 1, -1);
    /* a wide A (more columns than rows) */
    sd_csr w;
    SDT_OK(gen("uniform:rows=500,cols=20000,deg=30", 804, &w));
    run_case("A*At 500x20000", &w, NULL, 1, &c, 1, 1, -1);
    sd_csr_free(&a);
    sd_csr_free(&p);
    sd_csr_free(&w);
}

/* Cancellation and explicit zeros: C = [1 1]·[1; −1] = [0] and [0 2]·[3; 0] = [0] are
 * entries (value 0), not holes, under every accumulator. */
static void test_cancellation(void)
{
    sd_csr a, b;
    const int ar[] = {0, 0, 1, 1, 2}, ac[] = {0, 1, 0, 1, 2};
    const float av[] = {1, 1, 0, 2, 3};
    const int br[] = {0, 1, 1, 2}, bc[] = {0, 0, 1, 1};
    const float bv[] = {1, -1, 3, 0};
    SDT_OK(from_triplets(3, 3, 5, ar, ac, av, &a));
    SDT_OK(from_triplets(3, 2, 4, br, bc, bv, &b));
    /* C row 0: (1·1 + 1·−1) = 0 at col 0, 1·3 at col 1; row 1: 0·1 + 2·−1 at 0, 2·3 at 1;
     * row 2: 3·0 = 0 at col 1 (explicit zero of B) */
    struct {
        int kind, g, p;
    } kinds[] = {{SDI_SG_TINY, 0, 8},   {SDI_SG_GHASH, 8, 6}, {SDI_SG_GDENSE, 8, 5},
                 {SDI_SG_CHASH, 0, 6},  {SDI_SG_CDENSE, 0, 5}, {SDI_SG_GLOBAL, 0, 0}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        for (int ph = 0; ph < 2; ph++) {
            sdi_spgemm_config c = forced(kinds[k].kind, kinds[k].g, kinds[k].p);
            c.one_phase_max_u = ph ? 100 : 0;
            char label[64];
            snprintf(label, sizeof label, "cancel %s %s", sdi_sg_kind_name(kinds[k].kind),
                     ph ? "1p" : "2p");
            run_case(label, &a, &b, 0, &c, 1, 1, kinds[k].kind);
        }
    }
    /* at scale: values ±1 on a symmetric pattern cancel often */
    sd_csr s;
    SDT_OK(sdi_gen("rmat:scale=11,ef=8,sym=1", 901, &s));
    sdi_rng r;
    sdi_rng_seed(&r, 902, 1, 0);
    for (int64_t p = 0; p < s.nnz; p++)
        s.vals[p] = sdi_rng_below(&r, 2) ? 1.0f : -1.0f;
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c = preset(f);
        char label[64];
        snprintf(label, sizeof label, "cancel rmat %s", sdi_spgemm_family_name(f));
        run_case(label, &s, NULL, 0, &c, 1, 1, -1);
    }
    sd_csr_free(&a);
    sd_csr_free(&b);
    sd_csr_free(&s);
}

/* A product larger than the workspace chunk: a budget of 1 MiB leaves no room for
 * one-phase staging (bins fall back to two phases) and one global stripe at a time. */
static void test_chunks(void)
{
    sd_csr a;
    SDT_OK(make_huge_row(100000, 1001, &a));
    sdi_spgemm_config c = preset(SDI_SPGEMM_HYBRID);
    c.one_phase_max_u = 1 << 30;
    c.ws_budget = 1 << 20;
    c.chunk_rows = 1;
    run_case("budget 1 MiB, 1 stripe", &a, NULL, 0, &c, 2, 1, SDI_SG_GLOBAL);
    sd_csr g;
    SDT_OK(gen("uniform:rows=4000,cols=4000,deg=40", 1002, &g));
    sdi_spgemm_config f = forced(SDI_SG_GLOBAL, 0, 0);
    f.chunk_rows = 7;
    f.ws_budget = 1 << 20;
    run_case("global waves of 7, budget 1 MiB", &g, NULL, 0, &f, 1, 1, SDI_SG_GLOBAL);
    sd_csr_free(&a);
    sd_csr_free(&g);
}

/* ------------------------------------------------------------------ families */

static void test_families(void)
{
    static const char *const specs[] = {
        "stencil2d:n=64",          "banded:n=4096,bw=16",         "powerlaw:rows=4096,deg=8",
        "rmat:scale=12,ef=8",      "uniform:rows=4096,deg=8",     "knn:n=4096,k=8",
        "bimodal:rows=4096",       "blockdiag:n=2048,b=32",       "stencil3d27:n=12"};
    sdi_sg_summary sm;
    for (size_t t = 0; t < sizeof specs / sizeof specs[0]; t++) {
        sd_csr a;
        SDT_OK(gen(specs[t], 1100 + t, &a));
        if (a.rowptr == NULL)
            continue;
        /* the candidates of every family at the small sweep */
        sdi_spgemm_operands *op = NULL;
        SDT_OK(sdi_spgemm_operands_create(g_ctx, &a, NULL, 0, &op));
        if (op == NULL) {
            sd_csr_free(&a);
            continue;
        }
        sdi_sg_summarize(sdi_spgemm_operands_rowinfo(op), &sm);
        sdi_spgemm_config *cands = NULL;
        int n = 0;
        SDT_OK(sdi_spgemm_enumerate(&sm, 0, 1, 32, &cands, &n));
        /* compile them all at once (threads), then run them one by one */
        SDT_OK(sdi_spgemm_precompile(g_ctx, sdi_spgemm_operands_rowinfo(op), cands, n));
        sdi_spgemm_operands_destroy(op);
        for (int q = 0; q < n; q++) {
            char label[64];
            snprintf(label, sizeof label, "%s #%d", specs[t], q);
            run_case(label, &a, NULL, 0, &cands[q], 1, 1, -1);
        }
        sdi_free(cands);
        sd_csr_free(&a);
    }
}

static void test_general_ab_and_repeat(void)
{
    sd_csr a, b;
    SDT_OK(gen("uniform:rows=3000,cols=2000,deg=12", 1201, &a));
    SDT_OK(gen("powerlaw:rows=2000,cols=5000,deg=10", 1202, &b));
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c = preset(f);
        char label[64];
        snprintf(label, sizeof label, "A*B 3000x2000x5000 %s", sdi_spgemm_family_name(f));
        run_case(label, &a, &b, 0, &c, 3, 1, -1);
    }
    sd_csr_free(&a);
    sd_csr_free(&b);
}

/* Real matrices with their file values (the bound of docs/ARCHITECTURE.md "Validation"),
 * A·A or A·Aᵀ by shape. */
static void test_real(void)
{
    static const char *const names[] = {"1138_bus", "bcsstk09", "Si2", "Journals", "lp_e226",
                                        "wiki-Vote", "ca-GrQc", "rajat19", "GD06_Java",
                                        "dwt_992", "lp_ship04l", "Franz6", "cage8"};
    int done = 0;
    for (size_t t = 0; t < sizeof names / sizeof names[0]; t++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/suitesparse/%s.mtx.gz", SD_MATRICES_DIR, names[t]);
        FILE *f = fopen(path, "rb");
        if (f == NULL)
            continue;
        fclose(f);
        sd_csr a;
        if (sd_csr_read(path, &a) != SD_OK) {
            SDT_CHECK(0, "reading %s: %s", path, sd_last_error());
            continue;
        }
        const int aat = a.rows != a.cols;
        for (int fam = 0; fam < SDI_SPGEMM_NFAMILIES; fam++) {
            sdi_spgemm_config c = preset(fam);
            char label[64];
            snprintf(label, sizeof label, "%s %s", names[t], sdi_spgemm_family_name(fam));
            run_case(label, &a, NULL, aat, &c, 1, 0, -1);
        }
        sd_csr_free(&a);
        done++;
    }
    if (done == 0)
        printf("  (no real matrices under %s: skipped)\n", SD_MATRICES_DIR);
}

static int selected(const char *only, const char *name)
{
    if (only == NULL || only[0] == '\0')
        return 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", only);
    for (char *w = strtok(buf, ","); w != NULL; w = strtok(NULL, ","))
        if (strstr(name, w) != NULL)
            return 1;
    return 0;
}

int main(void)
{
    sdt_init("test_spgemm");
    sd_context_options o = {.device = 0, .cache_dir = NULL, .verbose = 0};
    sd_status s = sd_context_create(&o, &g_ctx);
    if (s != SD_OK) {
        char why[512];
        snprintf(why, sizeof why, "no usable GPU (%s)", sd_last_error());
        return sdt_skip(why);
    }
    printf("# device: %s (%d SMs)\n", g_ctx->props.name, g_ctx->props.sm_count);
    /* SDT_ONLY=a,b,...: run only the tests whose names contain one of the words */
    const char *only = getenv("SDT_ONLY");
#define RUN(fn)                                                                            \
    do {                                                                                   \
        if (selected(only, #fn))                                                           \
            SDT_RUN(fn);                                                                   \
    } while (0)
    RUN(test_cancellation);
    RUN(test_tiny_rows);
    RUN(test_group_hash);
    RUN(test_group_dense);
    RUN(test_cta_hash);
    RUN(test_cta_dense);
    RUN(test_global);
    RUN(test_huge_row);
    RUN(test_empty_rows);
    RUN(test_aat);
    RUN(test_chunks);
    RUN(test_general_ab_and_repeat);
    RUN(test_families);
    RUN(test_real);
#undef RUN
    printf("# %d product cases, %d failed\n", g_cases, g_case_failures);
    sd_context_destroy(g_ctx);
    return sdt_finish();
}
