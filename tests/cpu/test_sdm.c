/* tests/cpu/test_sdm.c: the binary .sdm format: round trips, the committed golden file
 * (byte layout), detection by magic bytes, every truncation, flipped bytes, crafted
 * files with a valid checksum but a bad structure, fault injection, and streams (refused
 * by name: the length must be known before anything is allocated). */
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/io.h"
#include "sdt.h"
#include "sdt_pipe.h"

static char g_dir[] = "/tmp/sd_test_sdm_XXXXXX";

static uint64_t g_rng;
static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * UINT64_C(2685821657736338717);
}

static bool csr_equal(const sd_csr *a, const sd_csr *b)
{
    return sdi_csr_same_pattern(a, b) &&
           (a->nnz == 0 || memcmp(a->vals, b->vals, (size_t)a->nnz * sizeof(float)) == 0);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

static void random_csr(sd_csr *a, int32_t rows, int32_t cols, int per_row)
{
    sdi_coo c;
    SDT_OK(sdi_coo_init(&c, rows, cols, 0));
    for (int32_t i = 0; i < rows && cols > 0; i++)
        for (int k = 0; k < per_row; k++)
            SDT_OK(sdi_coo_push(&c, i, (int32_t)(rnd() % (uint64_t)cols),
                                (float)(int)(rnd() % 2001) / 7.0f - 100.0f));
    SDT_OK(sdi_coo_to_csr(&c, a, NULL));
    sdi_coo_free(&c);
}

static void test_round_trip(void)
{
    g_rng = sdt_seed * 3 + 11;
    const int32_t shapes[][3] = {{0, 0, 0}, {0, 9, 0}, {9, 0, 0}, {1, 1, 1},
                                 {5, 3, 0}, {40, 70, 6}, {1000, 20, 9}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        sd_csr a, b;
        random_csr(&a, shapes[s][0], shapes[s][1], shapes[s][2]);
        char path[256];
        snprintf(path, sizeof path, "%s/rt.sdm", g_dir);
        SDT_OK(sd_csr_write(path, &a));
        sdi_mtx_info in;
        SDT_OK(sdi_csr_read_info(path, &b, &in));
        SDT_CHECK(csr_equal(&a, &b), "shape %zu: round trip differs", s);
        SDT_CHECK(in.format == SDI_FORMAT_SDM && in.symmetry == SDI_MTX_GENERAL &&
                      in.field == SDI_MTX_REAL && in.nnz_stored == a.nnz && in.nnz == a.nnz,
                  "shape %zu: info", s);
        size_t len = 0;
        unsigned char *bytes = slurp(path, &len);
        SDT_CHECK(len == (size_t)(40 + 8 * (a.rows + 1) + 8 * a.nnz + 8), "shape %zu: %zu bytes",
                  s, len);
        sd_csr c;
        SDT_OK(sdi_sdm_read_mem(bytes, len, &c));
        SDT_CHECK(csr_equal(&a, &c), "shape %zu: memory read differs", s);
        /* The format is what the bytes say: an .sdm named .mtx still reads. */
        char other[256];
        snprintf(other, sizeof other, "%s/really_sdm.mtx", g_dir);
        FILE *f = fopen(other, "wb");
        fwrite(bytes, 1, len, f);
        fclose(f);
        sd_csr d;
        SDT_OK(sd_csr_read(other, &d));
        SDT_CHECK(csr_equal(&a, &d), "shape %zu: magic dispatch", s);
        /* .mtx → .sdm → .mtx conversions agree. */
        char mtx[256];
        snprintf(mtx, sizeof mtx, "%s/rt.mtx", g_dir);
        sd_csr e;
        SDT_OK(sd_csr_write(mtx, &c));
        SDT_OK(sd_csr_read(mtx, &e));
        SDT_CHECK(csr_equal(&a, &e), "shape %zu: via .mtx", s);
        free(bytes);
        sd_csr_free(&a);
        sd_csr_free(&b);
        sd_csr_free(&c);
        sd_csr_free(&d);
        sd_csr_free(&e);
        unlink(path);
        unlink(other);
        unlink(mtx);
    }
}

/* tests/data/small.sdm was written by this library; its bytes pin the format. */
static void test_golden_file(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/small.sdm", SD_TEST_DATA_DIR);
    size_t len = 0;
    unsigned char *b = slurp(path, &len);
    SDT_CHECK(b != NULL && len == 40 + 8 * 4 + 8 * 5 + 8, "golden file size %zu", len);
    if (b == NULL || len != 120) {
        free(b);
        return;
    }
    SDT_CHECK(memcmp(b, "SDMATRX\0", 8) == 0, "magic");
    uint32_t version, flags;
    int64_t dims[3];
    memcpy(&version, b + 8, 4);
    memcpy(&flags, b + 12, 4);
    memcpy(dims, b + 16, sizeof dims);
    SDT_CHECK(version == 1 && flags == 0, "version %u flags %u", version, flags);
    SDT_CHECK(dims[0] == 3 && dims[1] == 4 && dims[2] == 5, "sizes");
    uint64_t stored;
    memcpy(&stored, b + len - 8, 8);
    SDT_CHECK(stored == XXH3_64bits(b, len - 8), "checksum is XXH3-64 of the bytes before it");
    sd_csr a;
    SDT_OK(sd_csr_read(path, &a));
    int64_t rp[] = {0, 2, 2, 5};
    int32_t ci[] = {0, 3, 0, 1, 3};
    float v[] = {1.0f, -2.5f, 0.0f, 3.25f, 1e-3f};
    SDT_CHECK(a.rows == 3 && a.cols == 4 && a.nnz == 5 &&
                  memcmp(a.rowptr, rp, sizeof rp) == 0 && memcmp(a.colind, ci, sizeof ci) == 0 &&
                  memcmp(a.vals, v, sizeof v) == 0,
              "golden contents");
    sd_csr_free(&a);
    free(b);
}

static void expect_bad(const unsigned char *b, size_t len, const char *frag, const char *what)
{
    long long live0 = sdi_alloc_live_bytes();
    sd_csr a;
    memset(&a, 0x5a, sizeof a);
    sd_status s = sdi_sdm_read_mem(b, len, &a);
    SDT_CHECK(s == SD_ERR_PARSE && strstr(sd_last_error(), frag) != NULL,
              "%s: %s: '%s' (wanted '%s')", what, sd_status_string(s), sd_last_error(), frag);
    SDT_CHECK(a.rowptr == NULL && a.colind == NULL && a.vals == NULL && a.rows == 0 &&
                  a.nnz == 0,
              "%s: not zeroed", what);
    SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s: leak", what);
}

/* Rewrites the checksum so that only the structure is wrong. */
static void reseal(unsigned char *b, size_t len)
{
    uint64_t h = XXH3_64bits(b, len - 8);
    memcpy(b + len - 8, &h, 8);
}

static void test_corruption(void)
{
    g_rng = sdt_seed * 5 + 1;
    sd_csr a;
    random_csr(&a, 30, 20, 4);
    char path[256];
    snprintf(path, sizeof path, "%s/c.sdm", g_dir);
    SDT_OK(sd_csr_write(path, &a));
    size_t len = 0;
    unsigned char *good = slurp(path, &len);
    unsigned char *b = malloc(len + 16);
    /* every truncation, and trailing bytes */
    for (size_t cut = 0; cut < len; cut++)
        expect_bad(good, cut, cut < 40 ? (cut < 8 ? "shorter" : "shorter than") : "implies",
                   "truncated");
    memcpy(b, good, len);
    b[len] = 0;
    expect_bad(b, len + 1, "trailing data", "one byte more");
    /* header fields */
    memcpy(b, good, len);
    b[0] = 'X';
    expect_bad(b, len, "bad magic", "magic");
    memcpy(b, good, len);
    b[8] = 2;
    expect_bad(b, len, "version 2", "version");
    memcpy(b, good, len);
    b[12] = 1;
    expect_bad(b, len, "flags", "flags");
    memcpy(b, good, len);
    int64_t neg = -1;
    memcpy(b + 16, &neg, 8);
    expect_bad(b, len, "bad sizes", "negative rows");
    memcpy(b, good, len);
    int64_t huge = INT64_MAX;
    memcpy(b + 32, &huge, 8);
    expect_bad(b, len, "more than 2^64", "huge nnz");
    memcpy(b, good, len);
    int64_t big_rows = (int64_t)1 << 40;
    memcpy(b + 16, &big_rows, 8);
    expect_bad(b, len, "bad sizes", "rows beyond int32");
    /* any flipped bit in the body: the checksum catches it */
    for (size_t pos = 40; pos < len; pos++) {
        memcpy(b, good, len);
        b[pos] ^= (unsigned char)(1u << (pos % 8));
        expect_bad(b, len, "checksum mismatch", "flipped bit");
    }
    /* valid checksum, bad structure */
    size_t rp0 = 40, ci0 = 40 + 8 * 31, v0 = ci0 + 4 * (size_t)a.nnz;
    memcpy(b, good, len);
    int64_t x = 5;
    memcpy(b + rp0, &x, 8); /* rowptr[0] = 5 */
    reseal(b, len);
    expect_bad(b, len, "corrupt .sdm data: rowptr[0]", "rowptr[0]");
    memcpy(b, good, len);
    int32_t col = 20; /* column out of range */
    memcpy(b + ci0, &col, 4);
    reseal(b, len);
    expect_bad(b, len, "out of range", "column range");
    memcpy(b, good, len);
    int32_t c0, c1;
    memcpy(&c0, b + ci0, 4);
    memcpy(&c1, b + ci0 + 4, 4);
    memcpy(b + ci0, &c1, 4); /* swap the first row's first two columns */
    memcpy(b + ci0 + 4, &c0, 4);
    reseal(b, len);
    expect_bad(b, len, "not sorted or duplicated", "unsorted");
    memcpy(b, good, len);
    float nanv = NAN;
    memcpy(b + v0 + 8, &nanv, 4);
    reseal(b, len);
    expect_bad(b, len, "not finite", "NaN value");
    memcpy(b, good, len);
    int64_t mid;
    memcpy(&mid, b + rp0 + 8 * 10, 8);
    mid = 1000; /* a row pointer beyond nnz */
    memcpy(b + rp0 + 8 * 10, &mid, 8);
    reseal(b, len);
    expect_bad(b, len, "corrupt .sdm data", "rowptr beyond nnz");
    /* through a file: the message starts with the path */
    FILE *f = fopen(path, "wb");
    fwrite(good, 1, len - 3, f);
    fclose(f);
    sd_csr r;
    SDT_STATUS(sd_csr_read(path, &r), SD_ERR_PARSE);
    SDT_CHECK(strncmp(sd_last_error(), path, strlen(path)) == 0 &&
                  strstr(sd_last_error(), "truncated"),
              "file message '%s'", sd_last_error());
    free(b);
    free(good);
    sd_csr_free(&a);
    unlink(path);
}

static void test_fault_injection(void)
{
    g_rng = 99;
    sd_csr a;
    random_csr(&a, 50, 50, 3);
    char path[256];
    snprintf(path, sizeof path, "%s/fi.sdm", g_dir);
    long long live0 = sdi_alloc_live_bytes();
    int k;
    for (k = 0; k < 100; k++) {
        sdi_alloc_fail_after(k);
        sd_status s = sd_csr_write(path, &a);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK)
            break;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY && access(path, F_OK) != 0,
                  "write after %d: %s", k, sd_last_error());
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "write leak after %d", k);
    }
    SDT_CHECK(k > 0 && k < 100, "write sweep ended at %d", k);
    for (k = 0; k < 100; k++) {
        sd_csr b;
        sdi_alloc_fail_after(k);
        sd_status s = sd_csr_read(path, &b);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            SDT_CHECK(csr_equal(&a, &b), "read after %d failures", k);
            sd_csr_free(&b);
            break;
        }
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY && b.rowptr == NULL, "read after %d: %s", k,
                  sd_last_error());
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "read leak after %d", k);
    }
    SDT_CHECK(k > 0 && k < 100, "read sweep ended at %d", k);
    unlink(path);
    sd_csr_free(&a);
}

/* An .sdm needs its length before allocating (the header is checked against it): from
 * a pipe or a FIFO it is refused by name; standard input that is a regular file reads,
 * from where it stands. */
static void test_streams(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/small.sdm", SD_TEST_DATA_DIR);
    size_t len = 0;
    unsigned char *b = slurp(path, &len);
    SDT_CHECK(b != NULL, "cannot read %s", path);
    if (b == NULL)
        return;
    sd_csr ref, a;
    SDT_OK(sd_csr_read(path, &ref));
    long long live0 = sdi_alloc_live_bytes();
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/in.fifo", g_dir);
    for (int via = 0; via < 3; via++) {
        sdt_pipe p = via == 2 ? sdt_fifo_from(fifo, b, len) : sdt_pipe_from(b, len);
        sd_status s = SD_ERR_INTERNAL;
        if (via == 1)
            SDT_WITH_STDIN(p, s = sd_csr_read("-", &a));
        else
            s = sd_csr_read(p.path, &a);
        const char *m = sd_last_error(), *name = via == 1 ? "standard input" : p.path;
        SDT_CHECK(s == SD_ERR_UNSUPPORTED && strstr(m, ".sdm files must be regular files") &&
                      strstr(m, "a pipe") && strncmp(m, name, strlen(name)) == 0,
                  "via %d: %s: %s", via, sd_status_string(s), m);
        sdt_pipe_done(&p);
        SDT_CHECK(a.rowptr == NULL && a.nnz == 0, "via %d: not zeroed", via);
    }
    /* Standard input redirected from a file, part of which was read already. */
    char shifted[64];
    snprintf(shifted, sizeof shifted, "%s/shifted.bin", g_dir);
    FILE *f = fopen(shifted, "wb");
    SDT_CHECK(f != NULL && fwrite("junk!", 1, 5, f) == 5 && fwrite(b, 1, len, f) == len &&
                  fclose(f) == 0,
              "write %s", shifted);
    int fd = open(shifted, O_RDONLY);
    SDT_CHECK(fd >= 0 && lseek(fd, 5, SEEK_SET) == 5, "open %s", shifted);
    sdt_pipe p = {fd, -1, ""};
    sd_status s = SD_ERR_INTERNAL;
    SDT_WITH_STDIN(p, s = sd_csr_read("-", &a));
    SDT_CHECK(s == SD_OK, "stdin from a file: %s", sd_last_error());
    if (s == SD_OK) {
        SDT_CHECK(a.rows == ref.rows && a.nnz == ref.nnz &&
                      memcmp(a.colind, ref.colind, (size_t)a.nnz * 4) == 0,
                  "stdin from a file: different matrix");
        sd_csr_free(&a);
    }
    sdt_pipe_done(&p);
    unlink(shifted);
    SDT_CHECK(sdi_alloc_live_bytes() == live0, "leak");
    sd_csr_free(&ref);
    free(b);
}

int main(void)
{
    sdt_init("test_sdm");
    if (mkdtemp(g_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    SDT_RUN(test_round_trip);
    SDT_RUN(test_golden_file);
    SDT_RUN(test_corruption);
    SDT_RUN(test_fault_injection);
    SDT_RUN(test_streams);
    rmdir(g_dir);
    return sdt_finish();
}
