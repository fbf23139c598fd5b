/* tests/cpu/test_reorder.c: graph reorderings (rabbit, rcm, degree) are permutations and
 * preserve the matrix; each does its job on matrices with a known good order (disjoint
 * cliques, shuffled grids, skewed rows); permutation files; the `reorder` command. */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/reorder.h"
#include "formats/spmm_formats.h"
#include "gen/gen.h"
#include "sdt.h"

static const char *const specs[] = {
    "stencil2d:n=17",         "banded:n=400,bw=6,fill=0.5", "uniform:rows=500,cols=230,deg=5",
    "uniform:rows=60,cols=700,deg=20", "powerlaw:rows=800,deg=5", "rmat:scale=10,ef=6",
    "knn:n=600,k=5",          "bimodal:rows=300,short=2,long=120,frac=0.05",
};
#define NSPECS ((int)(sizeof specs / sizeof specs[0]))

static uint64_t rng_state;
static uint32_t rng_next(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

static int32_t *random_perm(int32_t n)
{
    int32_t *p = sdi_malloc_array(n > 0 ? (size_t)n : 1, sizeof *p);
    if (p == NULL)
        return NULL;
    for (int32_t i = 0; i < n; i++)
        p[i] = i;
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)(rng_next() % (uint32_t)(i + 1));
        int32_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    return p;
}

/* Value of a(i, j) or NAN when absent (binary search in the sorted row). */
static float entry(const sd_csr *a, int32_t i, int32_t j)
{
    int64_t lo = a->rowptr[i], hi = a->rowptr[i + 1];
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (a->colind[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < a->rowptr[i + 1] && a->colind[lo] == j) ? a->vals[lo] : NAN;
}

/* out(i, j) = a(pr[i], pc[j]) for every entry, equal nnz, canonical. */
static void check_permuted(const sd_csr *a, const sd_csr *out, const int32_t *pr,
                           const int32_t *pc, const char *label)
{
    SDT_OK(sd_csr_check(out));
    SDT_CHECK(out->rows == a->rows && out->cols == a->cols && out->nnz == a->nnz,
              "%s: sizes changed", label);
    int bad = 0;
    for (int32_t i = 0; i < out->rows && !bad; i++)
        for (int64_t k = out->rowptr[i]; k < out->rowptr[i + 1] && !bad; k++) {
            int32_t oi = pr ? pr[i] : i, oj = pc ? pc[out->colind[k]] : out->colind[k];
            float v = entry(a, oi, oj);
            if (!(v == out->vals[k]))
                bad = 1;
        }
    SDT_CHECK(!bad, "%s: an entry moved or changed", label);
}

static int64_t bandwidth(const sd_csr *a)
{
    int64_t bw = 0;
    for (int32_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int64_t d = (int64_t)a->colind[k] - i;
            if (d < 0)
                d = -d;
            if (d > bw)
                bw = d;
        }
    return bw;
}

static void test_methods_preserve_matrix(void)
{
    for (int m = 0; m < NSPECS; m++) {
        sd_csr a;
        sd_status s = sdi_gen(specs[m], sdt_seed + (unsigned)m, &a);
        SDT_CHECK(s == SD_OK, "%s: %s", specs[m], sd_last_error());
        if (s != SD_OK)
            continue;
        sdi_gen_values(&a, SDI_VALUES_SMALL_INT, sdt_seed + 3u);
        for (int meth = 0; meth < SDI_REORDER_NMETHODS; meth++) {
            char label[160];
            snprintf(label, sizeof label, "%s --method %s", specs[m],
                     sdi_reorder_method_name(meth));
            int32_t *pr = NULL, *pc = NULL;
            s = sdi_reorder(&a, meth, &pr, &pc);
            SDT_CHECK(s == SD_OK, "%s: %s", label, sd_last_error());
            if (s != SD_OK)
                continue;
            SDT_OK(sdi_perm_check(pr, a.rows));
            if (a.rows == a.cols) {
                SDT_CHECK(pc != NULL && memcmp(pr, pc, (size_t)a.rows * 4) == 0,
                          "%s: square matrices get one symmetric permutation", label);
            } else {
                SDT_CHECK(pc == NULL, "%s: rectangular matrices permute rows only", label);
            }
            sd_csr out, back;
            s = sdi_csr_permute(&a, pr, pc, &out);
            SDT_CHECK(s == SD_OK, "%s: permute: %s", label, sd_last_error());
            if (s == SD_OK) {
                check_permuted(&a, &out, pr, pc, label);
                /* Undo with the inverses: the original, exactly. */
                int32_t *ir = NULL, *ic = NULL;
                SDT_OK(sdi_perm_invert(pr, a.rows, &ir));
                if (pc)
                    SDT_OK(sdi_perm_invert(pc, a.cols, &ic));
                if (sdi_csr_permute(&out, ir, ic, &back) == SD_OK) {
                    SDT_CHECK(sdi_csr_same_pattern(&a, &back) &&
                                  memcmp(a.vals, back.vals, (size_t)a.nnz * 4) == 0,
                              "%s: inverse permutation does not restore the matrix", label);
                    /* PR_2 depends on row lengths only: a permutation keeps it. */
                    SDT_CHECK(sdi_pcsr_padding_ratio(&a, 2) == sdi_pcsr_padding_ratio(&out, 2),
                              "%s: PR_2 changed", label);
                    sd_csr_free(&back);
                }
                sdi_free(ir);
                sdi_free(ic);
                sd_csr_free(&out);
            }
            if (meth == SDI_REORDER_DEGREE)
                for (int32_t i = 0; i + 1 < a.rows; i++) {
                    int64_t l0 = a.rowptr[pr[i] + 1] - a.rowptr[pr[i]];
                    int64_t l1 = a.rowptr[pr[i + 1] + 1] - a.rowptr[pr[i + 1]];
                    if (l0 < l1 || (l0 == l1 && pr[i] > pr[i + 1])) {
                        SDT_CHECK(0, "%s: degree order broken at %d", label, i);
                        break;
                    }
                }
            sdi_free(pr);
            sdi_free(pc);
        }
        sd_csr_free(&a);
    }
}

/* Disjoint 8-cliques, vertices shuffled: Rabbit order must gather each clique. */
static void test_rabbit_finds_communities(void)
{
    rng_state = sdt_seed;
    const int32_t n = 8 * 64;
    sd_csr a, shuffled, out;
    SDT_OK(sdi_gen("blockdiag:n=512,b=8", sdt_seed, &a));
    int32_t *p = random_perm(n);
    SDT_OK(sdi_csr_permute(&a, p, p, &shuffled));
    SDT_CHECK(bandwidth(&shuffled) > 64, "shuffle kept the blocks together");
    int32_t *pr = NULL, *pc = NULL;
    SDT_OK(sdi_reorder(&shuffled, SDI_REORDER_RABBIT, &pr, &pc));
    if (pr != NULL) {
        SDT_OK(sdi_csr_permute(&shuffled, pr, pc, &out));
        SDT_CHECK(bandwidth(&out) < 8, "rabbit order bandwidth %lld (cliques of 8 are not "
                  "contiguous)", (long long)bandwidth(&out));
        sd_csr_free(&out);
    }
    sdi_free(pr);
    sdi_free(pc);
    sdi_free(p);
    sd_csr_free(&shuffled);
    sd_csr_free(&a);
}

/* A shuffled 2-D grid: RCM brings the bandwidth back near the grid width. */
static void test_rcm_bandwidth(void)
{
    rng_state = sdt_seed + 1;
    sd_csr a, shuffled, out;
    SDT_OK(sdi_gen("stencil2d:n=30", sdt_seed, &a));
    int32_t *p = random_perm(a.rows);
    SDT_OK(sdi_csr_permute(&a, p, p, &shuffled));
    int32_t *pr = NULL, *pc = NULL;
    SDT_OK(sdi_reorder(&shuffled, SDI_REORDER_RCM, &pr, &pc));
    if (pr != NULL) {
        SDT_OK(sdi_csr_permute(&shuffled, pr, pc, &out));
        int64_t bw = bandwidth(&out);
        SDT_CHECK(bw <= 2 * 30, "RCM bandwidth %lld on a 30x30 grid (shuffled: %lld)",
                  (long long)bw, (long long)bandwidth(&shuffled));
        sd_csr_free(&out);
    }
    sdi_free(pr);
    sdi_free(pc);
    sdi_free(p);
    sd_csr_free(&shuffled);
    sd_csr_free(&a);
}

static void test_edge_cases(void)
{
    /* 0×0, 1×1, all-empty rows, one isolated vertex: every method returns a permutation. */
    int64_t rp0[] = {0};
    sd_csr z = {0, 0, 0, rp0, NULL, NULL};
    int64_t rp1[] = {0, 1};
    int32_t c1[] = {0};
    float v1[] = {3};
    sd_csr one = {1, 1, 1, rp1, c1, v1};
    int64_t rp3[] = {0, 0, 0, 0};
    sd_csr empty = {3, 5, 0, rp3, NULL, NULL};
    const sd_csr *ms[] = {&z, &one, &empty};
    for (int m = 0; m < 3; m++)
        for (int meth = 0; meth < SDI_REORDER_NMETHODS; meth++) {
            int32_t *pr = NULL, *pc = NULL;
            SDT_OK(sdi_reorder(ms[m], meth, &pr, &pc));
            SDT_OK(sdi_perm_check(pr, ms[m]->rows));
            sd_csr out;
            if (sdi_csr_permute(ms[m], pr, pc, &out) == SD_OK) {
                SDT_CHECK(out.nnz == ms[m]->nnz, "edge %d: nnz", m);
                sd_csr_free(&out);
            }
            sdi_free(pr);
            sdi_free(pc);
        }
    /* Bad permutations are named. */
    int32_t bad[] = {0, 0, 2};
    sd_csr out;
    SDT_STATUS(sdi_csr_permute(&empty, bad, NULL, &out), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "entry 1") != NULL, "message '%s'", sd_last_error());
    int32_t far[] = {0, 5, 1};
    SDT_STATUS(sdi_perm_check(far, 3), SD_ERR_INVALID_ARG);
    int32_t *pr = NULL;
    SDT_STATUS(sdi_reorder(&one, 7, &pr, NULL), SD_ERR_INVALID_ARG);
    SDT_CHECK(sdi_reorder_method_from_name("rcm") == SDI_REORDER_RCM, "name");
    SDT_CHECK(sdi_reorder_method_from_name("metis") == -1, "unknown name");
}

static void test_perm_files(void)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/sd_test_reorder_%ld.perm", (long)getpid());
    int32_t p[] = {3, 0, 2, 1};
    SDT_OK(sdi_perm_write(path, p, 4));
    int32_t *q = NULL, n = 0;
    SDT_OK(sdi_perm_read(path, &q, &n));
    SDT_CHECK(n == 4 && q && memcmp(p, q, sizeof p) == 0, "perm file round trip");
    sdi_free(q);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("0\n1\nx2\n", f);
        fclose(f);
        SDT_STATUS(sdi_perm_read(path, &q, &n), SD_ERR_PARSE);
        SDT_CHECK(strstr(sd_last_error(), "line 3") != NULL, "message '%s'", sd_last_error());
    }
    remove(path);
    SDT_STATUS(sdi_perm_read("/nonexistent/dir/x.perm", &q, &n), SD_ERR_IO);
}

/* The command: writes the matrix and OUT.perm; the result is the permuted input. */
static void test_cli(void)
{
    struct stat sb;
    if (stat(SD_CLI_PATH, &sb) != 0) {
        printf("  (no CLI binary at %s: command not checked)\n", SD_CLI_PATH);
        return;
    }
    char in[256], out[256], perm[300], cmd[1024];
    long pid = (long)getpid();
    snprintf(in, sizeof in, "/tmp/sd_reorder_in_%ld.mtx", pid);
    snprintf(out, sizeof out, "/tmp/sd_reorder_out_%ld.mtx", pid);
    snprintf(perm, sizeof perm, "%s.perm", out);
    sd_csr a;
    SDT_OK(sdi_gen("knn:n=300,k=4", sdt_seed, &a));
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 5);
    SDT_OK(sd_csr_write(in, &a));
    for (int meth = 0; meth < SDI_REORDER_NMETHODS; meth++) {
        snprintf(cmd, sizeof cmd, "%s reorder %s %s --method %s > /dev/null", SD_CLI_PATH, in,
                 out, sdi_reorder_method_name(meth));
        int rc = system(cmd);
        SDT_CHECK(rc == 0, "'%s' exited with %d", cmd, rc);
        sd_csr b;
        int32_t *p = NULL, n = 0;
        if (rc == 0 && sd_csr_read(out, &b) == SD_OK) {
            SDT_OK(sdi_perm_read(perm, &p, &n));
            SDT_CHECK(n == a.rows, "perm file has %d lines for %d rows", n, a.rows);
            if (n == a.rows) {
                check_permuted(&a, &b, p, p, "reorder command");
            }
            sdi_free(p);
            sd_csr_free(&b);
        }
    }
    /* Usage errors: unknown method → exit 2; missing file → exit 1. */
    snprintf(cmd, sizeof cmd, "%s reorder %s %s --method metis 2> /dev/null", SD_CLI_PATH, in, out);
    int rc = system(cmd);
    SDT_CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "unknown method: exit %d", WEXITSTATUS(rc));
    snprintf(cmd, sizeof cmd, "%s reorder /nonexistent.mtx %s 2> /dev/null", SD_CLI_PATH, out);
    rc = system(cmd);
    SDT_CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "missing input: exit %d", WEXITSTATUS(rc));
    remove(in);
    remove(out);
    remove(perm);
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_reorder");
    SDT_RUN(test_methods_preserve_matrix);
    SDT_RUN(test_rabbit_finds_communities);
    SDT_RUN(test_rcm_bandwidth);
    SDT_RUN(test_edge_cases);
    SDT_RUN(test_perm_files);
    SDT_RUN(test_cli);
    return sdt_finish();
}
