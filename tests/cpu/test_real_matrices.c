/* tests/cpu/test_real_matrices.c: every matrix of SD_MATRICES_DIR/suitesparse/INDEX.tsv
 * read and checked against the index (rows, cols, stored entries, symmetry, field; a
 * complex one must be SD_ERR_UNSUPPORTED), sd_csr_check, nnz consistent with the
 * symmetry, and a bit-exact round trip through .sdm, .mtx text and small read blocks. */
#include <unistd.h>

#include "core/io.h"
#include "sdt.h"

static bool csr_equal(const sd_csr *a, const sd_csr *b)
{
    return sdi_csr_same_pattern(a, b) &&
           (a->nnz == 0 || memcmp(a->vals, b->vals, (size_t)a->nnz * sizeof(float)) == 0);
}

/* Splits a TSV line in place into at most n fields; returns the count. */
static int split_tsv(char *line, char **f, int n)
{
    int k = 0;
    char *p = line;
    while (k < n) {
        f[k++] = p;
        char *t = strchr(p, '\t');
        if (t == NULL)
            break;
        *t = '\0';
        p = t + 1;
    }
    char *nl = strpbrk(f[k - 1], "\r\n");
    if (nl != NULL)
        *nl = '\0';
    return k;
}

static int g_checked, g_unsupported;
static char g_dir[] = "/tmp/sd_test_real_XXXXXX";

static void check_matrix(const char *dir, char **f)
{
    const char *name = f[0];
    long long rows = atoll(f[2]), cols = atoll(f[3]), stored = atoll(f[4]);
    const char *sym = f[5], *field = f[6];
    char path[1024];
    if (snprintf(path, sizeof path, "%s/%s.mtx.gz", dir, name) >= (int)sizeof path) {
        SDT_CHECK(0, "%s: path too long", name);
        return;
    }
    long long live0 = sdi_alloc_live_bytes();
    sd_csr a;
    sdi_mtx_info in;
    sd_status s = sdi_csr_read_info(path, &a, &in);
    if (strcmp(field, "complex") == 0) {
        SDT_CHECK(s == SD_ERR_UNSUPPORTED && strstr(sd_last_error(), "complex"),
                  "%s: complex gives %s: %s", name, sd_status_string(s), sd_last_error());
        SDT_CHECK(a.rowptr == NULL && sdi_alloc_live_bytes() == live0, "%s: zeroed", name);
        g_unsupported++;
        return;
    }
    SDT_CHECK(s == SD_OK, "%s: %s", name, sd_last_error());
    if (s != SD_OK)
        return;
    g_checked++;
    SDT_CHECK(a.rows == rows && a.cols == cols, "%s: %d x %d, index says %lld x %lld", name,
              a.rows, a.cols, rows, cols);
    SDT_CHECK(in.nnz_stored == stored, "%s: %lld stored entries, index says %lld", name,
              (long long)in.nnz_stored, stored);
    SDT_CHECK(strcmp(sdi_mtx_symmetry_name(in.symmetry), sym) == 0, "%s: symmetry %s vs %s",
              name, sdi_mtx_symmetry_name(in.symmetry), sym);
    SDT_CHECK(strcmp(sdi_mtx_field_name(in.field), field) == 0, "%s: field %s vs %s", name,
              sdi_mtx_field_name(in.field), field);
    SDT_CHECK(in.gzip, "%s: gzip not detected", name);
    SDT_OK(sd_csr_check(&a));
    /* nnz after expansion: general ≤ stored; mirrored = 2·stored − diagonal − merged. */
    int64_t diag = 0;
    for (int32_t i = 0; i < a.rows; i++)
        for (int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; k++)
            diag += a.colind[k] == i;
    if (in.symmetry == SDI_MTX_GENERAL)
        SDT_CHECK(a.nnz + in.n_duplicates == stored, "%s: nnz %lld + dups %lld != %lld", name,
                  (long long)a.nnz, (long long)in.n_duplicates, stored);
    else
        SDT_CHECK(a.nnz + in.n_duplicates + diag >= 2 * stored - diag &&
                      a.nnz <= 2 * stored,
                  "%s: nnz %lld inconsistent with %lld stored", name, (long long)a.nnz, stored);
    if (in.symmetry == SDI_MTX_SYMMETRIC || in.symmetry == SDI_MTX_SKEW_SYMMETRIC) {
        /* the expansion is symmetric (or antisymmetric) in pattern and values */
        sd_csr t;
        SDT_OK(sdi_csr_transpose(&a, &t));
        bool same = sdi_csr_same_pattern(&a, &t);
        for (int64_t k = 0; same && k < a.nnz; k++)
            same = in.symmetry == SDI_MTX_SYMMETRIC ? a.vals[k] == t.vals[k]
                                                    : a.vals[k] == -t.vals[k];
        SDT_CHECK(same, "%s: expansion is not %s", name, sym);
        sd_csr_free(&t);
    }
    /* .sdm round trip (all), .mtx text round trip (up to 200k entries) */
    char out[512];
    if (snprintf(out, sizeof out, "%s/%s.sdm", g_dir, name) >= (int)sizeof out) {
        SDT_CHECK(0, "%s: name too long", name);
        sd_csr_free(&a);
        return;
    }
    sd_csr b;
    SDT_OK(sd_csr_write(out, &a));
    SDT_OK(sd_csr_read(out, &b));
    SDT_CHECK(csr_equal(&a, &b), "%s: .sdm round trip differs", name);
    sd_csr_free(&b);
    unlink(out);
    if (a.nnz <= 200000) {
        (void)!snprintf(out, sizeof out, "%s/%s.mtx", g_dir, name); /* shorter than the .sdm name */
        SDT_OK(sd_csr_write(out, &a));
        SDT_OK(sd_csr_read(out, &b));
        SDT_CHECK(csr_equal(&a, &b), "%s: .mtx round trip differs", name);
        sd_csr_free(&b);
        unlink(out);
    }
    sd_csr_free(&a);
    SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s: leak", name);
}

/* Small read blocks over real gzip files: the same matrix. */
static void check_blocks(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.mtx.gz", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n);
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    sd_csr a, b;
    SDT_OK(sd_csr_read(path, &a));
    const size_t blocks[] = {1000, 4093, 65536};
    for (int k = 0; k < 3; k++) {
        SDT_OK(sdi_mtx_read_mem(buf, got, blocks[k], &b, NULL));
        SDT_CHECK(csr_equal(&a, &b), "%s: block %zu differs", name, blocks[k]);
        sd_csr_free(&b);
    }
    sd_csr_free(&a);
    free(buf);
}

static const char *g_matdir;

static void test_index(void)
{
    char index[1024];
    snprintf(index, sizeof index, "%s/INDEX.tsv", g_matdir);
    FILE *f = fopen(index, "r");
    SDT_CHECK(f != NULL, "cannot open %s", index);
    if (f == NULL)
        return;
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (lineno++ == 0)
            continue; /* header */
        char *fields[12];
        if (split_tsv(line, fields, 12) < 7)
            continue;
        check_matrix(g_matdir, fields);
    }
    fclose(f);
    printf("# %d matrices checked, %d complex ones refused\n", g_checked, g_unsupported);
    SDT_CHECK(g_checked > 0, "no matrix checked");
    check_blocks(g_matdir, "bcsstk13");
    check_blocks(g_matdir, "plsk1919");
    check_blocks(g_matdir, "Franz6");
}

int main(void)
{
    sdt_init("test_real_matrices");
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/suitesparse", SD_MATRICES_DIR);
    g_matdir = dir;
    char index[1100];
    snprintf(index, sizeof index, "%s/INDEX.tsv", dir);
    if (access(index, R_OK) != 0)
        return sdt_skip("no SD_MATRICES_DIR/suitesparse/INDEX.tsv (shared matrices missing)");
    if (mkdtemp(g_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    SDT_RUN(test_index);
    rmdir(g_dir);
    return sdt_finish();
}
