/* tests/gpu/test_vendor.c: the cuSPARSE executor (src/vendor/executor.c) on a device:
 * every SpMV and SpMM variant on generated matrices (uniform, power-law, 2-D stencil,
 * rectangular, tiny edge cases) with small-integer values, validated exactly against the
 * CPU reference: two runs on different x/y pointers (the per-call pointer update), a
 * value update, a CUDA graph captured around one run (no allocation, no
 * synchronisation) and replayed, a replay after another value update, and the
 * executor's own graph replay (captured on the second run on the same pointers); each
 * preprocessed variant also without preprocessing (to tell a preprocess that binds the
 * dense pointers apart from other failures). Also: argument errors, the variant names
 * against the baseline's, and device/host allocation fault injection without leaks. The
 * SpGEMM executor: every variant, repeated products validated (A·A, A·Aᵀ, A·B).
 * Variants cuSPARSE refuses are reported and skipped; a wrong answer fails.
 * Skipped (exit 77) without a device. */
#include <string.h>

#include "gen/gen.h"
#include "runtime/runtime.h"
#include "vendor/baseline.h"
#include "runtime/vendor_exec.h"
#include "sdt.h"

static sd_context *g_ctx;
static cudaStream_t g_stream; /* a non-default stream: runs and graph capture */
static int g_ok, g_skipped;

/* ------------------------------------------------------------------ a task */

/* One matrix and operator: A with two value sets, two inputs, the four references,
 * and test-owned device operands (cudaMalloc, so the library's live-allocation count
 * only sees the executor). The "b" operands sit 16 bytes into a larger allocation. */
typedef struct {
    char label[64];
    sd_op op;
    int k;
    sd_csr a, a2; /* same pattern, values 1 and 2 */
    float *x1, *x2;
    sdi_reference ref[2][2]; /* [values][input] */
    size_t nin, nout;
    float *d_in_a, *d_in_big, *d_out_a, *d_out_big;
    float *d_in_b, *d_out_b;
} task;

static void task_free(task *t)
{
    sd_csr_free(&t->a);
    sd_csr_free(&t->a2);
    free(t->x1);
    free(t->x2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            sdi_reference_free(&t->ref[i][j]);
    cudaFree(t->d_in_a);
    cudaFree(t->d_in_big);
    cudaFree(t->d_out_a);
    cudaFree(t->d_out_big);
    memset(t, 0, sizeof *t);
}

/* Takes ownership of *a (values are replaced by small integers). */
static bool task_init(task *t, const char *label, sd_csr *a, sd_op op, int k)
{
    memset(t, 0, sizeof *t);
    snprintf(t->label, sizeof t->label, "%s", label);
    t->op = op;
    t->k = op == SD_OP_SPMM ? k : 1;
    t->a = *a;
    memset(a, 0, sizeof *a);
    sdi_gen_values(&t->a, SDI_VALUES_SMALL_INT, sdt_seed);
    sd_status s = sdi_csr_copy(&t->a, &t->a2);
    SDT_CHECK(s == SD_OK, "%s: copying A: %s", label, sd_last_error());
    if (s != SD_OK)
        return false;
    sdi_gen_values(&t->a2, SDI_VALUES_SMALL_INT, sdt_seed + 101);
    t->nin = (size_t)t->a.cols * (size_t)t->k;
    t->nout = (size_t)t->a.rows * (size_t)t->k;
    t->x1 = malloc((t->nin + 1) * sizeof(float));
    t->x2 = malloc((t->nin + 1) * sizeof(float));
    SDT_CHECK(t->x1 != NULL && t->x2 != NULL, "host inputs");
    if (t->x1 == NULL || t->x2 == NULL)
        return false;
    sdi_gen_dense(t->x1, (int64_t)t->nin, SDI_VALUES_SMALL_INT, sdt_seed + 1);
    sdi_gen_dense(t->x2, (int64_t)t->nin, SDI_VALUES_SMALL_INT, sdt_seed + 2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            s = sdi_reference_dense(i == 0 ? &t->a : &t->a2, op, j == 0 ? t->x1 : t->x2, t->k,
                                    1, &t->ref[i][j]);
            SDT_CHECK(s == SD_OK, "%s: reference: %s", label, sd_last_error());
            if (s != SD_OK)
                return false;
        }
    size_t in_b = (t->nin + 4) * sizeof(float), out_b = (t->nout + 4) * sizeof(float);
    cudaError_t e = cudaMalloc((void **)&t->d_in_a, in_b);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&t->d_in_big, in_b);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&t->d_out_a, out_b);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&t->d_out_big, out_b);
    t->d_in_b = t->d_in_big != NULL ? t->d_in_big + 4 : NULL;
    t->d_out_b = t->d_out_big != NULL ? t->d_out_big + 4 : NULL;
    if (e == cudaSuccess && t->nin > 0)
        e = cudaMemcpy(t->d_in_a, t->x1, t->nin * sizeof(float), cudaMemcpyHostToDevice);
    if (e == cudaSuccess && t->nin > 0)
        e = cudaMemcpy(t->d_in_b, t->x2, t->nin * sizeof(float), cudaMemcpyHostToDevice);
    SDT_CHECK(e == cudaSuccess, "%s: test operands: %s", label, cudaGetErrorString(e));
    return e == cudaSuccess;
}

/* ------------------------------------------------------------------ one variant */

typedef enum { V_OK, V_SKIP, V_FAIL } vres;

static const char *vres_name(vres r) { return r == V_OK ? "ok" : r == V_SKIP ? "skip" : "FAIL"; }

/* A finite sentinel (≈3.4e38) in every output float: an entry never written fails. */
static cudaError_t poison(float *d, size_t n)
{
    return cudaMemsetAsync(d, 0x7f, n * sizeof(float), g_stream);
}

static bool sync_ok(const char *what, char *why, size_t cap)
{
    cudaError_t e = cudaStreamSynchronize(g_stream);
    if (e == cudaSuccess)
        return true;
    snprintf(why, cap, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    (void)cudaGetLastError();
    return false;
}

static bool check_out(const sdi_reference *r, const float *d_out, const char *what, char *why,
                      size_t cap)
{
    sdi_validation val;
    sd_status s = sdi_check_dense_output(g_ctx, r, d_out, &val);
    if (s == SD_OK && val.ok && val.n_checked == r->rows * r->k)
        return true;
    if (s == SD_OK)
        snprintf(why, cap, "%s: checked %lld of %lld entries", what, (long long)val.n_checked,
                 (long long)(r->rows * r->k));
    else
        snprintf(why, cap, "%s: wrong answer: %s", what,
                 val.reason[0] ? val.reason : sd_last_error());
    return false;
}

/* One run of v on (in, out), checked against r; counts the executor's graph replays. */
static bool run_checked(sdi_vendor *v, const float *in, float *out, size_t nout,
                        const sdi_reference *r, const char *what, long *replays, char *why,
                        size_t cap)
{
    long g0 = sdi_vendor_graph_runs(v);
    if (poison(out, nout) != cudaSuccess) {
        snprintf(why, cap, "%s: poisoning failed", what);
        return false;
    }
    sd_status s = sdi_vendor_run(v, in, out, g_stream);
    if (s != SD_OK) {
        snprintf(why, cap, "%s: %s: %s", what, sd_status_string(s), sd_last_error());
        return false;
    }
    *replays += sdi_vendor_graph_runs(v) - g0;
    return sync_ok(what, why, cap) && check_out(r, out, what, why, cap);
}

static bool graph_steps(task *t, sdi_vendor *v, char *why, size_t cap)
{
    long reps = 0, plain_reps = 0;
    if (!run_checked(v, t->d_in_b, t->d_out_b, t->nout, &t->ref[0][1], "own graph: x2 -> out_b",
                     &plain_reps, why, cap))
        return false;
    for (int i = 0; i < 3; i++)
        if (!run_checked(v, t->d_in_a, t->d_out_a, t->nout, &t->ref[0][0],
                         "own graph: x1 -> out_a, repeated", &reps, why, cap))
            return false;
    if (reps != 2) {
        snprintf(why, cap, "own graph: 3 runs on the same pointers replayed %ld times (2 expected)",
                 reps);
        return false;
    }
    sd_status s = sdi_vendor_update_values(v, t->a2.vals);
    if (s != SD_OK) {
        snprintf(why, cap, "own graph: update_values: %s", sd_last_error());
        return false;
    }
    if (!run_checked(v, t->d_in_a, t->d_out_a, t->nout, &t->ref[1][0],
                     "own graph after a value update (x1 -> out_a)", &reps, why, cap) ||
        !run_checked(v, t->d_in_b, t->d_out_b, t->nout, &t->ref[1][1],
                     "own graph, other pointers (x2 -> out_b)", &plain_reps, why, cap))
        return false;
    if (reps != 3 || plain_reps != 0) {
        snprintf(why, cap, "own graph: %ld replays after the update (3 expected), %ld on moved "
                 "pointers (0 expected)", reps, plain_reps);
        return false;
    }
    return true;
}

/* Create → run on (in_a, out_a) and (in_b, out_b) → update values → run → capture a
 * run into a graph → replay → update back → replay → destroy, checking every output and
 * that nothing leaks. why receives the first failure (or the refusal). */
static vres run_variant(task *t, const char *variant, bool no_pre, bool *pre, size_t *bytes,
                        char *why, size_t cap)
{
    long live0 = sdi_device_alloc_live();
    sdi_vendor *v = NULL;
    sdi_vendor_options opt = {.no_preprocess = no_pre};
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    vres res = V_FAIL;
    cudaError_t e;
    why[0] = '\0';
    *pre = false;
    *bytes = 0;
    sd_status s = sdi_vendor_create_ex(g_ctx, &t->a, t->op, t->k, variant, &opt, &v);
    if (s == SD_ERR_UNSUPPORTED) {
        snprintf(why, cap, "%s", sd_last_error());
        res = v == NULL ? V_SKIP : V_FAIL;
        goto done;
    }
    if (s != SD_OK || v == NULL) {
        snprintf(why, cap, "create: %s: %s", sd_status_string(s), sd_last_error());
        goto done;
    }
    *pre = sdi_vendor_preprocessed(v);
    *bytes = sdi_vendor_device_bytes(v);
    if (strcmp(sdi_vendor_name(v), variant) != 0) {
        snprintf(why, cap, "sdi_vendor_name says '%s'", sdi_vendor_name(v));
        goto done;
    }
    /* 1. Two runs on different pointers (x1 → out_a, then x2 → out_b): the second run
     * reads and writes only through the pointers it was given. */
    if (poison(t->d_out_a, t->nout) != cudaSuccess || poison(t->d_out_b, t->nout) != cudaSuccess) {
        snprintf(why, cap, "poisoning the outputs failed");
        goto done;
    }
    (void)sdi_device_alloc_fail_after(-1); /* resets the allocation count */
    long long host0 = sdi_alloc_live_bytes();
    s = sdi_vendor_run(v, t->d_in_a, t->d_out_a, g_stream);
    if (s == SD_OK)
        s = sdi_vendor_run(v, t->d_in_b, t->d_out_b, g_stream);
    long made = sdi_device_alloc_fail_after(-1);
    long long host1 = sdi_alloc_live_bytes();
    if (s != SD_OK) {
        snprintf(why, cap, "run: %s: %s", sd_status_string(s), sd_last_error());
        goto done;
    }
    if (made != 0 || host1 != host0) {
        snprintf(why, cap, "run allocated: %ld device allocations, host bytes %lld -> %lld", made,
                 host0, host1);
        goto done;
    }
    if (!sync_ok("after two runs", why, cap) ||
        !check_out(&t->ref[0][0], t->d_out_a, "run 1 (x1 -> out_a)", why, cap) ||
        !check_out(&t->ref[0][1], t->d_out_b, "run 2 (other pointers: x2 -> out_b)", why, cap))
        goto done;
    /* 2. New values (same pattern). */
    s = sdi_vendor_update_values(v, t->a2.vals);
    if (s != SD_OK) {
        snprintf(why, cap, "update_values: %s: %s", sd_status_string(s), sd_last_error());
        goto done;
    }
    if (poison(t->d_out_a, t->nout) != cudaSuccess)
        goto done;
    s = sdi_vendor_run(v, t->d_in_a, t->d_out_a, g_stream);
    if (s != SD_OK) {
        snprintf(why, cap, "run after update: %s: %s", sd_status_string(s), sd_last_error());
        goto done;
    }
    if (!sync_ok("after the run with new values", why, cap) ||
        !check_out(&t->ref[1][0], t->d_out_a, "run 3 (new values, x1 -> out_a)", why, cap))
        goto done;
    /* 3. A graph captured around one run. Global mode: any allocation or
     * synchronisation inside the run makes the capture fail. */
    if (poison(t->d_out_b, t->nout) != cudaSuccess || !sync_ok("poisoning", why, cap))
        goto done;
    e = cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeGlobal);
    if (e != cudaSuccess) {
        snprintf(why, cap, "cudaStreamBeginCapture: %s", cudaGetErrorString(e));
        goto done;
    }
    s = sdi_vendor_run(v, t->d_in_b, t->d_out_b, g_stream);
    char run_msg[512];
    snprintf(run_msg, sizeof run_msg, "%s", s == SD_OK ? "" : sd_last_error());
    e = cudaStreamEndCapture(g_stream, &graph);
    if (s != SD_OK || e != cudaSuccess) {
        snprintf(why, cap, "graph capture: run %s (%s), end capture %s", sd_status_string(s),
                 run_msg, cudaGetErrorString(e));
        (void)cudaGetLastError();
        goto done;
    }
    e = cudaGraphInstantiate(&exec, graph, 0);
    if (e != cudaSuccess) {
        exec = NULL;
        snprintf(why, cap, "cudaGraphInstantiate: %s", cudaGetErrorString(e));
        (void)cudaGetLastError();
        goto done;
    }
    e = cudaGraphLaunch(exec, g_stream);
    if (e != cudaSuccess) {
        snprintf(why, cap, "cudaGraphLaunch: %s", cudaGetErrorString(e));
        (void)cudaGetLastError();
        goto done;
    }
    if (!sync_ok("graph replay", why, cap) ||
        !check_out(&t->ref[1][1], t->d_out_b, "graph replay (new values, x2 -> out_b)", why,
                   cap))
        goto done;
    /* 4. Values back, then the same graph again: it reads the updated arrays in place. */
    s = sdi_vendor_update_values(v, t->a.vals);
    if (s != SD_OK) {
        snprintf(why, cap, "update_values back: %s: %s", sd_status_string(s), sd_last_error());
        goto done;
    }
    if (poison(t->d_out_b, t->nout) != cudaSuccess)
        goto done;
    e = cudaGraphLaunch(exec, g_stream);
    if (e != cudaSuccess) {
        snprintf(why, cap, "second graph launch: %s", cudaGetErrorString(e));
        (void)cudaGetLastError();
        goto done;
    }
    if (!sync_ok("second graph replay", why, cap) ||
        !check_out(&t->ref[0][1], t->d_out_b, "graph replay after a value update (x2 -> out_b)",
                   why, cap))
        goto done;
    /* 5. The executor's own graph (vendor.h): after a run on other pointers, three runs on
     * (x1, out_a) are plain, captured + replayed, replayed; new values need no recapture;
     * other pointers run plainly and are right. (Without entries a run is a memset.) */
    if (sdi_config_get()->graphs && t->a.nnz > 0 && !graph_steps(t, v, why, cap))
        goto done;
    res = V_OK;
done:
    if (exec != NULL)
        (void)cudaGraphExecDestroy(exec);
    if (graph != NULL)
        (void)cudaGraphDestroy(graph);
    sdi_vendor_destroy(v);
    long live1 = sdi_device_alloc_live();
    if (live1 != live0) {
        size_t n = strlen(why);
        snprintf(why + n, cap - n, "%sdevice allocations leaked: %ld live before, %ld after",
                 n ? "; " : "", live0, live1);
        res = V_FAIL;
    }
    return res;
}

/* Every variant of t->op on the task; csr_alg1 (any matrix) must never be refused. */
static void run_task(task *t)
{
    char opname[32];
    if (t->op == SD_OP_SPMV)
        snprintf(opname, sizeof opname, "SpMV");
    else
        snprintf(opname, sizeof opname, "SpMM k=%d", t->k);
    printf("  -- %s %s: %d x %d, nnz %lld\n", t->label, opname, t->a.rows, t->a.cols,
           (long long)t->a.nnz);
    int ok = 0;
    char why[1024], why_off[1024];
    for (int i = 0; sdi_vendor_variant(t->op, i) != NULL; i++) {
        const char *name = sdi_vendor_variant(t->op, i);
        bool pre = false, pre_off = false;
        size_t bytes = 0, bytes_off = 0;
        vres r = run_variant(t, name, false, &pre, &bytes, why, sizeof why);
        if (r == V_SKIP) {
            g_skipped++;
            printf("     %-9s skip (refused: %s)\n", name, why);
            SDT_CHECK(strcmp(name, "csr_alg1") != 0 || t->a.nnz == 0,
                      "%s %s: csr_alg1 refused: %s", t->label, opname, why);
            continue;
        }
        /* Preprocessed (or failed before we knew): again without preprocessing. */
        vres r_off = V_SKIP;
        if (pre || r == V_FAIL)
            r_off = run_variant(t, name, true, &pre_off, &bytes_off, why_off, sizeof why_off);
        printf("     %-9s %-4s%s %8zu device bytes%s%s%s%s\n", name, vres_name(r),
               pre ? " (preprocessed)" : "               ", bytes,
               r == V_FAIL ? ": " : "", r == V_FAIL ? why : "",
               pre || r == V_FAIL ? "; without preprocessing: " : "",
               pre || r == V_FAIL ? (r_off == V_OK ? "ok" : why_off) : "");
        if (r == V_FAIL && r_off == V_OK && !pre_off)
            printf("     DIAGNOSIS %s: passes without preprocessing only: the preprocessed "
                   "workspace binds what run changes (pointers or values); turn preprocess off "
                   "for it in executor.c's table\n", name);
        SDT_CHECK(r == V_OK, "%s %s %s: %s", t->label, opname, name, why);
        SDT_CHECK(r_off != V_FAIL, "%s %s %s without preprocessing: %s", t->label, opname, name,
                  why_off);
        if (r == V_OK) {
            ok++;
            g_ok++;
        }
    }
    SDT_CHECK(ok > 0, "%s %s: no variant passed", t->label, opname);
}

/* The fallback's plain calls (sdi_vendor_options.no_graph; sdi_candidate.vendor_plain): runs
 * on the same pointers never replay a graph, outputs stay right, and new values are read
 * at once. The search picks plain calls only where the replay is slower, which is rare on
 * the H200; this covers the executor's side of it. */
static void test_no_graph(void)
{
    sd_csr a;
    sd_status s = sdi_gen("uniform:rows=4000,deg=7", sdt_seed, &a);
    SDT_CHECK(s == SD_OK, "sdi_gen: %s", sd_last_error());
    if (s != SD_OK)
        return;
    static const struct {
        sd_op op;
        int k;
        const char *variant;
    } cases[] = {{SD_OP_SPMV, 1, "csr_alg1"}, {SD_OP_SPMM, 8, "csr_alg3"}, {SD_OP_SPMM, 8, "coo_alg4"}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        sd_csr copy;
        s = sdi_csr_copy(&a, &copy);
        SDT_CHECK(s == SD_OK, "copy: %s", sd_last_error());
        if (s != SD_OK)
            break;
        task t; /* takes copy over */
        if (!task_init(&t, "no_graph", &copy, cases[c].op, cases[c].k)) {
            task_free(&t);
            continue;
        }
        const long live0 = sdi_device_alloc_live();
        sdi_vendor *v = NULL;
        const sdi_vendor_options opt = {.no_graph = true};
        s = sdi_vendor_create_ex(g_ctx, &t.a, t.op, t.k, cases[c].variant, &opt, &v);
        SDT_CHECK(s == SD_OK && v != NULL, "no_graph %s: create: %s", cases[c].variant, sd_last_error());
        char why[512] = "";
        long reps = 0;
        bool ok = s == SD_OK && v != NULL;
        for (int i = 0; i < 4 && ok; i++)
            ok = run_checked(v, t.d_in_a, t.d_out_a, t.nout, &t.ref[0][0], "plain, same pointers",
                             &reps, why, sizeof why);
        if (ok) {
            s = sdi_vendor_update_values(v, t.a2.vals);
            ok = s == SD_OK;
            if (!ok)
                snprintf(why, sizeof why, "update_values: %s", sd_last_error());
        }
        for (int i = 0; i < 2 && ok; i++)
            ok = run_checked(v, t.d_in_a, t.d_out_a, t.nout, &t.ref[1][0],
                             "plain after a value update", &reps, why, sizeof why);
        SDT_CHECK(ok, "no_graph %s: %s", cases[c].variant, why);
        SDT_CHECK(reps == 0, "no_graph %s: %ld graph replays on the same pointers (0 expected)",
                  cases[c].variant, reps);
        sdi_vendor_destroy(v);
        SDT_CHECK(sdi_device_alloc_live() == live0, "no_graph %s: device allocations leaked",
                  cases[c].variant);
        printf("  no_graph %-9s %s: 6 runs on the same pointers, %ld replays\n", cases[c].variant,
               ok ? "ok" : "FAIL", reps);
        task_free(&t);
    }
    sd_csr_free(&a);
}

/* Generates spec and runs SpMV, SpMM k=8 and, when given, SpMM with another k. */
static void run_matrix(const char *spec, int extra_k)
{
    sd_csr a;
    sd_status s = sdi_gen(spec, sdt_seed, &a);
    SDT_CHECK(s == SD_OK, "sdi_gen(%s): %s", spec, sd_last_error());
    if (s != SD_OK)
        return;
    const int ks[3] = {0, 8, extra_k};
    for (int i = 0; i < 3; i++) {
        if (i == 2 && extra_k <= 0)
            break;
        sd_csr copy;
        s = sdi_csr_copy(&a, &copy);
        SDT_CHECK(s == SD_OK, "copy: %s", sd_last_error());
        if (s != SD_OK)
            break;
        task t; /* takes copy over */
        if (task_init(&t, spec, &copy, i == 0 ? SD_OP_SPMV : SD_OP_SPMM, ks[i]))
            run_task(&t);
        task_free(&t);
    }
    sd_csr_free(&a);
}

static void test_uniform(void) { run_matrix("uniform:rows=5000,deg=8", 0); }
static void test_powerlaw(void) { run_matrix("powerlaw:rows=5000,deg=8", 0); }
static void test_stencil(void) { run_matrix("stencil2d:n=64", 3); }
static void test_rectangular(void) { run_matrix("uniform:rows=3001,cols=1777,deg=6", 3); }

/* A CSR from a dense row-major picture (0 = absent). */
static sd_status csr_from_dense(sd_csr *a, int rows, int cols, const float *d)
{
    int64_t nnz = 0;
    for (int i = 0; i < rows * cols; i++)
        nnz += d[i] != 0;
    sd_status s = sdi_csr_alloc(a, rows, cols, nnz);
    if (s != SD_OK)
        return s;
    int64_t n = 0;
    a->rowptr[0] = 0;
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++)
            if (d[r * cols + c] != 0) {
                a->colind[n] = c;
                a->vals[n++] = d[r * cols + c];
            }
        a->rowptr[r + 1] = n;
    }
    return SD_OK;
}

/* Tiny shapes: empty rows, one entry, no entries (nnz = 0 writes zeros). */
static void test_edge_cases(void)
{
    static const float pic[3 * 5] = {1, 0, 0, 2, 0, /* */ 0, 0, 0, 0, 0, /* */ 0, 3, 0, 0, 4};
    static const float one_entry[2 * 3] = {0, 0, 0, 0, 7, 0};
    static const float none[4 * 4] = {0};
    struct {
        const char *label;
        int rows, cols;
        const float *pic;
    } cases[] = {{"3x5 with an empty row", 3, 5, pic},
                 {"2x3 with one entry", 2, 3, one_entry},
                 {"4x4 without entries", 4, 4, none}};
    for (int c = 0; c < 3; c++)
        for (int op = 0; op < 2; op++) {
            sd_csr a;
            sd_status s = csr_from_dense(&a, cases[c].rows, cases[c].cols, cases[c].pic);
            SDT_CHECK(s == SD_OK, "%s: %s", cases[c].label, sd_last_error());
            if (s != SD_OK)
                continue;
            task t; /* takes a over */
            if (task_init(&t, cases[c].label, &a, op == 0 ? SD_OP_SPMV : SD_OP_SPMM, 4))
                run_task(&t);
            task_free(&t);
        }
}

/* ------------------------------------------------------------------ the rest */

static void test_arguments(void)
{
    static const float pic[3 * 5] = {1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 4};
    sd_csr a;
    SDT_OK(csr_from_dense(&a, 3, 5, pic));
    long live0 = sdi_device_alloc_live();
    sdi_vendor *v = (sdi_vendor *)&a; /* a non-NULL sentinel: failures must clear it */
    SDT_STATUS(sdi_vendor_create(g_ctx, &a, SD_OP_SPMV, 1, "nope", &v), SD_ERR_UNSUPPORTED);
    SDT_CHECK(v == NULL, "*out cleared on failure");
    SDT_CHECK(strstr(sd_last_error(), "nope") != NULL && strstr(sd_last_error(), "csr_alg1"),
              "the message names the variant and the known ones: %s", sd_last_error());
    v = (sdi_vendor *)&a;
    SDT_STATUS(sdi_vendor_create(g_ctx, &a, SD_OP_SPMV, 1, "bell16", &v), SD_ERR_UNSUPPORTED);
    SDT_CHECK(v == NULL, "*out cleared (an SpMM-only name for SpMV)");
    SDT_STATUS(sdi_vendor_create(g_ctx, &a, SD_OP_SPMV, 1, "sell", &v), SD_ERR_UNSUPPORTED);
    SDT_STATUS(sdi_vendor_create(g_ctx, &a, SD_OP_SPGEMM, 1, "csr_alg1", &v), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_vendor_create(g_ctx, &a, SD_OP_SPMM, 0, "csr_alg1", &v), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_vendor_create(g_ctx, &a, SD_OP_SPMM, 65537, "csr_alg1", &v),
               SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_vendor_create(g_ctx, NULL, SD_OP_SPMV, 1, "csr_alg1", &v), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_vendor_create(g_ctx, &a, SD_OP_SPMV, 1, NULL, &v), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_vendor_create(g_ctx, &a, SD_OP_SPMV, 1, "csr_alg1", NULL), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_vendor_create(NULL, &a, SD_OP_SPMV, 1, "csr_alg1", &v), SD_ERR_INVALID_ARG);
    int nv = 0, nm = 0;
    while (sdi_vendor_variant(SD_OP_SPMV, nv) != NULL)
        nv++;
    while (sdi_vendor_variant(SD_OP_SPMM, nm) != NULL)
        nm++;
    SDT_CHECK(nv == 5 && nm == 9, "5 SpMV and 9 SpMM variants (got %d, %d)", nv, nm);
    SDT_CHECK(sdi_vendor_variant(SD_OP_SPGEMM, 0) == NULL && sdi_vendor_variant(SD_OP_SPMV, -1) ==
              NULL, "no SpGEMM variants, no negative index");
    SDT_CHECK(strcmp(sdi_vendor_name(NULL), "") == 0, "name of NULL");
    sdi_vendor_destroy(NULL);

    v = NULL;
    SDT_OK(sdi_vendor_create(g_ctx, &a, SD_OP_SPMV, 1, "csr_alg1", &v));
    float *d = NULL;
    SDT_CHECK(cudaMalloc((void **)&d, 64 * sizeof(float)) == cudaSuccess, "cudaMalloc");
    if (v != NULL && d != NULL) {
        SDT_STATUS(sdi_vendor_run(v, NULL, d, g_stream), SD_ERR_INVALID_ARG);
        SDT_STATUS(sdi_vendor_run(v, d, NULL, g_stream), SD_ERR_INVALID_ARG);
        SDT_STATUS(sdi_vendor_run(NULL, d, d + 16, g_stream), SD_ERR_INVALID_ARG);
        SDT_STATUS(sdi_vendor_run(v, d + 1, d + 16, g_stream), SD_ERR_INVALID_ARG);
        SDT_CHECK(strstr(sd_last_error(), "aligned") != NULL, "misalignment named: %s",
                  sd_last_error());
        SDT_STATUS(sdi_vendor_update_values(v, NULL), SD_ERR_INVALID_ARG);
        SDT_STATUS(sdi_vendor_update_values(NULL, a.vals), SD_ERR_INVALID_ARG);
        SDT_OK(sdi_vendor_run(v, d, d + 16, g_stream));
        SDT_CHECK(cudaStreamSynchronize(g_stream) == cudaSuccess, "sync");
    }
    cudaFree(d);
    sdi_vendor_destroy(v);
    SDT_CHECK(sdi_device_alloc_live() == live0, "no device leak (%ld live, %ld before)",
              sdi_device_alloc_live(), live0);
    sd_csr_free(&a);
}

/* The executor's names are the baseline's, in its order, and every variant the baseline
 * validated can be built. */
static void test_names_match_baseline(void)
{
    sd_csr a;
    sd_status s = sdi_gen("stencil2d:n=24", sdt_seed, &a);
    SDT_CHECK(s == SD_OK, "gen: %s", sd_last_error());
    if (s != SD_OK)
        return;
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, sdt_seed);
    const int k = 4;
    float *x = malloc((size_t)a.cols * k * sizeof *x);
    SDT_CHECK(x != NULL, "host x");
    static sdi_baseline b;
    for (int op = 0; x != NULL && op < 2; op++) {
        sd_op o = op == 0 ? SD_OP_SPMV : SD_OP_SPMM;
        sdi_gen_dense(x, (int64_t)a.cols * k, SDI_VALUES_SMALL_INT, sdt_seed);
        sdi_baseline_options opt = {.k = k, .aat = -1, .exact = 1};
        s = sdi_cusparse_baseline(g_ctx, &a, o, x, &opt, &b);
        SDT_CHECK(s == SD_OK, "baseline: %s", sd_last_error());
        if (s != SD_OK)
            continue;
        int n = 0;
        while (sdi_vendor_variant(o, n) != NULL)
            n++;
        SDT_CHECK(b.nvariants == n, "%s: baseline has %d variants, executor %d",
                  op == 0 ? "SpMV" : "SpMM", b.nvariants, n);
        for (int i = 0; i < b.nvariants && i < n; i++) {
            SDT_CHECK(strcmp(b.v[i].name, sdi_vendor_variant(o, i)) == 0,
                      "variant %d: baseline '%s', executor '%s'", i, b.v[i].name,
                      sdi_vendor_variant(o, i));
            if (b.v[i].status != SDI_VARIANT_OK)
                continue;
            sdi_vendor *v = NULL;
            s = sdi_vendor_create(g_ctx, &a, o, k, b.v[i].name, &v);
            SDT_CHECK(s == SD_OK, "%s: the baseline ran it (%.2f us) but the executor fails: %s",
                      b.v[i].name, b.v[i].timing.mean_us, sd_last_error());
            sdi_vendor_destroy(v);
        }
    }
    free(x);
    sd_csr_free(&a);
}

/* Fails the n-th device (or host) allocation for n = 0, 1, ... until creation succeeds:
 * every failure is SD_ERR_OUT_OF_MEMORY with *out NULL and nothing left behind. */
static void inject(const char *spec, sd_op op, int k, const char *variant, bool host)
{
    sd_csr a;
    sd_status s = sdi_gen(spec, sdt_seed, &a);
    SDT_CHECK(s == SD_OK, "gen: %s", sd_last_error());
    if (s != SD_OK)
        return;
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, sdt_seed);
    long live0 = sdi_device_alloc_live();
    long long host0 = sdi_alloc_live_bytes();
    bool done = false;
    int n = 0;
    for (; n < 200 && !done; n++) {
        sdi_vendor *v = (sdi_vendor *)&a;
        if (host)
            (void)sdi_alloc_fail_after(n);
        else
            (void)sdi_device_alloc_fail_after(n);
        s = sdi_vendor_create(g_ctx, &a, op, k, variant, &v);
        if (host)
            (void)sdi_alloc_fail_after(-1);
        else
            (void)sdi_device_alloc_fail_after(-1);
        if (s == SD_OK) {
            done = true;
            sdi_vendor_destroy(v);
        } else if (s == SD_ERR_UNSUPPORTED && n == 0) {
            printf("  %s %s on %s: refused without injection (%s): skipped\n", variant,
                   op == SD_OP_SPMV ? "SpMV" : "SpMM", spec, sd_last_error());
            break;
        } else {
            SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "%s, failure %d: %s: %s", variant, n,
                      sd_status_string(s), sd_last_error());
            SDT_CHECK(v == NULL, "%s, failure %d: *out not cleared", variant, n);
        }
        SDT_CHECK(sdi_device_alloc_live() == live0, "%s, %s failure %d: %ld device allocations "
                  "live, %ld before", variant, host ? "host" : "device", n,
                  sdi_device_alloc_live(), live0);
        SDT_CHECK(sdi_alloc_live_bytes() == host0, "%s, %s failure %d: %lld host bytes live, %lld "
                  "before", variant, host ? "host" : "device", n, sdi_alloc_live_bytes(), host0);
    }
    if (done)
        printf("  %-8s %s on %s: %d %s allocation failures handled, then created\n", variant,
               op == SD_OP_SPMV ? "SpMV" : "SpMM", spec, n - 1, host ? "host" : "device");
    sd_csr_free(&a);
}

static void test_fault_injection(void)
{
    const char *rect = "uniform:rows=301,cols=177,deg=6"; /* Blocked-ELL staging both sides */
    for (int host = 0; host < 2; host++) {
        inject(rect, SD_OP_SPMV, 1, "csr_alg1", host);
        inject(rect, SD_OP_SPMV, 1, "coo_alg1", host);
        inject(rect, SD_OP_SPMV, 1, "sell32", host);
        inject(rect, SD_OP_SPMM, 8, "bell16", host);
        inject(rect, SD_OP_SPMM, 8, "csr_alg3", host);
    }
}

/* The cuSPARSE SpGEMM executor (what a compiled SpGEMM runs when cuSPARSE won the
 * search): every variant, for A·A, A·Aᵀ of a rectangular A and a general A·B, three
 * products in a row on the context's stream (buffers reused), each C validated and freed;
 * then a value update. */
static void spgemm_case(const char *label, const sd_csr *a, const sd_csr *b, int aat)
{
    sd_csr at;
    memset(&at, 0, sizeof at);
    const sd_csr *bb = b != NULL ? b : a;
    if (b == NULL && aat) {
        SDT_OK(sdi_csr_transpose(a, &at));
        bb = &at;
    }
    sdi_reference ref;
    SDT_OK(sdi_reference_spgemm(a, bb, &ref));
    for (int i = 0; sdi_vendor_spgemm_variant(i) != NULL; i++) {
        const char *name = sdi_vendor_spgemm_variant(i);
        sdi_vendor_spgemm *v = NULL;
        sd_status s = sdi_vendor_spgemm_create(g_ctx, a, b, aat, name, &v);
        SDT_CHECK(s == SD_OK, "%s %s: create: %s", label, name, sd_last_error());
        for (int rep = 0; rep < 3 && s == SD_OK; rep++) {
            sd_device_csr c;
            s = sdi_vendor_spgemm_run(v, g_ctx->stream, &c);
            if (s == SD_OK)
                s = sdi_stream_sync(g_ctx, "a cuSPARSE product", name);
            sdi_validation val;
            if (s == SD_OK)
                s = sdi_check_spgemm_output(g_ctx, &ref, c.rows, c.cols, c.nnz, c.rowptr, 8, c.colind, c.vals,
                                            &val);
            SDT_CHECK(s == SD_OK, "%s %s: product %d: %s", label, name, rep + 1, sd_last_error());
            sd_device_csr_free(&c);
            sdi_error_clear();
        }
        if (s == SD_OK)
            g_ok++;
        sdi_vendor_spgemm_destroy(v);
    }
    sdi_reference_free(&ref);
    sd_csr_free(&at);
}

static void test_spgemm_executor(void)
{
    sd_csr sq, rect, b;
    SDT_OK(sdi_gen("uniform:rows=5000,deg=6", 3, &sq));
    SDT_OK(sdi_gen("uniform:rows=3001,cols=1777,deg=5", 4, &rect));
    SDT_OK(sdi_gen("uniform:rows=5000,cols=2000,deg=4", 5, &b));
    long live = sdi_device_alloc_live();
    spgemm_case("A*A", &sq, NULL, 0);
    spgemm_case("A*At", &rect, NULL, 1);
    spgemm_case("A*B", &sq, &b, 0);
    SDT_CHECK(sdi_device_alloc_live() == live, "executors freed (%ld live)", sdi_device_alloc_live() - live);
    sd_csr_free(&sq);
    sd_csr_free(&rect);
    sd_csr_free(&b);
}

int main(void)
{
    sdt_init("test_vendor");
    sd_status s = sd_context_create(NULL, &g_ctx);
    if (s == SD_ERR_NO_DEVICE)
        return sdt_skip(sd_last_error());
    if (s != SD_OK) {
        printf("FAIL: sd_context_create: %s: %s\n", sd_status_string(s), sd_last_error());
        return 1;
    }
    cudaError_t e = cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        printf("FAIL: cudaStreamCreate: %s\n", cudaGetErrorString(e));
        sd_context_destroy(g_ctx);
        return 1;
    }
    SDT_RUN(test_arguments);
    SDT_RUN(test_uniform);
    SDT_RUN(test_powerlaw);
    SDT_RUN(test_stencil);
    SDT_RUN(test_rectangular);
    SDT_RUN(test_edge_cases);
    SDT_RUN(test_names_match_baseline);
    SDT_RUN(test_fault_injection);
    SDT_RUN(test_spgemm_executor);
    SDT_RUN(test_no_graph);
    printf("# variants validated: %d, refused by cuSPARSE (skipped): %d\n", g_ok, g_skipped);
    cudaStreamDestroy(g_stream);
    sd_context_destroy(g_ctx);
    return sdt_finish();
}
