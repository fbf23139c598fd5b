/* tests/cpu/test_cusparse_layout.c: cuSPARSE's Sliced-ELL and Blocked-ELL layouts as the
 * baseline and the cuSPARSE executor build them (src/formats/cs_layout.c, over the formats'
 * SELL and blocked-ELL builders): every entry
 * where the layout says, at its recorded slot, padding where it should be, block columns
 * ascending, the widths the brute force finds; empty rows, a rectangular matrix, an empty
 * one, and the argument errors. */
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "formats/cs_layout.h"
#include "sdt.h"

static const char *const specs[] = {
    "powerlaw:rows=1000,cols=1000,deg=6,alpha=1.8,max=300", /* skewed, empty rows */
    "uniform:rows=333,cols=2000,deg=5",                    /* rectangular, rows % 32 != 0 */
    "banded:n=500,bw=7",                                   /* dense blocks */
};

static void check_sell(const char *what, const sd_csr *a, int slice)
{
    sdi_cs_sell s;
    SDT_OK(sdi_cs_sell_build(a, slice, true, &s));
    SDT_CHECK(s.slots == sdi_cs_sell_slots(a, slice), "%s slice %d: slots", what, slice);
    SDT_CHECK(s.off[0] == 0 && s.off[s.nslices] == s.slots, "%s slice %d: offsets span the slots", what, slice);
    int bad = 0;
    int64_t filled = 0;
    for (int64_t sl = 0; sl < s.nslices && !bad; sl++) {
        const int64_t w = (s.off[sl + 1] - s.off[sl]) / slice;
        for (int64_t r = sl * slice; r < (sl + 1) * slice && !bad; r++)
            for (int64_t j = 0; j < w && !bad; j++) {
                const int64_t at = s.off[sl] + j * slice + (r - sl * slice);
                const int64_t len = r < a->rows ? a->rowptr[r + 1] - a->rowptr[r] : 0;
                if (j < len) {
                    const int64_t e = a->rowptr[r] + j;
                    bad = s.col[at] != a->colind[e] || s.val[at] != a->vals[e] || s.slot[e] != at;
                    filled++;
                } else {
                    bad = s.col[at] != -1 || s.val[at] != 0.0f;
                }
                SDT_CHECK(!bad, "%s slice %d: row %lld position %lld", what, slice, (long long)r, (long long)j);
            }
    }
    SDT_CHECK(filled == a->nnz, "%s slice %d: %lld of %lld entries placed", what, slice, (long long)filled,
              (long long)a->nnz);
    sdi_cs_sell_free(&s);
}

static void check_bell(const char *what, const sd_csr *a, int bs)
{
    int64_t maxb = -1;
    SDT_OK(sdi_cs_bell_width(a, bs, &maxb));
    /* Brute force: distinct block columns of each block row. */
    const int64_t nbr = ((int64_t)a->rows + bs - 1) / bs, nbc = ((int64_t)a->cols + bs - 1) / bs;
    char *seen = calloc((size_t)(nbc > 0 ? nbc : 1), 1);
    int64_t want = 0;
    for (int64_t br = 0; br < nbr && seen; br++) {
        memset(seen, 0, (size_t)(nbc > 0 ? nbc : 1));
        int64_t n = 0;
        for (int64_t r = br * bs; r < (br + 1) * bs && r < a->rows; r++)
            for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1]; e++)
                if (!seen[a->colind[e] / bs]) {
                    seen[a->colind[e] / bs] = 1;
                    n++;
                }
        want = n > want ? n : want;
    }
    free(seen);
    SDT_CHECK(maxb == want, "%s bs %d: width %lld, want %lld", what, bs, (long long)maxb, (long long)want);
    if (maxb < 1)
        return;
    sdi_cs_bell b;
    SDT_OK(sdi_cs_bell_build(a, bs, maxb, true, &b));
    SDT_CHECK(b.rows_pad == nbr * bs && b.cols_pad == nbc * bs && b.ell_cols == maxb * bs &&
                  b.slots == b.rows_pad * b.ell_cols,
              "%s bs %d: dimensions", what, bs);
    int bad = 0;
    for (int64_t br = 0; br < nbr && !bad; br++)
        for (int64_t j = 1; j < maxb && !bad; j++) {
            const int32_t p = b.bcol[br * maxb + j - 1], q = b.bcol[br * maxb + j];
            bad = !(q == -1 || (p >= 0 && q > p));
            SDT_CHECK(!bad, "%s bs %d: block row %lld columns %d then %d", what, bs, (long long)br, p, q);
        }
    int64_t nonzero = 0;
    for (int64_t i = 0; i < b.slots; i++)
        nonzero += b.val[i] != 0.0f;
    int64_t explicit_zeros = 0;
    for (int32_t r = 0; r < a->rows && !bad; r++)
        for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1] && !bad; e++) {
            const int32_t c = a->colind[e];
            const int64_t at = b.slot[e], j = (at - (int64_t)r * b.ell_cols) / bs;
            explicit_zeros += a->vals[e] == 0.0f;
            bad = at < (int64_t)r * b.ell_cols || at >= (int64_t)(r + 1) * b.ell_cols || b.val[at] != a->vals[e] ||
                  b.bcol[(r / bs) * maxb + j] != c / bs || (at - (int64_t)r * b.ell_cols) % bs != c % bs;
            SDT_CHECK(!bad, "%s bs %d: entry (%d, %d) at slot %lld", what, bs, r, c, (long long)at);
        }
    SDT_CHECK(nonzero == a->nnz - explicit_zeros, "%s bs %d: %lld nonzero slots for %lld entries", what, bs,
              (long long)nonzero, (long long)a->nnz);
    /* Fewer slots than a block row needs is an argument error, with nothing left allocated. */
    sdi_cs_bell small;
    if (maxb > 1) {
        SDT_STATUS(sdi_cs_bell_build(a, bs, maxb - 1, false, &small), SD_ERR_INVALID_ARG);
        SDT_CHECK(small.bcol == NULL && small.val == NULL && small.slot == NULL, "%s bs %d: freed on error", what, bs);
        sdi_error_clear();
    }
    sdi_cs_bell_free(&b);
}

static void test_layouts(void)
{
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        sd_csr a;
        SDT_OK(sdi_gen(specs[m], 21, &a));
        check_sell(specs[m], &a, 32);
        check_sell(specs[m], &a, 4);
        for (int bs = 2; bs <= 32; bs *= 2)
            check_bell(specs[m], &a, bs);
        sd_csr_free(&a);
    }
}

static void test_empty_and_errors(void)
{
    sd_csr a;
    SDT_OK(sdi_csr_alloc(&a, 40, 17, 0));
    memset(a.rowptr, 0, 41 * sizeof *a.rowptr);
    check_sell("empty 40x17", &a, 32);
    int64_t maxb = -1;
    SDT_OK(sdi_cs_bell_width(&a, 16, &maxb));
    SDT_CHECK(maxb == 0, "empty: no block slots (%lld)", (long long)maxb);
    sdi_cs_bell b;
    SDT_STATUS(sdi_cs_bell_build(&a, 16, 0, false, &b), SD_ERR_INVALID_ARG);
    sdi_cs_sell s;
    SDT_STATUS(sdi_cs_sell_build(&a, 0, false, &s), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_cs_bell_width(&a, 0, &maxb), SD_ERR_INVALID_ARG);
    sdi_error_clear();
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_cusparse_layout");
    SDT_RUN(test_layouts);
    SDT_RUN(test_empty_and_errors);
    return sdt_finish();
}
