/* tests/cpu/test_formats_spmv.c: the SpMV format builders round-trip to CSR on every
 * generator family and the edge cases (empty, 1×1, nnz = 0, empty rows, one long row,
 * rectangular); invariants of row blocks, merge-path tiles and SELL sorting; padding
 * limits; value refresh; byte counts; allocation failures without leaks; and the SpMV
 * plan families: stats, config text round trip, and every enumerated candidate lowers. */
#include <math.h>

#include "formats/formats.h"
#include "gen/gen.h"
#include "plan/family.h"
#include "sdt.h"

/* ------------------------------------------------------------------ matrices */
static sd_status from_triplets(int32_t rows, int32_t cols, int n, const int *ri, const int *ci,
                               sd_csr *out)
{
    sdi_coo c;
    sd_status s = sdi_coo_init(&c, rows, cols, n);
    for (int k = 0; s == SD_OK && k < n; k++)
        s = sdi_coo_push(&c, ri[k], ci[k], (float)(k % 5) - 2.0f + 0.25f * (float)(k % 3));
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    return s;
}

/* A rows×cols matrix whose row r has len(r) entries at spread columns. */
static sd_status with_rows(int32_t rows, int32_t cols, int64_t (*len)(int64_t), sd_csr *out)
{
    int64_t nnz = 0;
    for (int64_t r = 0; r < rows; r++)
        nnz += len(r);
    sd_status s = sdi_csr_alloc(out, rows, cols, nnz);
    if (s != SD_OK)
        return s;
    int64_t k = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t n = len(r);
        for (int64_t j = 0; j < n; j++) {
            out->colind[k] = (int32_t)(n >= cols ? j : (j * (cols / n) + r) % cols);
            out->vals[k] = (float)((r + j) % 7) - 3.0f;
            k++;
        }
        out->rowptr[r + 1] = k;
        /* spread columns may collide after the modulo: sort and dedupe the row */
        int64_t b = out->rowptr[r];
        for (int64_t i = b + 1; i < k; i++)
            for (int64_t q = i; q > b && out->colind[q - 1] > out->colind[q]; q--) {
                int32_t t = out->colind[q];
                out->colind[q] = out->colind[q - 1];
                out->colind[q - 1] = t;
            }
    }
    /* columns are distinct by construction when n < cols (j·step + r distinct mod cols) */
    return SD_OK;
}

static int64_t len_empty_mix(int64_t r) { return r % 3 == 0 ? 0 : r % 7 + 1; }
static int64_t len_long_row(int64_t r) { return r == 5 ? 5000 : r % 4; }
static int64_t len_zero(int64_t r) { (void)r; return 0; }
static int64_t len_one_dense(int64_t r) { (void)r; return 100000; }

typedef struct {
    const char *name;
    sd_csr a;
} test_matrix;

#define MAXM 40
static test_matrix g_m[MAXM];
static int g_nm;

static void add_gen(const char *spec)
{
    if (g_nm >= MAXM)
        return;
    sd_csr a;
    sd_status s = sdi_gen(spec, sdt_seed, &a);
    SDT_CHECK(s == SD_OK, "generator %s: %s", spec, sd_last_error());
    if (s != SD_OK)
        return;
    g_m[g_nm].name = spec;
    g_m[g_nm].a = a;
    g_nm++;
}

static void add_mat(const char *name, sd_status s, sd_csr *a)
{
    SDT_CHECK(s == SD_OK, "matrix %s: %s", name, sd_last_error());
    if (s != SD_OK || g_nm >= MAXM)
        return;
    g_m[g_nm].name = name;
    g_m[g_nm].a = *a;
    g_nm++;
}

static void build_matrices(void)
{
    static const char *const specs[] = {
        "stencil2d:n=23",        "stencil3d7:n=9",        "stencil3d27:n=6",
        "banded:n=300,bw=7",     "blockdiag:n=200,b=16",  "uniform:rows=700,cols=900,deg=9",
        "powerlaw:rows=900,deg=8", "rmat:scale=9,ef=8",   "knn:n=600,k=6",
        "bimodal:rows=800,short=3,long=300,frac=0.05",    "uniform:rows=50,cols=3000,deg=60",
        "uniform:rows=3000,cols=40,deg=3",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        add_gen(specs[i]);
    sd_csr a;
    int r1[] = {0}, c1[] = {0};
    add_mat("1x1", from_triplets(1, 1, 1, r1, c1, &a), &a);
    add_mat("0x0", from_triplets(0, 0, 0, NULL, NULL, &a), &a);
    add_mat("5x0", from_triplets(5, 0, 0, NULL, NULL, &a), &a);
    add_mat("0x7", from_triplets(0, 7, 0, NULL, NULL, &a), &a);
    add_mat("nnz0 40x30", with_rows(40, 30, len_zero, &a), &a);
    add_mat("empty-row mix", with_rows(333, 50, len_empty_mix, &a), &a);
    add_mat("one long row", with_rows(97, 6000, len_long_row, &a), &a);
    add_mat("1x100000 dense", with_rows(1, 100000, len_one_dense, &a), &a);
    int rr[] = {3, 3, 0, 9, 9, 9}, cc[] = {17, 1, 4, 0, 18, 2};
    add_mat("10x19 sparse", from_triplets(10, 19, 6, rr, cc, &a), &a);
}

static void free_matrices(void)
{
    for (int i = 0; i < g_nm; i++)
        sd_csr_free(&g_m[i].a);
    g_nm = 0;
}

/* ------------------------------------------------------------------ round trips */
static int csr_equal(const sd_csr *a, const sd_csr *b, char *why, size_t cap)
{
    if (a->rows != b->rows || a->cols != b->cols || a->nnz != b->nnz) {
        snprintf(why, cap, "sizes %dx%d/%lld vs %dx%d/%lld", a->rows, a->cols,
                 (long long)a->nnz, b->rows, b->cols, (long long)b->nnz);
        return 0;
    }
    for (int64_t i = 0; i <= a->rows; i++)
        if (a->rowptr[i] != b->rowptr[i]) {
            snprintf(why, cap, "rowptr[%lld] %lld vs %lld", (long long)i,
                     (long long)a->rowptr[i], (long long)b->rowptr[i]);
            return 0;
        }
    for (int64_t k = 0; k < a->nnz; k++)
        if (a->colind[k] != b->colind[k] || a->vals[k] != b->vals[k]) {
            snprintf(why, cap, "entry %lld: (%d, %g) vs (%d, %g)", (long long)k, a->colind[k],
                     a->vals[k], b->colind[k], b->vals[k]);
            return 0;
        }
    return 1;
}

typedef enum { CSR64, CSR32, CSRC0, CSRC5, ROWB, MERGE1, MERGE3, COO, ELL, SELL4, SELL32S,
               SELL128S, BSR2, BSR4, BSR8, BSR16, TILES_A, TILES_B, DIA, NKINDS } kind_id;
static const char *const kind_label[NKINDS] = {
    "csr64", "csr32", "csr-colc0", "csr-colc5", "rowblocks", "merge-tpc1", "merge-tpc3", "coo",
    "ell", "sell4", "sell32-s256", "sell128-s1024", "bsr2", "bsr4", "bsr8", "bsr16",
    "tiles(32,4)", "tiles(160,12)", "dia"};

static sd_status build_kind(int k, const sd_csr *a, sdi_devfmt *f)
{
    sdi_csr_opts o = {0, 0, 0};
    switch (k) {
    case CSR64:
        return sdi_fmt_csr(a, &o, f);
    case CSR32:
        o.rp32 = 1;
        return sdi_fmt_csr(a, &o, f);
    case CSRC0:
        o.colc = 1;
        return sdi_fmt_csr(a, &o, f);
    case CSRC5:
        o.rp32 = 1;
        o.colc = 1;
        o.colc_shift = 5;
        return sdi_fmt_csr(a, &o, f);
    case ROWB:
        o.rp32 = 1;
        return sdi_fmt_rowblocks(a, &o, 64, 16, 64, f);
    case MERGE1:
        return sdi_fmt_merge(a, &o, 37, 1, f);
    case MERGE3:
        return sdi_fmt_merge(a, &o, 64, 3, f);
    case COO:
        return sdi_fmt_coo(a, f);
    case ELL:
        return sdi_fmt_ell(a, 0, f);
    case SELL4:
        return sdi_fmt_sell(a, 4, 1, 0, f);
    case SELL32S:
        return sdi_fmt_sell(a, 32, 256, 0, f);
    case SELL128S:
        return sdi_fmt_sell(a, 128, 1000, 0, f);
    case BSR2:
    case BSR4:
    case BSR8:
    case BSR16:
        return sdi_fmt_bsr(a, 2 << (k - BSR2), 64, f);
    case TILES_A:
        return sdi_fmt_tiles16(a, 32, 4, 64, f);
    case TILES_B:
        return sdi_fmt_tiles16(a, 160, 12, 64, f);
    default:
        return sdi_fmt_dia(a, 0, 64, f);
    }
}

/* Padded kinds may refuse a matrix with SD_ERR_UNSUPPORTED (padding or diagonal limits). */
static int may_refuse(int k)
{
    return k == ELL || k == DIA || (k >= BSR2 && k <= BSR16) || k == CSRC0 || k == CSRC5 ||
           k == SELL4 || k == SELL32S || k == SELL128S;
}

static void test_round_trips(void)
{
    int built[NKINDS] = {0};
    for (int m = 0; m < g_nm; m++) {
        const sd_csr *a = &g_m[m].a;
        for (int k = 0; k < NKINDS; k++) {
            sdi_devfmt f;
            sd_status s = build_kind(k, a, &f);
            if (s == SD_ERR_UNSUPPORTED && may_refuse(k)) {
                SDT_CHECK(strlen(sd_last_error()) > 0, "%s on %s: refusal without a message",
                          kind_label[k], g_m[m].name);
                continue;
            }
            SDT_CHECK(s == SD_OK, "%s on %s: %s", kind_label[k], g_m[m].name, sd_last_error());
            if (s != SD_OK)
                continue;
            built[k]++;
            sd_csr b;
            s = sdi_format_to_csr(&f, &b);
            SDT_CHECK(s == SD_OK, "%s on %s: to csr: %s", kind_label[k], g_m[m].name,
                      sd_last_error());
            char why[160];
            if (s == SD_OK)
                SDT_CHECK(csr_equal(a, &b, why, sizeof why), "%s on %s: round trip: %s",
                          kind_label[k], g_m[m].name, why);
            /* Device-ready arrays: counts cover the host data; workspaces have none. */
            for (int i = 0; i < f.n_arrays; i++) {
                const sdi_fmt_array *x = &f.arr[i];
                SDT_CHECK(x->host_count <= x->count && x->elem_size > 0,
                          "%s on %s: array %s counts %lld/%lld", kind_label[k], g_m[m].name,
                          x->name, (long long)x->host_count, (long long)x->count);
                SDT_CHECK(x->role != SDI_ROLE_WORKSPACE || x->data == NULL,
                          "%s: workspace %s has host data", kind_label[k], x->name);
            }
            SDT_CHECK(f.slots >= f.nnz, "%s on %s: %lld slots < %lld nnz", kind_label[k],
                      g_m[m].name, (long long)f.slots, (long long)f.nnz);
            sd_csr_free(&b);
            sdi_format_free(&f);
        }
    }
    for (int k = 0; k < NKINDS; k++)
        SDT_CHECK(built[k] >= 5, "%s built on only %d matrices", kind_label[k], built[k]);
}

/* ------------------------------------------------------------------ invariants */
static void test_rowblocks_invariants(void)
{
    for (int m = 0; m < g_nm; m++) {
        const sd_csr *a = &g_m[m].a;
        const int cap = 100, maxr = 24, piece = 128;
        sdi_devfmt f;
        sdi_csr_opts o = {0, 0, 0};
        SDT_OK(sdi_fmt_rowblocks(a, &o, cap, maxr, piece, &f));
        const int32_t *it = sdi_format_array(&f, "items")->data;
        const int32_t *lrb = sdi_format_array(&f, "lrbase")->data;
        int64_t next = 0, lid = 0;
        for (int64_t i = 0; i < f.rb_items; i++) {
            const int32_t *q = it + 4 * i;
            if (q[1] > 0) {
                SDT_CHECK(q[0] == next, "%s: item %lld starts at row %d, expected %lld",
                          g_m[m].name, (long long)i, q[0], (long long)next);
                int64_t nz = a->rowptr[q[0] + q[1]] - a->rowptr[q[0]];
                SDT_CHECK(nz <= cap && q[1] <= maxr, "%s: stream item %lld: %lld nnz, %d rows",
                          g_m[m].name, (long long)i, (long long)nz, q[1]);
                next = q[0] + q[1];
            } else {
                int64_t len = a->rowptr[q[0] + 1] - a->rowptr[q[0]];
                SDT_CHECK(len > cap, "%s: long row %d has only %lld nnz", g_m[m].name, q[0],
                          (long long)len);
                SDT_CHECK(q[3] == lid || q[3] == lid - 1, "%s: long-row id %d", g_m[m].name, q[3]);
                if (q[2] == 0) {
                    SDT_CHECK(q[0] == next && q[3] == lid, "%s: long row %d out of order",
                              g_m[m].name, q[0]);
                    int64_t np = (len + piece - 1) / piece;
                    SDT_CHECK(lrb[lid + 1] - lrb[lid] == np, "%s: long row %d: %d pieces, want %lld",
                              g_m[m].name, q[0], lrb[lid + 1] - lrb[lid], (long long)np);
                    lid++;
                    next = q[0] + 1;
                }
            }
        }
        SDT_CHECK(next == a->rows, "%s: items cover %lld of %d rows", g_m[m].name,
                  (long long)next, a->rows);
        SDT_CHECK(lid == f.rb_long, "%s: %lld long rows, format says %lld", g_m[m].name,
                  (long long)lid, (long long)f.rb_long);
        sdi_format_free(&f);
    }
}

static void test_merge_invariants(void)
{
    for (int m = 0; m < g_nm; m++) {
        const sd_csr *a = &g_m[m].a;
        const int tile = 50;
        sdi_devfmt f;
        sdi_csr_opts o = {1, 0, 0};
        SDT_OK(sdi_fmt_merge(a, &o, tile, 2, &f));
        const int32_t *tr = sdi_format_array(&f, "tilerow")->data;
        const int64_t *tz = sdi_format_array(&f, "tilenz")->data;
        /* Walk the merge sequentially and compare every tile boundary. */
        int64_t i = 0, j = 0, d = 0;
        for (int64_t t = 0; t <= f.mp_tiles; t++) {
            int64_t target = t * tile < a->rows + a->nnz ? t * tile : a->rows + a->nnz;
            while (d < target) {
                if (i < a->rows && a->rowptr[i + 1] <= j)
                    i++;
                else
                    j++;
                d++;
            }
            SDT_CHECK(tr[t] == i && tz[t] == j, "%s: tile %lld starts at (%d, %lld), walk says "
                      "(%lld, %lld)", g_m[m].name, (long long)t, tr[t], (long long)tz[t],
                      (long long)i, (long long)j);
        }
        SDT_CHECK(tr[f.mp_tiles] == a->rows && tz[f.mp_tiles] == a->nnz, "%s: last tile end",
                  g_m[m].name);
        SDT_CHECK(f.mp_ctas == (f.mp_tiles + 1) / 2, "%s: %lld CTAs for %lld tiles", g_m[m].name,
                  (long long)f.mp_ctas, (long long)f.mp_tiles);
        sdi_format_free(&f);
    }
}

static void test_sell_sorting(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=1000,deg=6", 7, &a));
    sdi_devfmt f;
    SDT_OK(sdi_fmt_sell(&a, 16, 100, 0, &f)); /* σ rounds up to 112 */
    SDT_CHECK(f.sell_sigma == 112 && f.sell_permuted, "sigma %d", f.sell_sigma);
    const int32_t *perm = sdi_format_array(&f, "perm")->data;
    char *seen = calloc((size_t)a.rows, 1);
    for (int64_t i = 0; i < a.rows; i++) {
        SDT_CHECK(perm[i] >= 0 && perm[i] < a.rows && !seen[perm[i]], "perm[%lld] = %d",
                  (long long)i, perm[i]);
        if (perm[i] >= 0 && perm[i] < a.rows)
            seen[perm[i]] = 1;
        SDT_CHECK(perm[i] / 112 == i / 112, "row %d left its window", perm[i]);
        if (i % 112 != 0) {
            int64_t l0 = a.rowptr[perm[i - 1] + 1] - a.rowptr[perm[i - 1]];
            int64_t l1 = a.rowptr[perm[i] + 1] - a.rowptr[perm[i]];
            SDT_CHECK(l0 >= l1, "window not sorted at %lld", (long long)i);
        }
    }
    free(seen);
    SDT_CHECK(sdi_format_find(&f, "perm") >= 0 &&
                  sdi_format_array(&f, "perm")->role == SDI_ROLE_META,
              "perm uploaded when sorted");
    /* Sorting reduces padding on skewed rows. */
    sdi_devfmt g;
    SDT_OK(sdi_fmt_sell(&a, 16, 1, 0, &g));
    SDT_CHECK(f.slots <= g.slots, "sorted %lld slots > unsorted %lld", (long long)f.slots,
              (long long)g.slots);
    SDT_CHECK(sdi_format_array(&g, "perm")->role == SDI_ROLE_HOST, "no perm upload unsorted");
    sdi_format_free(&f);
    sdi_format_free(&g);
    sd_csr_free(&a);
}

static void test_limits(void)
{
    /* One row of 5000 among 1000 short ones, spread over 200000 columns: ELL would store
     * 5·10^6 slots. */
    sd_csr a;
    SDT_OK(with_rows(1000, 200000, len_long_row, &a));
    sdi_devfmt f;
    SDT_STATUS(sdi_fmt_ell(&a, 0, &f), SD_ERR_UNSUPPORTED);
    SDT_CHECK(strstr(sd_last_error(), "ell") && strstr(sd_last_error(), "fill"), "message '%s'",
              sd_last_error());
    SDT_CHECK(f.n_arrays == 0 && f.kind == 0, "output zeroed after failure");
    SDT_STATUS(sdi_fmt_dia(&a, 0, 16, &f), SD_ERR_UNSUPPORTED);
    SDT_CHECK(strstr(sd_last_error(), "diagonals"), "message '%s'", sd_last_error());
    /* Columns more than 65535 apart in one row: no 16-bit deltas. */
    SDT_CHECK(!sdi_fmt_colc_fits(&a, 0), "one row spans 200000 columns");
    sdi_csr_opts o = {0, 1, 0};
    SDT_STATUS(sdi_fmt_csr(&a, &o, &f), SD_ERR_UNSUPPORTED);
    SDT_CHECK(strstr(sd_last_error(), "16-bit"), "message '%s'", sd_last_error());
    SDT_STATUS(sdi_fmt_bsr(&a, 3, 0, &f), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_fmt_sell(&a, 24, 1, 0, &f), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_fmt_tiles16(&a, 10, 10, 0, &f), SD_ERR_INVALID_ARG);
    sd_csr_free(&a);
}

static void test_bytes_and_refresh(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("uniform:rows=500,cols=600,deg=7", 3, &a));
    sdi_devfmt f;
    sdi_csr_opts o = {0, 0, 0};
    SDT_OK(sdi_fmt_csr(&a, &o, &f));
    int64_t pad = (a.nnz + 7) / 8 * 8;
    SDT_CHECK(sdi_format_bytes(&f, SDI_ROLE_VALUE) == 4 * pad, "value bytes %lld",
              (long long)sdi_format_bytes(&f, SDI_ROLE_VALUE));
    SDT_CHECK(sdi_format_bytes(&f, SDI_ROLE_META) == 8 * (a.rows + 1) + 4 * pad, "meta bytes");
    sdi_format_free(&f);
    o.rp32 = 1;
    o.colc = 1;
    SDT_OK(sdi_fmt_csr(&a, &o, &f));
    SDT_CHECK(sdi_format_bytes(&f, SDI_ROLE_META) == 4 * (a.rows + 1) + 2 * pad + 4 * a.rows,
              "compressed meta bytes %lld", (long long)sdi_format_bytes(&f, SDI_ROLE_META));
    sdi_format_free(&f);
    /* Value refresh on padded kinds: new values, same pattern. */
    for (int k = 0; k < NKINDS; k++) {
        sd_csr b;
        SDT_OK(sdi_csr_copy(&a, &b));
        if (build_kind(k, &b, &f) != SD_OK) {
            sdi_error_clear();
            sd_csr_free(&b);
            continue;
        }
        for (int64_t i = 0; i < b.nnz; i++)
            b.vals[i] = (float)(i % 11) - 5.0f;
        SDT_OK(sdi_format_refresh_values(&f, &b));
        sd_csr c;
        SDT_OK(sdi_format_to_csr(&f, &c));
        char why[160];
        SDT_CHECK(csr_equal(&b, &c, why, sizeof why), "%s refresh: %s", kind_label[k], why);
        sd_csr_free(&c);
        sdi_format_free(&f);
        sd_csr_free(&b);
    }
    sd_csr_free(&a);
}

static void test_alloc_failures(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=300,deg=10", 5, &a));
    for (int k = 0; k < NKINDS; k++) {
        long long live0 = sdi_alloc_live_bytes();
        for (long n = 0; n < 200; n++) {
            sdi_alloc_fail_after(n);
            sdi_devfmt f;
            sd_status s = build_kind(k, &a, &f);
            sdi_alloc_fail_after(-1);
            if (s == SD_OK) {
                sdi_format_free(&f);
                break;
            }
            SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY || s == SD_ERR_UNSUPPORTED,
                      "%s: failure %ld gave %s", kind_label[k], n, sd_status_string(s));
            SDT_CHECK(f.n_arrays == 0, "%s: output not zeroed after failure %ld", kind_label[k], n);
            SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s: leak after failure %ld: %lld bytes",
                      kind_label[k], n, sdi_alloc_live_bytes() - live0);
            if (s == SD_ERR_UNSUPPORTED)
                break;
        }
    }
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ plan families */
/* The block-row merge against a brute force (every entry's block column, sorted, runs
 * counted): distinct block columns in order, each one's entry count (interleaved, stride 2,
 * as the tiles builder writes its descriptors) and the entries of blocks holding ≥ dense_min,
 * for b = 2 … 16 on a power-law matrix (long and empty rows, rows not a multiple of b) and a
 * banded one (dense blocks). */
static void test_block_scan(void)
{
    const char *specs[] = {"powerlaw:rows=997,cols=1500,deg=9,alpha=1.8,max=700", "banded:n=600,bw=20"};
    for (int m = 0; m < 2; m++) {
        sd_csr a;
        SDT_OK(sdi_gen(specs[m], 11, &a));
        const size_t cap = (size_t)(a.nnz > 0 ? a.nnz : 1);
        int32_t *want = malloc(cap * sizeof *want), *runs = malloc(cap * sizeof *runs);
        int32_t *got = malloc(2 * cap * sizeof *got);
        SDT_CHECK(want && runs && got, "buffers");
        int bad = 0;
        for (int b = 2; b <= 16 && want && runs && got; b *= 2)
            for (int64_t br = 0; br * b < a.rows && !bad; br++) {
                int64_t n = 0;
                for (int64_t r = br * b; r < (br + 1) * b && r < a.rows; r++)
                    for (int64_t k = a.rowptr[r]; k < a.rowptr[r + 1]; k++)
                        want[n++] = a.colind[k] / b;
                for (int64_t i = 1; i < n; i++) /* insertion sort: a few hundred entries */
                    for (int64_t j = i; j > 0 && want[j - 1] > want[j]; j--) {
                        int32_t t = want[j];
                        want[j] = want[j - 1];
                        want[j - 1] = t;
                    }
                int64_t distinct = 0, dense_want = 0;
                for (int64_t i = 0; i < n;) {
                    int64_t e = i;
                    while (e < n && want[e] == want[i])
                        e++;
                    runs[distinct] = (int32_t)(e - i);
                    want[distinct++] = want[i];
                    if (e - i >= 8)
                        dense_want += e - i;
                    i = e;
                }
                int64_t dense = 0;
                const int64_t c = sdi_fmt_block_scan(&a, b, br, got, got + 1, 2, 8, &dense);
                bad = c != distinct || dense != dense_want || sdi_fmt_block_cols(&a, b, br, NULL) != distinct;
                for (int64_t k = 0; k < c && !bad; k++)
                    bad = got[2 * k] != want[k] || got[2 * k + 1] != runs[k];
                SDT_CHECK(!bad, "%s b=%d block row %lld: %lld block columns (want %lld), dense %lld (want %lld)",
                          specs[m], b, (long long)br, (long long)c, (long long)distinct, (long long)dense,
                          (long long)dense_want);
            }
        free(want);
        free(runs);
        free(got);
        sd_csr_free(&a);
    }
}

static void test_stats(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=30", 1, &a));
    sdi_spmv_stats st;
    SDT_OK(sdi_spmv_stats_compute(&a, &st));
    SDT_CHECK(st.rows == 900 && st.nnz == a.nnz && st.row_max == 5, "sizes");
    SDT_CHECK(st.ndiag == 5, "stencil2d has 5 diagonals, stats say %d", st.ndiag);
    SDT_CHECK(st.colc_ok0 && st.colc_ok5, "narrow band fits 16-bit deltas");
    SDT_CHECK(st.log2_hist[3] == 28 * 28 + 4 * 28, "rows of length 4 and 5 in bucket 3: %lld",
              (long long)st.log2_hist[3]);
    SDT_CHECK(st.rho_bsr[1] >= 1.0 && st.rho_bsr[4] >= st.rho_bsr[1], "rho_bsr monotone");
    sd_csr_free(&a);
}

static sdi_gpu_props g_h200;

static const sdi_family *spmv_family(int id)
{
    return sdi_family_at(sdi_family_of(SD_OP_SPMV, id));
}

/* Every SpMV family's sweep at level, one family after the other (the search's calls). */
static void sweep_all(const sdi_task *t, int level, sdi_plan_list *l)
{
    for (int f = 0; f < SDI_SPMV_NFAMILIES; f++)
        SDT_OK(spmv_family(f)->sweep(t, level, l));
}

static void test_config_text(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=2000,deg=12", 2, &a));
    sdi_spmv_stats st;
    SDT_OK(sdi_spmv_stats_compute(&a, &st));
    const sdi_task t = {.op = SD_OP_SPMV, .k = 1, .a = &a, .gpu = &g_h200, .spmv = &st};
    sdi_plan_list v = {0};
    sweep_all(&t, 2, &v);
    SDT_CHECK(v.n >= 20, "only %d candidates", v.n);
    int seen[SDI_SPMV_NFAMILIES] = {0};
    for (int i = 0; i < v.n; i++) {
        const sdi_spmv_config *c = &v.v[i].p.spmv;
        char line[256];
        sdi_spmv_config_describe(c, line, sizeof line);
        sdi_spmv_config back;
        SDT_OK(sdi_spmv_config_parse(line, &back));
        SDT_CHECK(memcmp(&back, c, sizeof back) == 0, "'%s' does not parse back", line);
        SDT_CHECK(v.v[i].op == SD_OP_SPMV && v.v[i].k == 1 &&
                      sdi_family_at(v.v[i].family) == spmv_family(c->family),
                  "'%s': plan of op %d family %d", line, v.v[i].op, v.v[i].family);
        SDT_OK(spmv_family(c->family)->check(&t, &v.v[i]));
        seen[c->family]++;
    }
    for (int f = 0; f < SDI_SPMV_NFAMILIES; f++)
        if (f != SDI_SPMV_DIA && f != SDI_SPMV_TINY && f != SDI_SPMV_ELL)
            SDT_CHECK(seen[f] > 0, "no %s candidate", sdi_spmv_family_name(f));
    sdi_plan_list_free(&v);
    sdi_spmv_config c;
    SDT_STATUS(sdi_spmv_config_parse("nosuch t=3", &c), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_spmv_config_parse("csr_vec t=x", &c), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_spmv_config_parse("csr_vec zz=1", &c), SD_ERR_INVALID_ARG);
    /* Illegal θ_H is refused with the field named. */
    sdi_plan p;
    SDT_OK(spmv_family(SDI_SPMV_MERGE)->defaults(&t, &p));
    p.p.spmv.ipt = 40;
    SDT_STATUS(spmv_family(SDI_SPMV_MERGE)->check(&t, &p), SD_ERR_UNSUPPORTED);
    SDT_CHECK(strstr(sd_last_error(), "shared memory"), "message '%s'", sd_last_error());
    SDT_OK(spmv_family(SDI_SPMV_CSR_VEC)->defaults(&t, &p));
    p.p.spmv.vw = 3;
    SDT_STATUS(spmv_family(SDI_SPMV_CSR_VEC)->check(&t, &p), SD_ERR_UNSUPPORTED);
    /* A plan of another family is no plan of this one. */
    SDT_STATUS(spmv_family(SDI_SPMV_MERGE)->check(&t, &p), SD_ERR_INVALID_ARG);
    sd_csr_free(&a);
}

/* Every candidate of every test matrix lowers; launches cover the rows. */
static void test_lowering(void)
{
    int lowered = 0;
    for (int m = 0; m < g_nm; m++) {
        const sd_csr *a = &g_m[m].a;
        sdi_spmv_stats st;
        SDT_OK(sdi_spmv_stats_compute(a, &st));
        const sdi_task t = {.op = SD_OP_SPMV, .k = 1, .a = a, .gpu = &g_h200, .spmv = &st};
        sdi_plan_list v = {0};
        sweep_all(&t, 1, &v);
        SDT_CHECK(v.n > 0, "%s: no candidates", g_m[m].name);
        for (int i = 0; i < v.n; i++) {
            const sdi_spmv_config *c = &v.v[i].p.spmv;
            char line[256];
            sdi_spmv_config_describe(c, line, sizeof line);
            sdi_lowered p;
            sd_status s = spmv_family(c->family)->lower(&t, &v.v[i], &p);
            if (s == SD_ERR_UNSUPPORTED) /* padding limits known only after building */
                continue;
            SDT_CHECK(s == SD_OK, "%s: %s: %s", g_m[m].name, line, sd_last_error());
            if (s != SD_OK)
                continue;
            lowered++;
            SDT_CHECK((a->rows == 0) == (p.nlaunches == 0), "%s: %s: %d launches for %d rows",
                      g_m[m].name, line, p.nlaunches, a->rows);
            for (int l = 0; l < p.nlaunches; l++) {
                const sdi_low_launch *ln = &p.launch[l];
                SDT_CHECK(ln->grid[0] >= 1 && ln->block[0] == (unsigned)c->block &&
                              ln->kernel >= 0 && ln->kernel < p.nkernels,
                          "%s: %s: launch %d grid %u block %u", g_m[m].name, line, l,
                          ln->grid[0], ln->block[0]);
                for (int k = 0; k < ln->nargs; k++)
                    if (ln->args[k].kind == SDI_LOW_ARG_ARRAY)
                        SDT_CHECK(ln->args[k].index >= 0 && ln->args[k].index < p.narrays &&
                                      sdi_format_find(&p.fmt, p.arr[ln->args[k].index].name) >= 0,
                                  "%s: %s: argument %d names no array of the format",
                                  g_m[m].name, line, k);
            }
            SDT_CHECK(p.bytes_value >= 4 * a->nnz, "%s: %s: value bytes %lld", g_m[m].name, line,
                      (long long)p.bytes_value);
            sdi_json j;
            sdi_json_init(&j, 0);
            sdi_lowered_json(&p, &j);
            SDT_OK(sdi_json_finish(&j));
            sdi_json_free(&j);
            sdi_lowered_free(&p);
        }
        sdi_plan_list_free(&v);
    }
    SDT_CHECK(lowered > 100, "only %d plans lowered", lowered);
}

int main(void)
{
    sdt_init("test_formats_spmv");
    if (sdi_gpu_profile("h200", &g_h200) != SD_OK)
        return 1;
    build_matrices();
    SDT_RUN(test_round_trips);
    SDT_RUN(test_rowblocks_invariants);
    SDT_RUN(test_merge_invariants);
    SDT_RUN(test_sell_sorting);
    SDT_RUN(test_limits);
    SDT_RUN(test_bytes_and_refresh);
    SDT_RUN(test_alloc_failures);
    SDT_RUN(test_block_scan);
    SDT_RUN(test_stats);
    SDT_RUN(test_config_text);
    SDT_RUN(test_lowering);
    free_matrices();
    return sdt_finish();
}
