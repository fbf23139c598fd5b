/* tests/cpu/test_gen.c: the synthetic generators: determinism (seed, thread count),
 * canonical output, exact sizes of the structured families, symmetry, the statistics
 * of the random families, kNN against brute force, values, twins (a private table and,
 * when present, paper60.tsv), bad specs and allocation failures. Exit 77 (skipped) when
 * paper60.tsv is missing, after running everything else. */
#include <omp.h>
#include <unistd.h>

#include "core/io.h"
#include "gen/gen.h"
#include "sdt.h"

static bool same_csr(const sd_csr *a, const sd_csr *b)
{
    return sdi_csr_same_pattern(a, b) &&
           (a->nnz == 0 || memcmp(a->vals, b->vals, sizeof(float) * (size_t)a->nnz) == 0);
}

static bool is_symmetric(const sd_csr *a)
{
    sd_csr t;
    if (a->rows != a->cols || sdi_csr_transpose(a, &t) != SD_OK)
        return false;
    bool ok = sdi_csr_same_pattern(a, &t);
    sd_csr_free(&t);
    return ok;
}

static sd_status gen(const char *spec, uint64_t seed, sd_csr *out)
{
    sd_status s = sdi_gen(spec, seed, out);
    if (s == SD_OK && sd_csr_check(out) != SD_OK) {
        fprintf(stderr, "  %s: not canonical: %s\n", spec, sd_last_error());
        return SD_ERR_INTERNAL;
    }
    return s;
}

static const char *all_specs[] = {
    "stencil2d:n=20",         "stencil2d:nx=7,ny=3",     "stencil3d7:n=6",
    "stencil3d27:nx=5,ny=4,nz=3", "banded:n=300,bw=7,fill=0.4", "blockdiag:n=100,b=7",
    "uniform:rows=300,cols=200,nnz=3000", "uniform:rows=50,cols=900,deg=40",
    "powerlaw:rows=2000,cols=500,deg=6", "bimodal:rows=800,cols=3000",
    "rmat:scale=9,ef=8",      "rmat:scale=8,ef=4,sym=1", "knn:n=900,k=5",
    "knn:n=700,k=7,dim=3,sym=0", "uniform:rows=1,cols=1,nnz=1", "stencil2d:n=1"};
static const int nspecs = (int)(sizeof all_specs / sizeof all_specs[0]);

/* Same seed → identical; another seed → different; 1 or 3 threads → identical. */
static void test_determinism(void)
{
    int saved = omp_get_max_threads();
    for (int k = 0; k < nspecs; k++) {
        sd_csr a, b, c, d;
        omp_set_num_threads(1);
        SDT_OK(gen(all_specs[k], sdt_seed, &a));
        omp_set_num_threads(3);
        SDT_OK(gen(all_specs[k], sdt_seed, &b));
        SDT_OK(gen(all_specs[k], sdt_seed + 1, &c));
        omp_set_num_threads(saved);
        SDT_OK(gen(all_specs[k], sdt_seed, &d));
        SDT_CHECK(same_csr(&a, &b), "%s: 1 vs 3 threads differ", all_specs[k]);
        SDT_CHECK(same_csr(&a, &d), "%s: same seed differs", all_specs[k]);
        if (a.nnz > 1)
            SDT_CHECK(!same_csr(&a, &c), "%s: another seed gives the same matrix",
                      all_specs[k]);
        sd_csr_free(&a);
        sd_csr_free(&b);
        sd_csr_free(&c);
        sd_csr_free(&d);
    }
}

static void expect_nnz(const char *spec, int32_t rows, int32_t cols, int64_t nnz)
{
    sd_csr a;
    SDT_OK(gen(spec, sdt_seed, &a));
    SDT_CHECK(a.rows == rows && a.cols == cols && a.nnz == nnz,
              "%s: %d x %d nnz %lld, want %d x %d nnz %lld", spec, a.rows, a.cols,
              (long long)a.nnz, rows, cols, (long long)nnz);
    sd_csr_free(&a);
}

static void test_structured_sizes(void)
{
    expect_nnz("stencil2d:nx=7,ny=5", 35, 35, 5 * 35 - 2 * 7 - 2 * 5);
    expect_nnz("stencil2d:n=64", 4096, 4096, 5 * 4096 - 4 * 64);
    expect_nnz("stencil2d:n=1", 1, 1, 1);
    expect_nnz("stencil3d7:n=6", 216, 216, 7 * 216 - 6 * 36);
    expect_nnz("stencil3d7:nx=4,ny=3,nz=2", 24, 24, 7 * 24 - 2 * (3 * 2 + 4 * 2 + 4 * 3));
    expect_nnz("stencil3d27:n=5", 125, 125, 13 * 13 * 13);
    expect_nnz("stencil3d27:nx=4,ny=3,nz=2", 24, 24, 10 * 7 * 4);
    expect_nnz("banded:n=10,bw=2", 10, 10, 10 * 5 - 2 * 3);
    expect_nnz("banded:n=5,bw=0", 5, 5, 5);
    expect_nnz("blockdiag:n=10,b=4", 10, 10, 16 + 16 + 4);
    expect_nnz("blockdiag:n=12,b=12", 12, 12, 144);
    /* The 5-point row of grid point (1, 1) on a 4 x 3 grid. */
    sd_csr a;
    SDT_OK(gen("stencil2d:nx=4,ny=3", sdt_seed, &a));
    int32_t want[] = {1, 4, 5, 6, 9};
    SDT_CHECK(a.rowptr[6] - a.rowptr[5] == 5 &&
                  memcmp(a.colind + a.rowptr[5], want, sizeof want) == 0,
              "row 5 of the 4 x 3 grid");
    SDT_CHECK(is_symmetric(&a), "stencil2d symmetric");
    sd_csr_free(&a);
    const char *sym[] = {"stencil3d7:nx=5,ny=4,nz=3", "stencil3d27:n=6",
                         "banded:n=500,bw=9,fill=0.3", "blockdiag:n=50,b=6",
                         "rmat:scale=9,sym=1", "knn:n=1000,k=6", "knn:n=500,k=4,dim=3"};
    for (size_t k = 0; k < sizeof sym / sizeof sym[0]; k++) {
        SDT_OK(gen(sym[k], sdt_seed, &a));
        SDT_CHECK(is_symmetric(&a), "%s: not symmetric", sym[k]);
        sd_csr_free(&a);
    }
    /* banded with fill < 1: diagonal always, nothing beyond bw, about fill kept */
    SDT_OK(gen("banded:n=2000,bw=10,fill=0.25", sdt_seed, &a));
    int64_t diag = 0, outside = 0;
    for (int32_t i = 0; i < a.rows; i++)
        for (int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; k++) {
            diag += a.colind[k] == i;
            outside += abs(a.colind[k] - i) > 10;
        }
    double kept = (double)(a.nnz - 2000) / (2000.0 * 20 - 110);
    SDT_CHECK(diag == 2000 && outside == 0 && kept > 0.22 && kept < 0.28,
              "banded: diag %lld outside %lld kept %.3f", (long long)diag, (long long)outside,
              kept);
    sd_csr_free(&a);
}

static void test_random_families(void)
{
    sd_csr a;
    sdi_row_stats st;
    /* uniform: exact nnz, shapes, the dense limit */
    expect_nnz("uniform:rows=300,cols=200,nnz=3000", 300, 200, 3000);
    expect_nnz("uniform:rows=10,cols=10,nnz=100", 10, 10, 100);
    expect_nnz("uniform:rows=10,cols=10,nnz=0", 10, 10, 0);
    expect_nnz("uniform:rows=100,cols=7,deg=3.5", 100, 7, 350);
    expect_nnz("uniform:rows=20000,cols=30,nnz=300000", 20000, 30, 300000);
    SDT_OK(gen("uniform:rows=5000,cols=100000,deg=20", sdt_seed, &a));
    sdi_csr_row_stats(&a, &st);
    /* binomial-like row lengths: CV about 1/sqrt(20) */
    SDT_CHECK(a.nnz == 100000 && st.cv > 0.18 && st.cv < 0.27, "uniform cv %.3f",
              st.cv);
    sd_csr_free(&a);
    /* powerlaw: the mean meets deg, the cap holds, the tail is heavy */
    SDT_OK(gen("powerlaw:rows=40000,cols=5000,deg=8,alpha=2.5,max=300", sdt_seed, &a));
    sdi_csr_row_stats(&a, &st);
    SDT_CHECK(fabs(st.mean - 8) < 0.4 && st.max <= 300 && st.max > 100 &&
                  st.cv > 0.8,
              "powerlaw mean %.2f max %lld cv %.2f", st.mean, (long long)st.max,
              st.cv);
    sd_csr_free(&a);
    /* bimodal: only two lengths, the long share near frac */
    SDT_OK(gen("bimodal:rows=4000,cols=1000,short=3,long=90,frac=0.1", sdt_seed, &a));
    int64_t nlong = 0, other = 0;
    for (int32_t i = 0; i < a.rows; i++) {
        int64_t l = a.rowptr[i + 1] - a.rowptr[i];
        nlong += l == 90;
        other += l != 90 && l != 3;
    }
    SDT_CHECK(other == 0 && nlong > 320 && nlong < 480, "bimodal: %lld long, %lld other",
              (long long)nlong, (long long)other);
    sd_csr_free(&a);
    /* rmat: sizes and skew */
    SDT_OK(gen("rmat:scale=12,ef=16", sdt_seed, &a));
    sdi_csr_row_stats(&a, &st);
    SDT_CHECK(a.rows == 4096 && a.cols == 4096 && a.nnz <= 16 * 4096 && a.nnz > 8 * 4096 &&
                  st.max > 10 * st.mean,
              "rmat nnz %lld max %lld mean %.1f", (long long)a.nnz, (long long)st.max,
              st.mean);
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ kNN oracle */

/* The points of knn.c rebuilt here, then the k nearest by brute force. */
static void knn_oracle(int64_t n, int k, int dim, uint64_t seed, int32_t *nbr)
{
    int64_t g = (int64_t)floor(pow((double)n / 2.0, 1.0 / dim));
    if (g < 1)
        g = 1;
    float *p = malloc(sizeof(float) * (size_t)(n * dim));
    int64_t *cell = malloc(sizeof(int64_t) * (size_t)n), *order = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t t = 0; t < n; t++) {
        sdi_rng r;
        sdi_rng_seed(&r, seed, SDI_STREAM_POINTS, (uint64_t)t);
        int64_t c = 0;
        for (int d = dim - 1; d >= 0; d--) {
            float x = (float)sdi_rng_uniform(&r);
            if (x >= 1.0f)
                x = 0x1.fffffep-1f;
            p[t * dim + d] = x;
            int64_t cc = (int64_t)(x * (double)g);
            c = c * g + (cc >= g ? g - 1 : cc);
        }
        cell[t] = c;
    }
    /* stable order by cell */
    int64_t m = 0;
    int64_t ncell = 1;
    for (int t = 0; t < dim; t++)
        ncell *= g;
    for (int64_t c = 0; c < ncell; c++)
        for (int64_t t = 0; t < n; t++)
            if (cell[t] == c)
                order[m++] = t;
    for (int64_t i = 0; i < n; i++) {
        double *bd = malloc(sizeof(double) * (size_t)k);
        int32_t *bi = malloc(sizeof(int32_t) * (size_t)k);
        int cnt = 0;
        for (int64_t j = 0; j < n; j++) {
            if (j == i)
                continue;
            double d = 0;
            for (int t = 0; t < dim; t++) {
                double diff = (double)p[order[j] * dim + t] - (double)p[order[i] * dim + t];
                d += diff * diff;
            }
            int pos = cnt < k ? cnt++ : k;
            if (pos == k && (d > bd[k - 1] || (d == bd[k - 1] && j > bi[k - 1])))
                continue;
            if (pos == k)
                pos = k - 1;
            while (pos > 0 && (bd[pos - 1] > d || (bd[pos - 1] == d && bi[pos - 1] > j))) {
                bd[pos] = bd[pos - 1];
                bi[pos] = bi[pos - 1];
                pos--;
            }
            bd[pos] = d;
            bi[pos] = (int32_t)j;
        }
        for (int q = 1; q < k; q++) /* sort ids */
            for (int r = q; r > 0 && bi[r - 1] > bi[r]; r--) {
                int32_t tmp = bi[r];
                bi[r] = bi[r - 1];
                bi[r - 1] = tmp;
            }
        memcpy(nbr + i * k, bi, sizeof(int32_t) * (size_t)k);
        free(bd);
        free(bi);
    }
    free(p);
    free(cell);
    free(order);
}

static void test_knn_exact(void)
{
    const struct {
        int n, k, dim;
    } cases[] = {{600, 6, 2}, {500, 10, 3}, {5, 8, 2}, {64, 1, 2}, {700, 9, 4}, {900, 12, 5},
                 {40, 6, 5}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char spec[96];
        snprintf(spec, sizeof spec, "knn:n=%d,k=%d,dim=%d,sym=0", cases[c].n, cases[c].k,
                 cases[c].dim);
        sd_csr a;
        SDT_OK(gen(spec, sdt_seed, &a));
        int k = cases[c].k < cases[c].n - 1 ? cases[c].k : cases[c].n - 1;
        int32_t *want = malloc(sizeof(int32_t) * (size_t)(cases[c].n * k + 1));
        knn_oracle(cases[c].n, k, cases[c].dim, sdt_seed, want);
        SDT_CHECK(a.nnz == (int64_t)cases[c].n * k &&
                      memcmp(a.colind, want, sizeof(int32_t) * (size_t)a.nnz) == 0,
                  "%s differs from brute force", spec);
        free(want);
        sd_csr_free(&a);
    }
    /* symmetrised: every row keeps at least its k nearest */
    sd_csr a;
    SDT_OK(gen("knn:n=3000,k=8", sdt_seed, &a));
    sdi_row_stats st;
    sdi_csr_row_stats(&a, &st);
    SDT_CHECK(st.min >= 8 && st.max < 40, "knn sym rows [%lld, %lld]",
              (long long)st.min, (long long)st.max);
    sd_csr_free(&a);
}

static void test_values(void)
{
    sd_csr a;
    SDT_OK(gen("uniform:rows=200,cols=200,nnz=8000,values=int", sdt_seed, &a));
    int counts[5] = {0};
    int bad = 0;
    for (int64_t k = 0; k < a.nnz; k++) {
        float v = a.vals[k];
        if (v != floorf(v) || v < -2 || v > 2)
            bad++;
        else
            counts[(int)v + 2]++;
    }
    SDT_CHECK(bad == 0, "%d non-small-integer values", bad);
    for (int q = 0; q < 5; q++)
        SDT_CHECK(counts[q] > 1400 && counts[q] < 1800, "value %d appears %d times", q - 2,
                  counts[q]);
    /* sdi_gen_values with the same seed reproduces the spec's values */
    sd_csr b;
    SDT_OK(sdi_csr_copy(&a, &b));
    sdi_gen_values(&b, SDI_VALUES_SMALL_INT, sdt_seed);
    SDT_CHECK(same_csr(&a, &b), "sdi_gen_values(int) differs from values=int");
    sdi_gen_values(&b, SDI_VALUES_ONES, sdt_seed);
    bad = 0;
    for (int64_t k = 0; k < b.nnz; k++)
        bad += b.vals[k] != 1.0f;
    SDT_CHECK(bad == 0, "ones");
    sd_csr_free(&b);
    sd_csr_free(&a);
    SDT_OK(gen("stencil2d:n=50", sdt_seed, &a));
    double sum = 0;
    bad = 0;
    for (int64_t k = 0; k < a.nnz; k++) {
        bad += !(a.vals[k] >= -1.0f && a.vals[k] < 1.0f);
        sum += a.vals[k];
    }
    SDT_CHECK(bad == 0 && fabs(sum / (double)a.nnz) < 0.05, "uniform values: %d out, mean %g",
              bad, sum / (double)a.nnz);
    sd_csr_free(&a);
    float x[1000], y[1000];
    sdi_gen_dense(x, 1000, SDI_VALUES_UNIFORM, 5);
    sdi_gen_dense(y, 1000, SDI_VALUES_UNIFORM, 5);
    SDT_CHECK(memcmp(x, y, sizeof x) == 0, "dense not deterministic");
    sdi_gen_dense(y, 1000, SDI_VALUES_UNIFORM, 6);
    SDT_CHECK(memcmp(x, y, sizeof x) != 0, "dense ignores the seed");
    sdi_gen_dense(y, 1000, SDI_VALUES_SMALL_INT, 6);
    bad = 0;
    for (int k = 0; k < 1000; k++)
        bad += y[k] != floorf(y[k]) || y[k] < -2 || y[k] > 2;
    SDT_CHECK(bad == 0, "dense int");
    sdi_values_mode m;
    SDT_OK(sdi_gen_values_mode_parse("ones", &m));
    SDT_CHECK(m == SDI_VALUES_ONES, "mode");
    SDT_STATUS(sdi_gen_values_mode_parse("normal", &m), SD_ERR_INVALID_ARG);
}

static void expect_bad(const char *spec, const char *needle)
{
    sd_csr a;
    memset(&a, 0xff, sizeof a);
    SDT_STATUS(sdi_gen(spec, 1, &a), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), needle) != NULL, "spec '%s': message '%s' lacks '%s'",
              spec, sd_last_error(), needle);
    SDT_CHECK(a.rowptr == NULL && a.nnz == 0 && a.rows == 0, "spec '%s': out not zeroed", spec);
    /* The check without building rejects it with the same cause. */
    SDT_STATUS(sdi_gen_check(spec), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), needle) != NULL, "check '%s': message '%s' lacks '%s'",
              spec, sd_last_error(), needle);
}

static void test_bad_specs(void)
{
    expect_bad("", "empty spec");
    expect_bad("nosuch:n=3", "'nosuch'");
    expect_bad("stencil2d:bogus=1", "'bogus'");
    expect_bad("stencil2d:n=abc", "'n'");
    expect_bad("stencil2d:n=0", "'n'");
    expect_bad("stencil2d:n=2.5", "'n'");
    expect_bad("stencil2d:n", "key=value");
    expect_bad("stencil2d:=4", "key=value");
    expect_bad("stencil2d:n=4,n=5", "twice");
    expect_bad("stencil3d27:n=2000", "2^31");
    expect_bad("uniform:nnz=10,deg=2", "not both");
    expect_bad("uniform:rows=10,cols=10,nnz=101", "'nnz'");
    expect_bad("rmat:a=0.6,b=0.3,c=0.3", "sum");
    expect_bad("rmat:scale=31", "'scale'");
    expect_bad("knn:dim=6", "'dim'");
    expect_bad("banded:fill=1.5", "'fill'");
    expect_bad("powerlaw:alpha=1", "'alpha'");
    expect_bad("bimodal:rows=10,cols=10,long=11", "'long'");
    expect_bad("stencil2d:values=normal", "'values'");
    expect_bad("twin:name=x", "'file'");
    /* the default table goes only into twin specs that lack file= */
    static const char *const with[][2] = {
        {"twin", "twin:file=T.tsv"},
        {"twin:", "twin:file=T.tsv"},
        {"twin:name=x", "twin:name=x,file=T.tsv"},
        {"twin:name=x,file=mine.tsv", "twin:name=x,file=mine.tsv"},
        {"twin:file=mine.tsv,name=x", "twin:file=mine.tsv,name=x"},
        {"twins:n=1", "twins:n=1"},
        {"stencil2d:n=3", "stencil2d:n=3"}};
    for (size_t i = 0; i < sizeof with / sizeof with[0]; i++) {
        char *got = sdi_gen_spec_with_table(with[i][0], "T.tsv");
        SDT_CHECK(got != NULL && strcmp(got, with[i][1]) == 0, "'%s' -> '%s', want '%s'",
                  with[i][0], got ? got : "(null)", with[i][1]);
        sdi_free(got);
    }
    expect_bad("twin:file=x", "'name'");
    SDT_STATUS(sdi_gen("stencil2d", 1, NULL), SD_ERR_INVALID_ARG);
    sd_csr a;
    SDT_OK(gen("stencil2d:n=1e1", 1, &a)); /* 1e1 is the integer 10 */
    SDT_CHECK(a.rows == 100, "n=1e1 gives %d rows", a.rows);
    sd_csr_free(&a);
    const char *help = sdi_gen_help();
    for (const char *f = "stencil2d stencil3d7 stencil3d27 banded blockdiag uniform powerlaw "
                         "rmat knn bimodal twin";
         *f;) {
        char name[32];
        int len = 0;
        while (f[len] && f[len] != ' ')
            len++;
        snprintf(name, sizeof name, "%.*s", len, f);
        SDT_CHECK(strstr(help, name) != NULL, "help lacks %s", name);
        f += len + (f[len] == ' ');
    }
}

static void test_alloc_failures(void)
{
    const char *specs[] = {"stencil2d:n=30", "uniform:rows=300,nnz=2000", "rmat:scale=8",
                           "knn:n=300,k=5", "powerlaw:rows=500"};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        long long base = sdi_alloc_live_bytes();
        int failures = 0;
        for (long n = 0; n < 200; n++) {
            sd_csr a;
            sdi_alloc_fail_after(n);
            sd_status s = sdi_gen(specs[k], 3, &a);
            sdi_alloc_fail_after(-1);
            if (s == SD_OK) {
                sd_csr_free(&a);
                break;
            }
            failures++;
            SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "%s fail at %ld: %s", specs[k], n,
                      sd_status_string(s));
            SDT_CHECK(a.rowptr == NULL, "%s: out not zeroed", specs[k]);
            SDT_CHECK(sdi_alloc_live_bytes() == base, "%s: leak after failure at %ld",
                      specs[k], n);
        }
        SDT_CHECK(failures > 0, "%s: no failure injected", specs[k]);
    }
}

/* ------------------------------------------------------------------ twins */

static bool cv_close(double got, double want)
{
    return fabs(got - want) <= 0.10 * want || fabs(got - want) <= 0.005;
}

static void check_twin(const char *file, const char *name, double scale, bool cv_strict)
{
    sdi_twin_target *tab = NULL, t;
    int n = 0;
    SDT_OK(sdi_twin_read_table(file, &tab, &n));
    int found = -1;
    for (int k = 0; k < n; k++)
        if (strcmp(tab[k].name, name) == 0)
            found = k;
    SDT_CHECK(found >= 0, "%s not in %s", name, file);
    if (found < 0) {
        sdi_free(tab);
        return;
    }
    SDT_OK(sdi_twin_scale(&tab[found], scale, &t));
    sdi_free(tab);
    char spec[1024];
    snprintf(spec, sizeof spec, "twin:name=%s,file=%s,scale=%g", name, file, scale);
    sd_csr a, b;
    SDT_OK(gen(spec, sdt_seed, &a));
    sdi_row_stats st;
    sdi_csr_row_stats(&a, &st);
    SDT_CHECK(a.rows == t.rows && a.cols == t.cols && a.nnz == t.nnz && st.max == t.max_row,
              "%s: %d x %d nnz %lld max %lld, want %d x %d nnz %lld max %lld", spec, a.rows,
              a.cols, (long long)a.nnz, (long long)st.max, t.rows, t.cols,
              (long long)t.nnz, (long long)t.max_row);
    if (cv_strict)
        SDT_CHECK(cv_close(st.cv, t.cv_row), "%s: cv %.4f, want %.4f", spec, st.cv,
                  t.cv_row);
    SDT_OK(gen(spec, sdt_seed, &b));
    SDT_CHECK(same_csr(&a, &b), "%s: not deterministic", spec);
    sd_csr_free(&b);
    SDT_OK(gen(spec, sdt_seed + 1, &b));
    SDT_CHECK(!sdi_csr_same_pattern(&a, &b), "%s: seed ignored", spec);
    sd_csr_free(&b);
    sd_csr_free(&a);
}

/* A private table: runs everywhere. */
static void test_twin_private_table(void)
{
    char path[] = "/tmp/sd_test_gen_XXXXXX";
    int fd = mkstemp(path);
    SDT_CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "name\trows\tcols\tnnz\tdensity\tmean_row\tmax_row\tcv_row\tsquare\n"
               "square\t500\t500\t3000\t1.2e-2\t6.0\t40\t0.90\tyes\n"
               "\n"
               "rect\t300\t900\t2400\t8.9e-3\t8.0\t8\t0.00\tno\r\n"
               "heavy\t2000\t2000\t20000\t5e-3\t10.0\t900\t3.00\tyes\n"
               "flat\t961\t961\t4681\t5.1e-3\t4.9\t5\t0.07\tyes\n");
    fclose(f);
    check_twin(path, "square", 1.0, true);
    check_twin(path, "rect", 1.0, true);
    check_twin(path, "heavy", 1.0, true);
    check_twin(path, "flat", 1.0, true);
    check_twin(path, "heavy", 0.3, true);
    sd_csr a;
    char spec[256];
    snprintf(spec, sizeof spec, "twin:name=absent,file=%s", path);
    SDT_STATUS(sdi_gen(spec, 1, &a), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "'absent'") != NULL, "message '%s'", sd_last_error());
    /* the check reads the table too: a missing row is found without building */
    SDT_STATUS(sdi_gen_check(spec), SD_ERR_INVALID_ARG);
    snprintf(spec, sizeof spec, "twin:name=heavy,file=%s", path);
    SDT_OK(sdi_gen_check(spec));
    snprintf(spec, sizeof spec, "twin:name=rect,file=%s,scale=2", path);
    SDT_STATUS(sdi_gen(spec, 1, &a), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "'scale'") != NULL, "message '%s'", sd_last_error());
    /* a malformed line: its number is named */
    f = fopen(path, "a");
    fprintf(f, "broken\t10\t10\n");
    fclose(f);
    snprintf(spec, sizeof spec, "twin:name=rect,file=%s", path);
    SDT_STATUS(sdi_gen(spec, 1, &a), SD_ERR_PARSE);
    SDT_CHECK(strstr(sd_last_error(), "line 7") != NULL, "message '%s'", sd_last_error());
    unlink(path);
    SDT_STATUS(sdi_gen(spec, 1, &a), SD_ERR_IO);
    SDT_CHECK(strstr(sd_last_error(), path) != NULL, "message '%s'", sd_last_error());
}

static bool have_paper60;

static void test_twin_paper60(void)
{
    const char *file = SD_MATRICES_DIR "/paper60.tsv";
    if (access(file, R_OK) != 0) {
        printf("SKIPPED: twins of paper60.tsv (no %s)\n", file);
        return;
    }
    have_paper60 = true;
    sdi_twin_target *tab = NULL;
    int n = 0;
    SDT_OK(sdi_twin_read_table(file, &tab, &n));
    SDT_CHECK(n == 60, "paper60.tsv has %d rows", n);
    sdi_free(tab);
    check_twin(file, "HB_str_0", 1.0, true);
    check_twin(file, "Sandia_adder_dcop_44", 1.0, true);
    check_twin(file, "JGD_Homology_n3c6-b10", 1.0, true);
    check_twin(file, "LPnetlib_lp_standata", 1.0, true);
    check_twin(file, "Rommes_bips07_3078", 1.0, true);
    check_twin(file, "QY_case39", 0.1, true);
    check_twin(file, "DIMACS10_ga2010", 0.05, true);
    check_twin(file, "Barabasi_NotreDame_actors", 0.05, true);
    check_twin(file, "Belcastro_human_gene1", 0.05, false); /* mean capped at cols/4 */
}

int main(void)
{
    sdt_init("test_gen");
    SDT_RUN(test_determinism);
    SDT_RUN(test_structured_sizes);
    SDT_RUN(test_random_families);
    SDT_RUN(test_knn_exact);
    SDT_RUN(test_values);
    SDT_RUN(test_bad_specs);
    SDT_RUN(test_alloc_failures);
    SDT_RUN(test_twin_private_table);
    SDT_RUN(test_twin_paper60);
    int rc = sdt_finish();
    if (rc == 0 && !have_paper60)
        return sdt_skip("paper60.tsv missing: its twins were not checked");
    return rc;
}
