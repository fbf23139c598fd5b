/* tests/cpu/test_mtx.c: the Matrix Market reader and writer: banner variants, line ends,
 * BOM, blank and comment lines, edge sizes, the committed files of tests/data, gzip by
 * magic bytes, tiny read blocks, long comments, pipes / standard input / FIFOs, the exact
 * decimal path against strtod, canonicalisation, round trips, atomic writes and fault
 * injection. */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/io.h"
#include "sdt.h"
#include "sdt_pipe.h"

static char g_tmpdir[256];

/* xorshift64*: the seeded generator of these tests. */
static uint64_t g_rng;
static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * UINT64_C(2685821657736338717);
}
static double rnd01(void) { return (double)(rnd() >> 11) * 0x1p-53; }

static void tmp_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_tmpdir, name);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    SDT_CHECK(f != NULL, "cannot create %s", path);
    if (f == NULL)
        return;
    SDT_CHECK(fwrite(data, 1, len, f) == len, "short write %s", path);
    fclose(f);
}

static char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    b[*len] = '\0';
    fclose(f);
    return b;
}

static bool csr_equal(const sd_csr *a, const sd_csr *b)
{
    return sdi_csr_same_pattern(a, b) &&
           (a->nnz == 0 || memcmp(a->vals, b->vals, (size_t)a->nnz * sizeof(float)) == 0);
}

static bool is_zeroed(const sd_csr *a)
{
    return a->rows == 0 && a->cols == 0 && a->nnz == 0 && a->rowptr == NULL &&
           a->colind == NULL && a->vals == NULL;
}

/* Checks a against explicit arrays. */
static void expect_csr(const sd_csr *a, int32_t rows, int32_t cols, int64_t nnz,
                       const int64_t *rp, const int32_t *ci, const float *v, const char *what)
{
    SDT_CHECK(a->rows == rows && a->cols == cols && a->nnz == nnz,
              "%s: got %d x %d nnz %lld, expected %d x %d nnz %lld", what, a->rows, a->cols,
              (long long)a->nnz, rows, cols, (long long)nnz);
    if (a->rows != rows || a->nnz != nnz || a->rowptr == NULL)
        return;
    for (int32_t i = 0; i <= rows; i++)
        SDT_CHECK(a->rowptr[i] == rp[i], "%s: rowptr[%d] = %lld, expected %lld", what, i,
                  (long long)a->rowptr[i], (long long)rp[i]);
    for (int64_t k = 0; k < nnz; k++) {
        SDT_CHECK(a->colind[k] == ci[k], "%s: colind[%lld] = %d, expected %d", what,
                  (long long)k, a->colind[k], ci[k]);
        SDT_CHECK(memcmp(&a->vals[k], &v[k], sizeof(float)) == 0,
                  "%s: vals[%lld] = %.9g, expected %.9g", what, (long long)k, a->vals[k], v[k]);
    }
    SDT_OK(sd_csr_check(a));
}

/* Reads text with the default block and with every block size 1..max_block: status,
 * message and result must agree (tokens straddling blocks, CR/LF split across blocks). */
static sd_status read_text_all_blocks(const char *text, size_t len, int max_block, sd_csr *out,
                                      sdi_mtx_info *info)
{
    sd_status s = sdi_mtx_read_mem(text, len, 0, out, info);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", sd_last_error());
    for (int b = 1; b <= max_block; b++) {
        sd_csr c;
        sdi_mtx_info ci;
        sd_status s2 = sdi_mtx_read_mem(text, len, (size_t)b, &c, &ci);
        SDT_CHECK(s2 == s, "block %d: status %s vs %s (%s)", b, sd_status_string(s2),
                  sd_status_string(s), sd_last_error());
        if (s2 == SD_OK && s == SD_OK) {
            SDT_CHECK(csr_equal(&c, out), "block %d: different matrix", b);
            SDT_CHECK(ci.lines == info->lines && ci.nnz_stored == info->nnz_stored &&
                          ci.text_bytes == info->text_bytes,
                      "block %d: different info (lines %lld vs %lld)", b, (long long)ci.lines,
                      (long long)info->lines);
        } else if (s2 != SD_OK && s != SD_OK) {
            SDT_CHECK(strcmp(sd_last_error(), msg) == 0, "block %d: '%s' vs '%s'", b,
                      sd_last_error(), msg);
        }
        sd_csr_free(&c);
    }
    return s;
}

/* ------------------------------------------------------------------ banner variants */

static void test_banner_variants(void)
{
    const char *fields[] = {"real", "integer", "pattern", "double", "REAL", "Pattern"};
    const char *syms[] = {"general", "symmetric", "skew-symmetric", "hermitian", "SYMMETRIC",
                          "Skew-Symmetric", "Hermitian"};
    for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
        for (size_t s = 0; s < sizeof syms / sizeof *syms; s++) {
            char fl[16], sl[16];
            size_t k;
            for (k = 0; fields[f][k]; k++)
                fl[k] = (char)((fields[f][k] >= 'A' && fields[f][k] <= 'Z') ? fields[f][k] + 32
                                                                             : fields[f][k]);
            fl[k] = '\0';
            for (k = 0; syms[s][k]; k++)
                sl[k] = (char)((syms[s][k] >= 'A' && syms[s][k] <= 'Z') ? syms[s][k] + 32
                                                                         : syms[s][k]);
            sl[k] = '\0';
            bool pattern = strcmp(fl, "pattern") == 0, skew = strcmp(sl, "skew-symmetric") == 0;
            bool integer = strcmp(fl, "integer") == 0;
            char text[512];
            if (pattern)
                snprintf(text, sizeof text,
                         "%%%%MatrixMarket Matrix COORDINATE %s %s\n3 3 2\n2 1\n3 3\n", fields[f],
                         syms[s]);
            else
                snprintf(text, sizeof text,
                         "%%%%MatrixMarket matrix coordinate %s %s\n3 3 2\n2 1 %s\n3 3 %s\n",
                         fields[f], syms[s], integer ? "-7" : "-7.5", skew ? "0" : "2");
            sd_csr a;
            sdi_mtx_info in;
            sd_status st = sdi_mtx_read_mem(text, strlen(text), 0, &a, &in);
            if (pattern && skew) {
                SDT_CHECK(st == SD_ERR_PARSE && strstr(sd_last_error(), "skew"),
                          "pattern skew: %s", sd_last_error());
                SDT_CHECK(is_zeroed(&a), "zeroed");
                continue;
            }
            SDT_CHECK(st == SD_OK, "%s %s: %s", fields[f], syms[s], sd_last_error());
            if (st != SD_OK)
                continue;
            float v1 = pattern ? 1.0f : (integer ? -7.0f : -7.5f);
            float v2 = pattern ? 1.0f : (skew ? 0.0f : 2.0f);
            char what[64];
            snprintf(what, sizeof what, "%s %s", fields[f], syms[s]);
            if (strcmp(sl, "general") == 0) {
                int64_t rp[] = {0, 0, 1, 2};
                int32_t ci[] = {0, 2};
                float v[] = {v1, v2};
                expect_csr(&a, 3, 3, 2, rp, ci, v, what);
                SDT_CHECK(in.symmetry == SDI_MTX_GENERAL, "%s", what);
            } else {
                int64_t rp[] = {0, 1, 2, 3};
                int32_t ci[] = {1, 0, 2};
                float v[] = {skew ? -v1 : v1, v1, v2};
                expect_csr(&a, 3, 3, 3, rp, ci, v, what);
                SDT_CHECK(strcmp(sdi_mtx_symmetry_name(in.symmetry), sl) == 0, "%s: %s", what,
                          sdi_mtx_symmetry_name(in.symmetry));
            }
            SDT_CHECK(in.field == (pattern ? SDI_MTX_PATTERN
                                           : integer ? SDI_MTX_INTEGER : SDI_MTX_REAL),
                      "%s field", what);
            SDT_CHECK(in.nnz_stored == 2 && in.nnz_declared == 2, "%s stored", what);
            sd_csr_free(&a);
        }
    }
}

/* ------------------------------------------------------------------ line ends etc. */

static void test_line_ends_and_layout(void)
{
    /* The same 3 x 3 matrix written many ways. */
    const char *lines[] = {"%%MatrixMarket matrix coordinate real general", "% comment", "3 3 4",
                           "1 1 1.0", "2 3 0.25", "3 2 -3", "3 3 4e0"};
    int64_t rp[] = {0, 1, 2, 4};
    int32_t ci[] = {0, 2, 1, 2};
    float v[] = {1.0f, 0.25f, -3.0f, 4.0f};
    const char *ends[] = {"\n", "\r\n", "\r"};
    for (int e = 0; e < 3; e++) {
        for (int final = 0; final < 2; final++) {
            char text[1024] = "";
            for (int k = 0; k < 7; k++) {
                strcat(text, lines[k]);
                if (k < 6 || final)
                    strcat(text, ends[e]);
            }
            sd_csr a;
            sdi_mtx_info in;
            SDT_OK(read_text_all_blocks(text, strlen(text), 40, &a, &in));
            char what[64];
            snprintf(what, sizeof what, "end %d final %d", e, final);
            expect_csr(&a, 3, 3, 4, rp, ci, v, what);
            SDT_CHECK(in.lines == 7, "%s: %lld lines", what, (long long)in.lines);
            sd_csr_free(&a);
        }
    }
    /* Mixed line ends, BOM, tabs, trailing blanks, blank and comment lines anywhere,
     * explicit '+' signs and odd decimal forms. */
    const char *messy = "\xEF\xBB\xBF%%MatrixMarket   matrix\tcoordinate real general \t\r\n"
                        "\n"
                        "%\r"
                        "  % indented comment\n"
                        "\t \n"
                        " 3\t3 4 \r\n"
                        "% between\n"
                        "\r\n"
                        "1\t1\t+1.\n"
                        "    \n"
                        "2 3 .25\r"
                        "3 2 -3.0e+00   \r\n"
                        "% last comment\n"
                        "3 3 0.4E1\n"
                        "\n\n% trailing comment\n\n";
    sd_csr a;
    sdi_mtx_info in;
    SDT_OK(read_text_all_blocks(messy, strlen(messy), 64, &a, &in));
    expect_csr(&a, 3, 3, 4, rp, ci, v, "messy");
    SDT_CHECK(in.lines == 18, "messy: %lld lines", (long long)in.lines);
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ committed files */

static sd_status read_data(const char *name, sd_csr *a, sdi_mtx_info *in)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", SD_TEST_DATA_DIR, name);
    sd_status s = sdi_csr_read_info(path, a, in);
    /* The memory reader and tiny blocks agree with the file reader. */
    size_t len = 0;
    char *text = read_whole(path, &len);
    SDT_CHECK(text != NULL, "cannot read %s", path);
    if (text != NULL) {
        sd_csr b;
        sdi_mtx_info bi;
        sd_status s2 = read_text_all_blocks(text, len, 24, &b, &bi);
        SDT_CHECK(s2 == s, "%s: memory %s vs file %s", name, sd_status_string(s2),
                  sd_status_string(s));
        if (s == SD_OK && s2 == SD_OK) {
            SDT_CHECK(csr_equal(a, &b), "%s: memory and file differ", name);
            SDT_CHECK(bi.gzip == in->gzip && bi.text_bytes == in->text_bytes,
                      "%s: info differs", name);
        }
        sd_csr_free(&b);
        free(text);
    }
    return s;
}

static void test_data_files(void)
{
    sd_csr a;
    sdi_mtx_info in;
    {
        SDT_OK(read_data("empty_0x0.mtx", &a, &in));
        int64_t rp[] = {0};
        expect_csr(&a, 0, 0, 0, rp, NULL, NULL, "empty_0x0");
        sd_csr_free(&a);
    }
    {
        SDT_OK(read_data("no_entries.mtx", &a, &in));
        int64_t rp[] = {0, 0, 0, 0};
        expect_csr(&a, 3, 4, 0, rp, NULL, NULL, "no_entries");
        sd_csr_free(&a);
    }
    {
        SDT_OK(read_data("one_by_one.mtx", &a, &in));
        int64_t rp[] = {0, 1};
        int32_t ci[] = {0};
        float v[] = {-2.5f};
        expect_csr(&a, 1, 1, 1, rp, ci, v, "one_by_one");
        sd_csr_free(&a);
    }
    {
        SDT_OK(read_data("one_entry.mtx", &a, &in));
        int64_t rp[] = {0, 0, 0, 1, 1, 1};
        int32_t ci[] = {5};
        float v[] = {4.0f};
        expect_csr(&a, 5, 7, 1, rp, ci, v, "one_entry");
        sd_csr_free(&a);
    }
    {
        SDT_OK(read_data("empty_rows.mtx", &a, &in));
        int64_t rp[] = {0, 0, 2, 2, 2, 3, 5};
        int32_t ci[] = {0, 2, 1, 0, 3};
        float v[] = {2.0f, -1.0f, 0.0f, 3.0f, 1.5f};
        expect_csr(&a, 6, 4, 5, rp, ci, v, "empty_rows");
        sd_csr_free(&a);
    }
    {
        SDT_OK(read_data("dense_row.mtx", &a, &in));
        int64_t rp[] = {0, 1, 51, 51, 52};
        int32_t ci[52];
        float v[52];
        ci[0] = 0;
        v[0] = 7;
        for (int j = 0; j < 50; j++) {
            ci[1 + j] = j;
            v[1 + j] = (float)(j + 1);
        }
        ci[51] = 49;
        v[51] = -7;
        expect_csr(&a, 4, 50, 52, rp, ci, v, "dense_row");
        SDT_CHECK(in.field == SDI_MTX_INTEGER, "dense_row field");
        sd_csr_free(&a);
    }
    const char *same[] = {"crlf.mtx", "cr.mtx", "bom_tabs.mtx"};
    for (int k = 0; k < 3; k++) {
        SDT_OK(read_data(same[k], &a, &in));
        int64_t rp[] = {0, 1, 2, 4};
        int32_t ci[] = {0, 2, 1, 2};
        float v[] = {1.0f, 0.25f, -3.0f, 4.0f};
        expect_csr(&a, 3, 3, 4, rp, ci, v, same[k]);
        sd_csr_free(&a);
    }
    {
        /* (1,2) and (2,1) both stored: each mirrored, so both positions hold 1 + 0.5. */
        SDT_OK(read_data("symmetric.mtx", &a, &in));
        int64_t rp[] = {0, 2, 4, 6};
        int32_t ci[] = {0, 1, 0, 2, 1, 2};
        float v[] = {2.0f, 1.5f, 1.5f, -1.0f, -1.0f, 4.0f};
        expect_csr(&a, 3, 3, 6, rp, ci, v, "symmetric");
        SDT_CHECK(in.nnz_stored == 5 && in.n_duplicates == 2 && in.nnz == 6,
                  "symmetric counts: stored %lld dups %lld nnz %lld", (long long)in.nnz_stored,
                  (long long)in.n_duplicates, (long long)in.nnz);
        sd_csr_free(&a);
    }
    {
        SDT_OK(read_data("skew.mtx", &a, &in));
        int64_t rp[] = {0, 2, 4, 5};
        int32_t ci[] = {1, 2, 0, 1, 0};
        float v[] = {-1.5f, 2.0f, 1.5f, 0.0f, -2.0f};
        expect_csr(&a, 3, 3, 5, rp, ci, v, "skew");
        SDT_CHECK(in.symmetry == SDI_MTX_SKEW_SYMMETRIC, "skew symmetry");
        sd_csr_free(&a);
    }
    {
        SDT_OK(read_data("pattern.mtx", &a, &in));
        int64_t rp[] = {0, 2, 2, 3};
        int32_t ci[] = {1, 3, 0};
        float v[] = {1.0f, 1.0f, 2.0f}; /* (3,1) appears twice: summed */
        expect_csr(&a, 3, 4, 3, rp, ci, v, "pattern");
        SDT_CHECK(in.field == SDI_MTX_PATTERN && in.n_duplicates == 1, "pattern info");
        sd_csr_free(&a);
    }
    {
        SDT_OK(read_data("integer.mtx", &a, &in));
        int64_t rp[] = {0, 2, 3, 4};
        int32_t ci[] = {0, 2, 1, 0};
        float v[] = {-5.0f, 7.0f, 100000.0f, 7.0f};
        expect_csr(&a, 3, 3, 4, rp, ci, v, "integer");
        sd_csr_free(&a);
    }
    {
        SDT_OK(read_data("hermitian.mtx", &a, &in));
        int64_t rp[] = {0, 2, 3};
        int32_t ci[] = {0, 1, 0};
        float v[] = {1.0f, -2.0f, -2.0f};
        expect_csr(&a, 2, 2, 3, rp, ci, v, "hermitian");
        SDT_CHECK(in.symmetry == SDI_MTX_HERMITIAN, "hermitian symmetry");
        sd_csr_free(&a);
    }
}

/* ------------------------------------------------------------------ gzip */

static void test_gzip_by_magic(void)
{
    int64_t rp[] = {0, 2, 3, 3, 5};
    int32_t ci[] = {0, 2, 1, 0, 2};
    float v[] = {1.0f, 0.1f, 2.25f, 3.0f, -1e-3f};
    const char *names[] = {"small.mtx.gz", "gzip_named_plain.mtx", "plain_named.mtx.gz"};
    const bool gz[] = {true, true, false};
    for (int k = 0; k < 3; k++) {
        sd_csr a;
        sdi_mtx_info in;
        SDT_OK(read_data(names[k], &a, &in));
        expect_csr(&a, 4, 3, 5, rp, ci, v, names[k]);
        SDT_CHECK(in.gzip == gz[k], "%s: gzip %d", names[k], in.gzip);
        SDT_CHECK(in.text_bytes == 104, "%s: %lld text bytes", names[k], (long long)in.text_bytes);
        sd_csr_free(&a);
    }
    /* Two gzip members back to back read as their concatenated text (as gzip -d does);
     * bytes after the last member that are not another member are ignored (as gzip -d
     * does, with a warning). */
    const char *p1 = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n";
    const char *p2 = "2 2 5\n";
    unsigned char buf[512];
    size_t n = 0;
    for (int part = 0; part < 2; part++) {
        const char *src = part ? p2 : p1;
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
        zs.next_in = (unsigned char *)(uintptr_t)src;
        zs.avail_in = (uInt)strlen(src);
        zs.next_out = buf + n;
        zs.avail_out = (uInt)(sizeof buf - n);
        deflate(&zs, Z_FINISH);
        n += (sizeof buf - n) - zs.avail_out;
        deflateEnd(&zs);
    }
    sd_csr a;
    sdi_mtx_info in;
    SDT_OK(read_text_all_blocks((const char *)buf, n, 16, &a, &in));
    int64_t rp2[] = {0, 1, 2};
    int32_t ci2[] = {0, 1};
    float v2[] = {1.0f, 5.0f};
    expect_csr(&a, 2, 2, 2, rp2, ci2, v2, "two members");
    SDT_CHECK(in.gzip, "two members: gzip");
    sd_csr_free(&a);
    char path[512];
    tmp_path(path, sizeof path, "two_members.bin");
    memcpy(buf + n, "garbage", 7);
    write_file(path, buf, n + 7);
    SDT_OK(sd_csr_read(path, &a));
    expect_csr(&a, 2, 2, 2, rp2, ci2, v2, "two members from a file");
    sd_csr_free(&a);
    SDT_OK(sdi_mtx_read_mem((const char *)buf, n + 7, 0, &a, NULL));
    expect_csr(&a, 2, 2, 2, rp2, ci2, v2, "two members + garbage in memory");
    sd_csr_free(&a);
    unlink(path);
}

/* ------------------------------------------------------------------ decimals */

static int g_value_mismatch;

static void check_value(const char *text)
{
    float got = 0.0f;
    const char *end = NULL;
    sdi_num_status st = sdi_parse_value(text, false, &end, &got);
    errno = 0;
    char *e = NULL;
    double d = strtod(text, &e);
    int err = errno;
    float want = (float)d;
    sdi_num_status expect = SDI_NUM_OK;
    if (isnan(d))
        expect = SDI_NUM_NONFINITE;
    else if (isinf(d))
        expect = err == ERANGE ? SDI_NUM_OVERFLOW : SDI_NUM_NONFINITE;
    else if (isinf(want))
        expect = SDI_NUM_OVERFLOW;
    bool ok = st == expect &&
              (expect != SDI_NUM_OK || (memcmp(&got, &want, sizeof got) == 0 && end == e));
    if (!ok && g_value_mismatch++ < 10)
        SDT_CHECK(ok, "'%s': status %d value %.9g, strtod gives %.9g (status %d)", text, st,
                  got, want, expect);
}

static void test_decimal_exact(void)
{
    g_rng = sdt_seed * 2654435761u + 1;
    g_value_mismatch = 0;
    char b[128];
    /* %.9g of random floats over the whole FP32 range (what writers produce). */
    for (int k = 0; k < 300000; k++) {
        uint32_t bits = (uint32_t)rnd();
        float f;
        memcpy(&f, &bits, sizeof f);
        if (!isfinite(f))
            continue;
        snprintf(b, sizeof b, "%.9g", (double)f);
        check_value(b);
        snprintf(b, sizeof b, "%.8e", (double)f);
        check_value(b);
    }
    /* %.17g and %.16e of random doubles (SuiteSparse-style full precision). */
    for (int k = 0; k < 300000; k++) {
        double d = (rnd01() - 0.5) * pow(10.0, (double)(int)(rnd() % 90) - 50);
        snprintf(b, sizeof b, "%.17g", d);
        check_value(b);
        snprintf(b, sizeof b, "%.16e", d);
        check_value(b);
    }
    /* Random digit strings: 1-25 digits, leading zeros, a point anywhere, exponents. */
    for (int k = 0; k < 300000; k++) {
        int nd = 1 + (int)(rnd() % 25), n = 0;
        if (rnd() & 1)
            b[n++] = (rnd() & 1) ? '-' : '+';
        int point = (int)(rnd() % (unsigned)(nd + 2)) - 1;
        int zeros = (rnd() % 4 == 0) ? (int)(rnd() % 6) : 0;
        for (int z = 0; z < zeros; z++)
            b[n++] = '0';
        for (int d = 0; d < nd; d++) {
            if (d == point)
                b[n++] = '.';
            b[n++] = (char)('0' + rnd() % 10);
        }
        if (rnd() % 3 != 0)
            n += snprintf(b + n, sizeof b - (size_t)n, "%c%d", (rnd() & 1) ? 'e' : 'E',
                          (int)(rnd() % 100) - 60);
        b[n] = '\0';
        check_value(b);
    }
    /* Float rounding midpoints written exactly, and one digit either side of them. */
    for (int k = 0; k < 20000; k++) {
        uint32_t bits = (uint32_t)rnd() & 0x7f7fffffu;
        float f;
        memcpy(&f, &bits, sizeof f);
        double lo = (double)f, hi = (double)nextafterf(f, INFINITY);
        double mid = lo + (hi - lo) / 2;
        snprintf(b, sizeof b, "%.40g", mid);
        check_value(b);
        snprintf(b, sizeof b, "%.17g", mid);
        check_value(b);
        snprintf(b, sizeof b, "%.17g", nextafter(mid, 0));
        check_value(b);
        snprintf(b, sizeof b, "%.17g", nextafter(mid, INFINITY));
        check_value(b);
        snprintf(b, sizeof b, "%.19g", mid);
        check_value(b);
    }
    /* Edges: subnormals, FLT_MAX and just beyond, zeros, words, hex, huge exponents. */
    const char *edge[] = {"0", "-0", "0.0", "-0e0", "0e99999999", "1e-45", "1.4e-45", "7e-46",
                          "1e-46", "1.17549435e-38", "1.1754942e-38", "3.40282347e38",
                          "3.4028235e38", "3.4028236e38", "3.40282356e38", "3.40282357e38",
                          "-3.4028236e38", "1e39", "1e38", "1e400", "-1e400", "1e-400",
                          "4.9406564584124654e-324", "2.2250738585072014e-308",
                          "1.7976931348623157e308", "16777217", "16777219", "9007199254740993",
                          "123456789012345678901234567890", "0.000000000000000000000000001",
                          "0x1p3", "0x1.8p-2", "inf", "-inf", "Infinity", "nan", "NaN",
                          "-nan", "1.", ".5", "+.5e1", "5e+3", "1E5"};
    for (size_t k = 0; k < sizeof edge / sizeof *edge; k++)
        check_value(edge[k]);
    /* Integer mode: digits only. */
    float f = 0;
    const char *end;
    SDT_CHECK(sdi_parse_value("-123", true, &end, &f) == SDI_NUM_OK && f == -123.0f, "int");
    SDT_CHECK(sdi_parse_value("+16777217", true, &end, &f) == SDI_NUM_OK && f == 16777216.0f,
              "int rounding %.9g", f);
    SDT_CHECK(sdi_parse_value("1.0", true, &end, &f) == SDI_NUM_DECIMAL, "int 1.0");
    SDT_CHECK(sdi_parse_value("1e3", true, &end, &f) == SDI_NUM_DECIMAL, "int 1e3");
    SDT_CHECK(sdi_parse_value("inf", true, &end, &f) == SDI_NUM_SYNTAX, "int inf");
    SDT_CHECK(sdi_parse_value("1000000000000000000000000000000000000000", true, &end, &f) ==
                  SDI_NUM_OVERFLOW,
              "int 1e39");
    SDT_CHECK(sdi_parse_value("340282346638528859811704183484516925440", true, &end, &f) ==
                      SDI_NUM_OK &&
                  f == FLT_MAX,
              "int FLT_MAX");
    SDT_CHECK(sdi_parse_value("12345678901234567890123", true, &end, &f) == SDI_NUM_OK &&
                  f == (float)12345678901234567890123.0,
              "int long");
}

/* ------------------------------------------------------------------ canonicalisation */

typedef struct {
    int32_t i, j;
    float v;
    int64_t order;
} trip;

static int trip_cmp(const void *a, const void *b)
{
    const trip *x = a, *y = b;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    if (x->j != y->j)
        return x->j < y->j ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

/* sdi_coo_to_csr against qsort in row-major order then input order: ordered input,
 * column-major input, random input, long unsorted rows (the merge sort), duplicates. */
static void test_canonicalisation(void)
{
    g_rng = sdt_seed * 7 + 3;
    for (int trial = 0; trial < 60; trial++) {
        int32_t rows = 1 + (int32_t)(rnd() % 300), cols = 1 + (int32_t)(rnd() % 3000);
        int64_t n = (int64_t)(rnd() % 20000);
        int mode = trial % 4; /* 0 random, 1 row-major, 2 column-major, 3 few long rows */
        trip *t = malloc((size_t)(n > 0 ? n : 1) * sizeof *t);
        for (int64_t k = 0; k < n; k++) {
            t[k].i = mode == 3 ? (int32_t)(rnd() % 3) : (int32_t)(rnd() % (uint64_t)rows);
            t[k].j = (int32_t)(rnd() % (uint64_t)(trial % 5 == 0 ? 8 : cols));
            t[k].v = (float)((int)(rnd() % 9) - 4);
            t[k].order = k;
        }
        if (mode == 1 || mode == 2) {
            qsort(t, (size_t)n, sizeof *t, trip_cmp);
            if (mode == 2)
                for (int64_t k = 0; k < n; k++) {
                    int32_t x = t[k].i;
                    t[k].i = t[k].j % rows;
                    t[k].j = x % cols;
                }
        }
        sdi_coo c;
        SDT_OK(sdi_coo_init(&c, rows, cols, n));
        for (int64_t k = 0; k < n; k++) {
            SDT_OK(sdi_coo_push(&c, t[k].i, t[k].j, t[k].v));
            t[k].order = k;
        }
        sd_csr a;
        int64_t dups = -1;
        SDT_OK(sdi_coo_to_csr(&c, &a, &dups));
        SDT_OK(sd_csr_check(&a));
        qsort(t, (size_t)n, sizeof *t, trip_cmp);
        int64_t w = 0, nd = 0;
        bool same = true;
        for (int64_t k = 0; k < n;) {
            double acc = t[k].v;
            int64_t e = k + 1;
            while (e < n && t[e].i == t[k].i && t[e].j == t[k].j) {
                acc += t[e].v;
                e++;
                nd++;
            }
            if (w >= a.nnz || a.colind[w] != t[k].j || a.vals[w] != (float)acc ||
                w < a.rowptr[t[k].i] || w >= a.rowptr[t[k].i + 1])
                same = false;
            w++;
            k = e;
        }
        SDT_CHECK(same && w == a.nnz && nd == dups,
                  "trial %d mode %d: w %lld nnz %lld dups %lld/%lld", trial, mode, (long long)w,
                  (long long)a.nnz, (long long)dups, (long long)nd);
        sd_csr_free(&a);
        sdi_coo_free(&c);
        free(t);
    }
    /* Summation in double, in input order: 1e8 + 1 - 1e8 is 1 (float sums would give 0),
     * and duplicates that cancel stay as explicit zeros. */
    const char *text = "%%MatrixMarket matrix coordinate real general\n2 2 5\n"
                       "1 1 1e8\n1 1 1\n2 2 3\n1 1 -1e8\n2 2 -3\n";
    sd_csr a;
    sdi_mtx_info in;
    SDT_OK(sdi_mtx_read_mem(text, strlen(text), 0, &a, &in));
    int64_t rp[] = {0, 1, 2};
    int32_t ci[] = {0, 1};
    float v[] = {1.0f, 0.0f};
    expect_csr(&a, 2, 2, 2, rp, ci, v, "double sums");
    SDT_CHECK(in.n_duplicates == 3 && in.nnz_stored == 5 && in.nnz == 2, "dup counts");
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ long lines */

static void test_long_lines(void)
{
    size_t cap = 12u << 20, n = 0;
    char *t = malloc(cap);
    SDT_CHECK(t != NULL, "malloc");
    if (t == NULL)
        return;
    n += (size_t)sprintf(t + n, "%%%%MatrixMarket matrix coordinate real general\n%%");
    memset(t + n, 'c', 9u << 20); /* a 9 MB comment: longer than one read block */
    n += 9u << 20;
    n += (size_t)sprintf(t + n, "\n2 2 3\n1");
    memset(t + n, ' ', 100000);
    n += 100000;
    n += (size_t)sprintf(t + n, "1 0.5");
    memset(t + n, '0', 5000);
    n += 5000;
    n += (size_t)sprintf(t + n, "e1\n2 2 1");
    memset(t + n, '0', 3000);
    n += 3000;
    n += (size_t)sprintf(t + n, "e-3000\n2 1 -0.25");
    sd_csr a;
    sdi_mtx_info in;
    SDT_OK(sdi_mtx_read_mem(t, n, 0, &a, &in));
    int64_t rp[] = {0, 1, 3};
    int32_t ci[] = {0, 0, 1};
    float v[] = {5.0f, -0.25f, 1.0f};
    expect_csr(&a, 2, 2, 3, rp, ci, v, "long lines");
    sd_csr_free(&a);
    SDT_OK(sdi_mtx_read_mem(t, n, 4093, &a, &in));
    expect_csr(&a, 2, 2, 3, rp, ci, v, "long lines, small blocks");
    sd_csr_free(&a);
    free(t);
}

/* Comments of any length are skipped wherever they are (in the header, indented, with
 * NUL bytes, at the end without a line end) and keep the line count; lines other than
 * comments may be exactly SDI_MTX_LINE_MAX bytes long. The same whatever the block,
 * through gzip, and from a pipe, standard input or a FIFO. */
static void test_long_comments(void)
{
    const size_t big = (size_t)2 << 20, lim = SDI_MTX_LINE_MAX;
    size_t cap = 4 * big + 4 * lim + 4096, n = 0;
    char *t = malloc(cap);
    SDT_CHECK(t != NULL, "malloc");
    if (t == NULL)
        return;
#define PUT(str) (n += (size_t)sprintf(t + n, "%s", str))
#define FILL(c, k) (memset(t + n, c, k), n += (k))
    PUT("%%MatrixMarket matrix coordinate real general\n"); /* line 1 */
    PUT("%");                                                /* 2: in the header */
    FILL('a', big);
    PUT("\n3 3 3\n"); /* 3 */
    FILL(' ', big);    /* 4: indented past the limit */
    PUT("% indented\r\n1 1 1.5\n"); /* 5 */
    PUT("%");                        /* 6: NUL bytes, a CR alone ends it */
    FILL('\0', big);
    PUT("\r");
    FILL('\t', lim); /* 7: a blank line of exactly the limit */
    PUT("\n2 1 ");   /* 8: an entry of exactly the limit */
    FILL('0', lim - 5);
    PUT("7\n%"); /* 9: one byte past the limit, CRLF */
    FILL('b', lim);
    PUT("\r\n3 3 "); /* 10: exactly the limit, CRLF */
    FILL('0', lim - 5);
    PUT("2\r\n%"); /* 11: the last line, without a line end */
    FILL('c', big);
#undef PUT
#undef FILL
    const int64_t rp[] = {0, 1, 2, 3};
    const int32_t ci[] = {0, 0, 2};
    const float v[] = {1.5f, 7.0f, 2.0f};
    const size_t blocks[] = {0, 1, 7, 4093, lim - 1, lim, lim + 1, lim + 2};
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
        sd_csr a;
        sdi_mtx_info in;
        SDT_OK(sdi_mtx_read_mem(t, n, blocks[b], &a, &in));
        expect_csr(&a, 3, 3, 3, rp, ci, v, "long comments");
        SDT_CHECK(in.lines == 11 && in.text_bytes == (int64_t)n,
                  "block %zu: %lld lines, %lld bytes", blocks[b], (long long)in.lines,
                  (long long)in.text_bytes);
        sd_csr_free(&a);
    }
    char plain[512], gz[512], fifo[512];
    tmp_path(plain, sizeof plain, "long_comments.mtx");
    tmp_path(gz, sizeof gz, "long_comments.mtx.gz");
    tmp_path(fifo, sizeof fifo, "long_comments.fifo");
    write_file(plain, t, n);
    gzFile g = gzopen(gz, "wb");
    SDT_CHECK(g != NULL && gzwrite(g, t, (unsigned)n) == (int)n && gzclose(g) == Z_OK, "gzip");
    size_t zn = 0;
    char *z = read_whole(gz, &zn);
    SDT_CHECK(z != NULL, "read %s", gz);
    for (int k = 0; k < 5 && z != NULL; k++) {
        static const char *how[] = {"file", "gzip file", "pipe", "gzip on stdin", "FIFO"};
        sd_csr a;
        sdi_mtx_info in;
        sd_status s = SD_ERR_INTERNAL;
        sdt_pipe p = {-1, -1, ""};
        if (k == 0 || k == 1) {
            s = sdi_csr_read_info(k == 0 ? plain : gz, &a, &in);
        } else if (k == 2) {
            p = sdt_pipe_from(t, n);
            s = sdi_csr_read_info(p.path, &a, &in);
        } else if (k == 3) {
            p = sdt_pipe_from(z, zn);
            SDT_WITH_STDIN(p, s = sdi_csr_read_info("-", &a, &in));
        } else {
            p = sdt_fifo_from(fifo, t, n);
            s = sdi_csr_read_info(p.path, &a, &in);
        }
        sdt_pipe_done(&p);
        SDT_CHECK(s == SD_OK, "%s: %s", how[k], sd_last_error());
        if (s != SD_OK)
            continue;
        expect_csr(&a, 3, 3, 3, rp, ci, v, how[k]);
        SDT_CHECK(in.lines == 11 && in.text_bytes == (int64_t)n && in.gzip == (k == 1 || k == 3),
                  "%s: %lld lines, %lld bytes, gzip %d", how[k], (long long)in.lines,
                  (long long)in.text_bytes, in.gzip);
        sd_csr_free(&a);
    }
    free(z);
    unlink(plain);
    unlink(gz);
    free(t);
}

/* Every committed file reads the same from a pipe, from standard input and from a FIFO
 * as from its path: the first bytes that tell the format are read once, never re-read
 * by reopening or rewinding. */
static void test_streams(void)
{
    static const char *names[] = {"symmetric.mtx", "small.mtx.gz",       "crlf.mtx",
                                  "cr.mtx",        "bom_tabs.mtx",       "empty_0x0.mtx",
                                  "pattern.mtx",   "plain_named.mtx.gz", "gzip_named_plain.mtx",
                                  "one_by_one.mtx"};
    char fifo[512];
    tmp_path(fifo, sizeof fifo, "stream.fifo");
    for (size_t f = 0; f < sizeof names / sizeof *names; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", SD_TEST_DATA_DIR, names[f]);
        sd_csr ref;
        sdi_mtx_info ri;
        SDT_OK(sdi_csr_read_info(path, &ref, &ri));
        size_t len = 0;
        char *text = read_whole(path, &len);
        SDT_CHECK(text != NULL, "cannot read %s", path);
        for (int via = 0; via < 3 && text != NULL; via++) {
            static const char *how[] = {"pipe", "stdin", "FIFO"};
            long long live0 = sdi_alloc_live_bytes();
            sdt_pipe p = via == 2 ? sdt_fifo_from(fifo, text, len) : sdt_pipe_from(text, len);
            sd_csr a;
            sdi_mtx_info in;
            sd_status s = SD_ERR_INTERNAL;
            if (via == 1)
                SDT_WITH_STDIN(p, s = sdi_csr_read_info("-", &a, &in));
            else
                s = sdi_csr_read_info(p.path, &a, &in);
            sdt_pipe_done(&p);
            SDT_CHECK(s == SD_OK, "%s (%s): %s", names[f], how[via], sd_last_error());
            if (s != SD_OK)
                continue;
            SDT_CHECK(csr_equal(&a, &ref), "%s (%s): different matrix", names[f], how[via]);
            SDT_CHECK(in.gzip == ri.gzip && in.field == ri.field &&
                          in.symmetry == ri.symmetry && in.lines == ri.lines &&
                          in.nnz_stored == ri.nnz_stored && in.text_bytes == ri.text_bytes,
                      "%s (%s): different summary", names[f], how[via]);
            sd_csr_free(&a);
            SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s (%s): leak", names[f], how[via]);
        }
        free(text);
        sd_csr_free(&ref);
    }
    /* A directory is named as such. */
    sd_csr a;
    SDT_STATUS(sd_csr_read(g_tmpdir, &a), SD_ERR_IO);
    SDT_CHECK(strstr(sd_last_error(), "is a directory") != NULL, "%s", sd_last_error());
}

/* ------------------------------------------------------------------ round trips */

static void random_csr(sd_csr *a, int32_t rows, int32_t cols, int64_t per_row, int kind)
{
    sdi_coo c;
    SDT_OK(sdi_coo_init(&c, rows, cols, rows * per_row));
    for (int32_t i = 0; i < rows; i++)
        for (int64_t k = 0; k < per_row && cols > 0; k++) {
            float v;
            switch (kind) {
            case 0: v = (float)((int)(rnd() % 5) - 2); break;
            case 1: v = (float)(rnd01() * 2 - 1); break;
            default: {
                uint32_t bits = (uint32_t)rnd();
                memcpy(&v, &bits, sizeof v);
                if (!isfinite(v))
                    v = -0.0f;
            }
            }
            SDT_OK(sdi_coo_push(&c, i, (int32_t)(rnd() % (uint64_t)cols), v));
        }
    /* Duplicate positions are summed; with arbitrary bit patterns a sum may overflow. */
    SDT_OK(sdi_coo_to_csr(&c, a, NULL));
    for (int64_t k = 0; k < a->nnz; k++)
        if (!isfinite(a->vals[k]))
            a->vals[k] = 1.0f;
    sdi_coo_free(&c);
}

static void test_round_trip(void)
{
    g_rng = sdt_seed * 31 + 7;
    const int32_t shapes[][2] = {{0, 0}, {0, 5}, {5, 0}, {1, 1}, {7, 3}, {3, 7}, {200, 150}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        for (int kind = 0; kind < 3; kind++) {
            sd_csr a, b, c;
            random_csr(&a, shapes[s][0], shapes[s][1], 4, kind);
            char p1[512], p2[512], p3[512];
            tmp_path(p1, sizeof p1, "rt.mtx");
            tmp_path(p2, sizeof p2, "rt.mtx.gz");
            tmp_path(p3, sizeof p3, "rt2.mtx");
            SDT_OK(sd_csr_write(p1, &a));
            SDT_OK(sd_csr_write(p2, &a));
            sdi_mtx_info in;
            SDT_OK(sdi_csr_read_info(p1, &b, &in));
            SDT_CHECK(csr_equal(&a, &b), "shape %zu kind %d: .mtx round trip differs", s, kind);
            SDT_CHECK(!in.gzip && in.symmetry == SDI_MTX_GENERAL && in.field == SDI_MTX_REAL,
                      "written as real general");
            SDT_OK(sdi_csr_read_info(p2, &c, &in));
            SDT_CHECK(csr_equal(&a, &c), "shape %zu kind %d: .mtx.gz round trip differs", s,
                      kind);
            SDT_CHECK(in.gzip, ".gz is compressed");
            /* mtx → csr → mtx gives the same text. */
            SDT_OK(sd_csr_write(p3, &b));
            size_t l1 = 0, l3 = 0;
            char *t1 = read_whole(p1, &l1), *t3 = read_whole(p3, &l3);
            SDT_CHECK(t1 && t3 && l1 == l3 && memcmp(t1, t3, l1) == 0, "text differs");
            free(t1);
            free(t3);
            sd_csr_free(&a);
            sd_csr_free(&b);
            sd_csr_free(&c);
            unlink(p1);
            unlink(p2);
            unlink(p3);
        }
    }
}

/* ------------------------------------------------------------------ atomic writes */

static int count_tmp_files(void)
{
    DIR *d = opendir(g_tmpdir);
    int n = 0;
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

static void test_atomic_write(void)
{
    int64_t rp[] = {0, 1, 2};
    int32_t ci[] = {0, 1};
    float v[] = {1.0f, 2.0f};
    sd_csr a = {2, 2, 2, rp, ci, v};
    char path[512], bad[512];
    tmp_path(path, sizeof path, "dest.mtx");
    tmp_path(bad, sizeof bad, "no/such/dir/out.mtx");
    write_file(path, "precious", 8);
    /* An invalid matrix fails before anything is written: the destination survives. */
    float nanv[] = {1.0f, NAN};
    sd_csr bad_a = {2, 2, 2, rp, ci, nanv};
    SDT_STATUS(sd_csr_write(path, &bad_a), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "row 1") != NULL, "names the row: %s", sd_last_error());
    size_t len = 0;
    char *t = read_whole(path, &len);
    SDT_CHECK(t && len == 8 && memcmp(t, "precious", 8) == 0, "destination clobbered");
    free(t);
    SDT_STATUS(sd_csr_write(bad, &a), SD_ERR_IO);
    SDT_CHECK(strstr(sd_last_error(), "no/such/dir") != NULL, "names the path: %s",
              sd_last_error());
    SDT_STATUS(sd_csr_write(NULL, &a), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_csr_write(path, NULL), SD_ERR_INVALID_ARG);
    SDT_OK(sd_csr_write(path, &a));
    SDT_CHECK(count_tmp_files() == 0, "temporary files left behind");
    /* Reading errors: missing file, a directory. */
    sd_csr b;
    memset(&b, 0xff, sizeof b);
    SDT_STATUS(sd_csr_read(bad, &b), SD_ERR_IO);
    SDT_CHECK(is_zeroed(&b), "zeroed after a failed read");
    SDT_STATUS(sd_csr_read(g_tmpdir, &b), SD_ERR_IO);
    SDT_CHECK(is_zeroed(&b), "zeroed after a failed read");
    SDT_STATUS(sd_csr_read(NULL, &b), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_csr_read(path, NULL), SD_ERR_INVALID_ARG);
    unlink(path);
}

/* ------------------------------------------------------------------ fault injection */

static void test_fault_injection(void)
{
    char plain[512], gz[512];
    snprintf(plain, sizeof plain, "%s/symmetric.mtx", SD_TEST_DATA_DIR);
    snprintf(gz, sizeof gz, "%s/small.mtx.gz", SD_TEST_DATA_DIR);
    const char *files[] = {plain, gz};
    for (int f = 0; f < 2; f++) {
        sd_csr ref;
        SDT_OK(sd_csr_read(files[f], &ref));
        long long live0 = sdi_alloc_live_bytes();
        int k;
        for (k = 0; k < 1000; k++) {
            sd_csr a;
            memset(&a, 0xff, sizeof a);
            sdi_alloc_fail_after(k);
            sd_status s = sd_csr_read(files[f], &a);
            sdi_alloc_fail_after(-1);
            if (s == SD_OK) {
                SDT_CHECK(csr_equal(&a, &ref), "%s: result after %d failures", files[f], k);
                sd_csr_free(&a);
                break;
            }
            SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "%s: fail after %d: %s (%s)", files[f], k,
                      sd_status_string(s), sd_last_error());
            SDT_CHECK(is_zeroed(&a), "%s: not zeroed after failure %d", files[f], k);
            SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s: leak after failure %d", files[f], k);
        }
        SDT_CHECK(k > 2 && k < 1000, "%s: sweep ended at %d", files[f], k);
        /* The writer too: no leak and no file left on failure. */
        char out[512];
        tmp_path(out, sizeof out, f ? "fi.mtx.gz" : "fi.mtx");
        for (k = 0; k < 1000; k++) {
            sdi_alloc_fail_after(k);
            sd_status s = sd_csr_write(out, &ref);
            sdi_alloc_fail_after(-1);
            if (s == SD_OK)
                break;
            SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "write fail after %d: %s", k, sd_last_error());
            SDT_CHECK(access(out, F_OK) != 0 && count_tmp_files() == 0, "file left after %d", k);
            SDT_CHECK(sdi_alloc_live_bytes() == live0, "write leak after %d", k);
        }
        SDT_CHECK(k >= 1 && k < 1000, "write sweep ended at %d", k);
        unlink(out);
        sd_csr_free(&ref);
    }
}

static void remove_tmpdir(void)
{
    DIR *d = opendir(g_tmpdir);
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", g_tmpdir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(g_tmpdir);
}

int main(void)
{
    sdt_init("test_mtx");
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/sd_test_mtx_XXXXXX");
    if (mkdtemp(g_tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    long long live0 = sdi_alloc_live_bytes();
    SDT_RUN(test_banner_variants);
    SDT_RUN(test_line_ends_and_layout);
    SDT_RUN(test_data_files);
    SDT_RUN(test_gzip_by_magic);
    SDT_RUN(test_decimal_exact);
    SDT_RUN(test_canonicalisation);
    SDT_RUN(test_long_lines);
    SDT_RUN(test_long_comments);
    SDT_RUN(test_streams);
    SDT_RUN(test_round_trip);
    SDT_RUN(test_atomic_write);
    SDT_RUN(test_fault_injection);
    if (sdi_alloc_live_bytes() != live0) {
        printf("FAIL leak: %lld bytes still held\n", sdi_alloc_live_bytes() - live0);
        sdt_failed++;
    }
    remove_tmpdir();
    return sdt_finish();
}
