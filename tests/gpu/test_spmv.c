/* tests/gpu/test_spmv.c: every SpMV template (each family's θ_H sweep) × every generator
 * family × the edge cases (empty rows, 1×1, 0 rows, 0 columns, nnz = 0, one dense row of
 * 10^6 entries, rectangular 10×10^6 and 10^6×10, rows far longer than any tile), plus
 * the defaults of every family on the real matrices, validated on the device against
 * the CPU reference: exactly with small-integer values, by the bound of
 * docs/ARCHITECTURE.md "Validation" with
 * uniform values. y is poisoned with NaN before each run (every row must be written);
 * each plan runs twice (workspace counters must reset) and families without float
 * atomics must give bitwise-identical results. Exit 77 without a device.
 * Env: SD_SPMV_TEST_QUICK=1 runs a reduced set; SD_SPMV_TEST_FAMILY=name runs one family. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "plan/families/spmv_shared.h"
#include "runtime/executable.h"
#include "runtime/runtime.h"
#include "sdt.h"

static sd_context *g_ctx;
static int g_quick;
static int g_only = -1;
static long g_runs, g_fail_runs;

/* ------------------------------------------------------------------ one plan */
typedef struct {
    const sd_csr *a;
    float *d_x, *d_y, *h_y1, *h_y2;
    float *d_xm; /* x again at a 4-byte offset (cols + 1 floats): a misaligned operand */
    sdi_reference ref;
} task;

static sd_status task_init(task *t, const sd_csr *a, int exact)
{
    memset(t, 0, sizeof *t);
    t->a = a;
    float *x = malloc(((size_t)a->cols + 1) * sizeof *x);
    if (x == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "host x");
    sdi_gen_dense(x, a->cols, exact ? SDI_VALUES_SMALL_INT : SDI_VALUES_UNIFORM, sdt_seed + 1);
    sd_status s = sdi_reference_dense(a, SD_OP_SPMV, x, 1, exact, &t->ref);
    if (s == SD_OK)
        s = sdi_device_upload(g_ctx, (void **)&t->d_x, x, (size_t)a->cols * sizeof *x, "x");
    if (s == SD_OK && a->cols > 0)
        s = sdi_device_malloc(g_ctx, (void **)&t->d_xm, ((size_t)a->cols + 1) * sizeof *x, "x+1");
    if (s == SD_OK && a->cols > 0)
        s = sdi_copy_to_device(g_ctx, t->d_xm + 1, x, (size_t)a->cols * sizeof *x, "x+1");
    if (s == SD_OK)
        s = sdi_device_malloc(g_ctx, (void **)&t->d_y, (size_t)a->rows * sizeof(float), "y");
    free(x);
    t->h_y1 = malloc(((size_t)a->rows + 1) * sizeof(float));
    t->h_y2 = malloc(((size_t)a->rows + 1) * sizeof(float));
    if (s == SD_OK && (t->h_y1 == NULL || t->h_y2 == NULL))
        s = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "host y");
    return s;
}

static void task_free(task *t)
{
    sdi_device_free(t->d_x);
    sdi_device_free(t->d_xm);
    sdi_device_free(t->d_y);
    free(t->h_y1);
    free(t->h_y2);
    sdi_reference_free(&t->ref);
    memset(t, 0, sizeof *t);
}

static const sdi_family *spmv_family(int id)
{
    return sdi_family_at(sdi_family_of(SD_OP_SPMV, id));
}

/* The task of a matrix with its statistics on this device. */
static sdi_task task_of(const sd_csr *a, const sdi_spmv_stats *st)
{
    sdi_task k = {.op = SD_OP_SPMV, .k = 1, .a = a, .gpu = &g_ctx->props, .spmv = st};
    return k;
}

/* The family's defaults for the matrix (its θ_H, unchecked). */
static sd_status default_of(int f, const sd_csr *a, const sdi_spmv_stats *st, sdi_spmv_config *c)
{
    const sdi_task k = task_of(a, st);
    sdi_plan p;
    sd_status s = spmv_family(f)->defaults(&k, &p);
    if (s == SD_OK)
        *c = p.p.spmv;
    return s;
}

/* Poison y, run, validate; returns 1 when the run passed. `pass` 1 or 2. */
static int run_once(const char *mname, const char *cline, task *t, sdi_executable *e,
                    const float *d_x, int pass, float *h_y)
{
    const sd_csr *a = t->a;
    if (a->rows > 0) {
        sd_status s = sdi_cuda_status(g_ctx, cudaMemsetAsync(t->d_y, 0xff,
                                                             (size_t)a->rows * sizeof(float),
                                                             g_ctx->stream), "poisoning y", NULL);
        SDT_CHECK(s == SD_OK, "%s: %s", mname, sd_last_error());
    }
    sd_status s = sdi_exe_run(g_ctx, e, d_x, t->d_y, g_ctx->stream);
    if (s == SD_OK)
        s = sdi_stream_sync(g_ctx, "spmv", cline);
    SDT_CHECK(s == SD_OK, "%s: [%s] run %d: %s", mname, cline, pass, sd_last_error());
    if (s != SD_OK)
        return 0;
    sdi_validation val;
    memset(&val, 0, sizeof val);
    s = a->rows > 0 ? sdi_check_dense_output(g_ctx, &t->ref, t->d_y, &val) : SD_OK;
    if (s != SD_OK) {
        fprintf(stderr,
                "  FAIL %s [%s] run %d: %s (worst row %lld: got %.9g want %.9g bound %.3g; "
                "%lld violations, %lld non-finite of %lld)\n",
                mname, cline, pass, val.reason[0] ? val.reason : sd_last_error(),
                (long long)val.row, val.got, val.want, val.bound, (long long)val.n_violations,
                (long long)val.n_nonfinite, (long long)val.n_checked);
    }
    SDT_CHECK(s == SD_OK, "%s: [%s] run %d: validation failed", mname, cline, pass);
    if (s == SD_OK && a->rows > 0 && h_y != NULL)
        s = sdi_copy_to_host(g_ctx, h_y, t->d_y, (size_t)a->rows * sizeof(float), "y");
    return s == SD_OK;
}

/* Lower, instantiate, run twice, validate both, compare bitwise when deterministic. */
static void run_plan(const char *mname, task *t, const sdi_spmv_config *c,
                     const sdi_spmv_stats *st)
{
    char cline[256];
    sdi_spmv_config_describe(c, cline, sizeof cline);
    const sdi_task k = task_of(t->a, st);
    const sdi_family *fam = spmv_family(c->family);
    sdi_plan plan;
    sdi_spmv_plan_set(&plan, c);
    sdi_lowered p;
    sd_status s = fam->lower(&k, &plan, &p);
    if (s == SD_ERR_UNSUPPORTED) { /* padding or window limits: a legal refusal */
        sdi_error_clear();
        return;
    }
    SDT_CHECK(s == SD_OK, "%s: [%s] lowering: %s", mname, cline, sd_last_error());
    if (s != SD_OK)
        return;
    /* A graph issues in 1.3 us what a plain launch issues in 3.5 (runtime.h). */
    sdi_executable e;
    s = sdi_exe_create_program(g_ctx, &p, sdi_config_get()->graphs, &e);
    SDT_CHECK(s == SD_OK, "%s: [%s] instantiate: %s", mname, cline, sd_last_error());
    if (s == SD_OK) {
        for (int i = 0; i < e.mod.nfunctions; i++)
            SDT_CHECK(e.mod.functions[i].local_bytes == 0, "%s: [%s] %s spills %zu B",
                      mname, cline, e.mod.functions[i].name, e.mod.functions[i].local_bytes);
        g_runs++;
        int ok = run_once(mname, cline, t, &e, t->d_x, 1, t->h_y1) &&
                 run_once(mname, cline, t, &e, t->d_x, 2, t->h_y2);
        if (ok && !fam->uses_atomics(&plan) && t->a->rows > 0)
            SDT_CHECK(memcmp(t->h_y1, t->h_y2, (size_t)t->a->rows * sizeof(float)) == 0,
                      "%s: [%s] two runs differ bitwise (no atomics: must be deterministic)",
                      mname, cline);
        /* x copied into shared memory: a copy of x that is not 16-byte aligned takes the
         * scalar path and gives the same result bitwise. */
        if (ok && c->xsmem && t->d_xm != NULL) {
            ok = run_once(mname, cline, t, &e, t->d_xm + 1, 3, t->h_y2);
            if (ok && t->a->rows > 0)
                SDT_CHECK(memcmp(t->h_y1, t->h_y2, (size_t)t->a->rows * sizeof(float)) == 0,
                          "%s: [%s] misaligned x differs bitwise", mname, cline);
        }
        if (!ok)
            g_fail_runs++;
        /* Every plan ran as its program's graph (what the search and the API run). */
        if (ok && e.prog.nlaunches > 0 && sdi_config_get()->graphs)
            SDT_CHECK(e.prog.graph_runs == (c->xsmem ? 3 : 2) && !e.prog.graph_failed,
                      "%s: [%s] %ld of %d runs replayed the graph", mname, cline,
                      e.prog.graph_runs, c->xsmem ? 3 : 2);
    }
    sdi_exe_free(&e);
}

/* Every candidate of the sweep (level) whose family passes the filter. */
static void run_matrix(const char *mname, sd_csr *a, int level, int exact)
{
    if (exact)
        sdi_gen_values(a, SDI_VALUES_SMALL_INT, sdt_seed);
    sdi_spmv_stats st;
    SDT_OK(sdi_spmv_stats_compute(a, &st));
    task t;
    sd_status s = task_init(&t, a, exact);
    SDT_CHECK(s == SD_OK, "%s: task: %s", mname, sd_last_error());
    if (s == SD_OK) {
        const sdi_task k = task_of(a, &st);
        sdi_plan_list v = {0};
        for (int f = 0; f < SDI_SPMV_NFAMILIES; f++)
            if (g_only < 0 || f == g_only)
                SDT_OK(spmv_family(f)->sweep(&k, level, &v));
        long before = g_fail_runs;
        for (int i = 0; i < v.n; i++)
            run_plan(mname, &t, &v.v[i].p.spmv, &st);
        printf("  %-34s %8d x %-8d nnz %-10lld %3d plans%s%s\n", mname, a->rows, a->cols,
               (long long)a->nnz, v.n, exact ? " (exact)" : "",
               g_fail_runs > before ? "  FAILURES" : "");
        fflush(stdout);
        sdi_plan_list_free(&v);
    }
    task_free(&t);
}

static void gen_case(const char *spec, int level, int exact)
{
    sd_csr a;
    sd_status s = sdi_gen(spec, sdt_seed, &a);
    SDT_CHECK(s == SD_OK, "generator %s: %s", spec, sd_last_error());
    if (s != SD_OK)
        return;
    run_matrix(spec, &a, level, exact);
    sd_csr_free(&a);
}

/* rows×cols with row r holding len(r) entries at spread columns (distinct, sorted). */
static sd_status spread_rows(int32_t rows, int32_t cols, int64_t (*len)(int64_t, int32_t),
                             sd_csr *out)
{
    int64_t nnz = 0;
    for (int64_t r = 0; r < rows; r++)
        nnz += len(r, cols);
    sd_status s = sdi_csr_alloc(out, rows, cols, nnz);
    if (s != SD_OK)
        return s;
    int64_t k = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t n = len(r, cols);
        int64_t step = n > 0 ? cols / n : 1;
        int64_t off = n > 0 ? r % (cols - (n - 1) * step) : 0;
        for (int64_t j = 0; j < n; j++) {
            out->colind[k] = (int32_t)(off + j * step);
            out->vals[k++] = 1.0f;
        }
        out->rowptr[r + 1] = k;
    }
    return SD_OK;
}

static int64_t l_dense(int64_t r, int32_t c) { (void)r; return c; }
static int64_t l_empty_mix(int64_t r, int32_t c) { return r % 3 == 0 ? 0 : (r * 7 % 41) % (c + 1); }
static int64_t l_one_long(int64_t r, int32_t c) { return r == 17 ? c : r % 5; }
static int64_t l_zero(int64_t r, int32_t c) { (void)r; (void)c; return 0; }
static int64_t l_wide(int64_t r, int32_t c) { return (r * 104729 % 997) * (c / 1000) / 10; }
static int64_t l_tall(int64_t r, int32_t c) { return (r * 31 + 7) % (c + 1); }
static int64_t l_long_tail(int64_t r, int32_t c) { return r >= 1000 ? c / (r - 998) : 3; }

static void edge_case(const char *name, int32_t rows, int32_t cols,
                      int64_t (*len)(int64_t, int32_t), int level)
{
    sd_csr a;
    sd_status s = spread_rows(rows, cols, len, &a);
    SDT_CHECK(s == SD_OK, "%s: %s", name, sd_last_error());
    if (s != SD_OK)
        return;
    run_matrix(name, &a, level, 1);
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ tests */
static void test_edge_cases(void)
{
    edge_case("1x1", 1, 1, l_dense, 1);
    edge_case("0x0", 0, 0, l_zero, 1);
    edge_case("0x5", 0, 5, l_zero, 1);
    edge_case("5x0", 5, 0, l_zero, 1);
    edge_case("nnz=0 1000x700", 1000, 700, l_zero, 1);
    edge_case("empty rows 5000x300", 5000, 300, l_empty_mix, 1);
    edge_case("one row of 60000 among short", 3000, 60000, l_one_long, 1);
    edge_case("long tail rows 4000x200000", 4000, 200000, l_long_tail, 1);
    edge_case("dense row 1x1000000", 1, 1000000, l_dense, 1);
    edge_case("rectangular 10x1000000", 10, 1000000, l_wide, 1);
    edge_case("rectangular 1000000x10", 1000000, 10, l_tall, 1);
    edge_case("dense 64x64", 64, 64, l_dense, 1);
}

static void test_generators(void)
{
    static const char *const full[] = {
        "stencil2d:n=300",          "stencil3d7:n=40",         "stencil3d27:n=24",
        "banded:n=50000,bw=6",      "blockdiag:n=20000,b=16",  "uniform:rows=100000,deg=12",
        "uniform:rows=2000,cols=300000,deg=150", "uniform:rows=300000,cols=2000,deg=4",
        "powerlaw:rows=200000,deg=10", "rmat:scale=16,ef=12",  "knn:n=50000,k=10",
        "bimodal:rows=100000,short=4,long=3000,frac=0.01",
    };
    static const char *const quick[] = {"stencil2d:n=100", "powerlaw:rows=30000,deg=8",
                                        "bimodal:rows=20000,short=3,long=2000,frac=0.01"};
    const char *const *specs = g_quick ? quick : full;
    size_t n = g_quick ? sizeof quick / sizeof quick[0] : sizeof full / sizeof full[0];
    for (size_t i = 0; i < n; i++) {
        gen_case(specs[i], g_quick ? 1 : 2, 1);
        if (!g_quick && i % 3 == 0)
            gen_case(specs[i], 0, 0); /* uniform values: the bound, not exactness */
    }
}

/* A generated matrix with small-integer values (exact comparison), its stats and its task;
 * SD_OK or the task's failure (checked and named). */
static sd_status exact_case(const char *spec, sd_csr *a, sdi_spmv_stats *st, task *t)
{
    memset(a, 0, sizeof *a); /* freeable whatever fails */
    memset(t, 0, sizeof *t);
    sd_status s = sdi_gen(spec, sdt_seed, a);
    if (s == SD_OK) {
        sdi_gen_values(a, SDI_VALUES_SMALL_INT, sdt_seed);
        s = sdi_spmv_stats_compute(a, st);
    }
    if (s == SD_OK)
        s = task_init(t, a, 1);
    SDT_CHECK(s == SD_OK, "%s: %s", spec, sd_last_error());
    return s;
}

/* The cache hints (SD_STREAM 0 / 1 / 2: matrix evict-first, then also x evict-last in
 * L2) change no result: every family's defaults with each hint, exact values, and SELL /
 * ELL with the hints at unroll 8. The sweeps pick these only for matrices larger than L2,
 * which the lane does not generate. */
static void test_stream_hints(void)
{
    static const char *const specs[] = {"powerlaw:rows=20000,deg=10", "stencil2d:n=120"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        sd_csr a;
        sdi_spmv_stats st;
        task t;
        sd_status s = exact_case(specs[i], &a, &st, &t);
        int ran = 0;
        for (int f = 0; s == SD_OK && f < SDI_SPMV_NFAMILIES; f++) {
            sdi_spmv_config c;
            if (default_of(f, &a, &st, &c) != SD_OK)
                continue;
            for (int h = 0; h <= 2; h++) {
                if (h == 2 && f == SDI_SPMV_DIA)
                    continue;
                c.stream = f == SDI_SPMV_TINY ? 0 : h;
                run_plan(specs[i], &t, &c, &st);
                ran++;
                if (h > 0 && (f == SDI_SPMV_SELL || f == SDI_SPMV_ELL)) {
                    sdi_spmv_config u8 = c; /* the sweeps' 8 slots in flight */
                    u8.unroll = 8;
                    run_plan(specs[i], &t, &u8, &st);
                    ran++;
                }
            }
        }
        printf("  %-34s %d hinted plans\n", specs[i], ran);
        task_free(&t);
        sd_csr_free(&a);
    }
}

/* COO with several entries per lane and step (SD_IPT): rows inside a lane, across lanes,
 * across steps and chunks, a dense row, empty rows, a matrix whose end falls inside a lane
 * (the 16-byte loads' scalar fallback); exact values against the CPU reference. */
static void test_coo_ipt(void)
{
    static const char *const specs[] = {"powerlaw:rows=20000,deg=10,max=3000",
                                        "bimodal:rows=5000,cols=5000,short=0,long=900,frac=0.05",
                                        "stencil2d:n=50", "uniform:rows=3001,cols=1000,deg=1",
                                        "banded:n=777,bw=40"};
    static const int ci[][2] = {{1, 2}, {1, 4}, {3, 4}, {2, 4}, {8, 4}, {1, 8}, {5, 8}, {32, 2}};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        sd_csr a;
        sdi_spmv_stats st;
        task t;
        sd_status s = exact_case(specs[i], &a, &st, &t);
        sdi_spmv_config c;
        if (s == SD_OK)
            s = default_of(SDI_SPMV_COO, &a, &st, &c);
        for (size_t k = 0; s == SD_OK && k < sizeof ci / sizeof ci[0]; k++) {
            c.chunk = ci[k][0];
            c.ipt = ci[k][1];
            run_plan(specs[i], &t, &c, &st);
        }
        printf("  %-52s %zu COO lane groupings (nnz %lld)\n", specs[i], sizeof ci / sizeof ci[0],
               (long long)a.nnz);
        task_free(&t);
        sd_csr_free(&a);
    }
}

/* The defaults of every family on every real matrix (values from the file). */
static void test_real_matrices(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/suitesparse", SD_MATRICES_DIR);
    DIR *d = opendir(dir);
    if (d == NULL) {
        printf("  no real matrices in %s: part skipped\n", dir);
        return;
    }
    struct dirent *ent;
    int count = 0;
    while ((ent = readdir(d)) != NULL) {
        size_t len = strlen(ent->d_name);
        if (len < 8 || strcmp(ent->d_name + len - 7, ".mtx.gz") != 0)
            continue;
        if (g_quick && count >= 8)
            break;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        sd_csr a;
        sd_status s = sd_csr_read(path, &a);
        if (s == SD_ERR_UNSUPPORTED) { /* complex matrices */
            sdi_error_clear();
            continue;
        }
        SDT_CHECK(s == SD_OK, "%s: %s", path, sd_last_error());
        if (s != SD_OK)
            continue;
        run_matrix(ent->d_name, &a, 0, 0);
        sd_csr_free(&a);
        count++;
    }
    closedir(d);
    printf("  %d real matrices\n", count);
}

int main(void)
{
    sdt_init("test_spmv");
    sd_status s = sd_context_create(NULL, &g_ctx);
    if (s == SD_ERR_NO_DEVICE)
        return sdt_skip(sd_last_error());
    if (s != SD_OK) {
        fprintf(stderr, "context: %s\n", sd_last_error());
        return 1;
    }
    const char *q = getenv("SD_SPMV_TEST_QUICK");
    g_quick = q != NULL && q[0] == '1';
    const char *fam = getenv("SD_SPMV_TEST_FAMILY");
    if (fam != NULL && fam[0]) {
        g_only = sdi_spmv_family_from_name(fam);
        if (g_only < 0) {
            fprintf(stderr, "SD_SPMV_TEST_FAMILY=%s: unknown family\n", fam);
            return 2;
        }
    }
    printf("# device %s, %d SMs%s\n", g_ctx->props.name, g_ctx->props.sm_count,
           g_quick ? " (quick)" : "");
    SDT_RUN(test_stream_hints);
    SDT_RUN(test_coo_ipt);
    SDT_RUN(test_edge_cases);
    SDT_RUN(test_generators);
    SDT_RUN(test_real_matrices);
    printf("# %ld plans run, %ld failed\n", g_runs, g_fail_runs);
    sd_context_destroy(g_ctx);
    return sdt_finish();
}
