/* tests/gpu/test_runtime.c: the GPU runtime end to end on a device: properties,
 * calibration (copy bandwidth, empty launch), NVRTC compile → load → launch → validate
 * → time with the runtime's CSR SpMV template on edge cases, every generator family and
 * a real matrix; the cubin memo (also under threads); launch programs replayed as a CUDA
 * graph; the legality check; device-allocation fault injection without leaks; a wrong
 * output caught by validation; and a faulting kernel reported with its name, after
 * which the context refuses work (run in a child process: the fault is sticky).
 * Skipped (exit 77) without a device. */
#include <sys/wait.h>
#include <unistd.h>

#include "core/io.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "sdt.h"

static sd_context *g_ctx;
static char *g_vector_src; /* the test kernel tests/data/spmv_csr_vector.cuh */

/* ------------------------------------------------------------------ helpers */

/* A CSR SpMV task: module, program with A, x, y on the device, and the reference. */
typedef struct {
    const sd_csr *a;
    sdi_module mod;
    sdi_program prog;
    int iy;
    sdi_reference ref;
    sdi_validation val;
} spmv_task;

static void task_free(spmv_task *t)
{
    sdi_program_free(&t->prog);
    sdi_module_unload(&t->mod);
    sdi_reference_free(&t->ref);
}

static sd_status task_build(spmv_task *t, const sd_csr *a, const float *x, int tpr, int block,
                            int exact)
{
    memset(t, 0, sizeof *t);
    t->a = a;
    sdi_program_init(&t->prog);
    char tpr_s[8], block_s[8];
    snprintf(tpr_s, sizeof tpr_s, "%d", tpr);
    snprintf(block_s, sizeof block_s, "%d", block);
    sdi_macro m[2] = {{"SD_TPR", tpr_s}, {"SD_BLOCK", block_s}};
    sdi_jit_request req = {.source = g_vector_src, .macros = m, .nmacros = 2,
                           .kernel_name = "sd_spmv_csr_vector"};
    sd_status s = sdi_module_build(g_ctx, &req, "sd_spmv_csr_vector", &t->mod);
    if (s != SD_OK)
        return s;
    sdi_function *f = &t->mod.functions[0];
    s = sdi_function_check_legal(g_ctx, f, block, 0);
    if (s != SD_OK)
        return s;
    int ir, ic, iv, ix;
    s = sdi_program_alloc_buffer(g_ctx, &t->prog, "rowptr", ((size_t)a->rows + 1) * 8, &ir);
    if (s == SD_OK)
        s = sdi_program_alloc_buffer(g_ctx, &t->prog, "colind", (size_t)a->nnz * 4, &ic);
    if (s == SD_OK)
        s = sdi_program_alloc_buffer(g_ctx, &t->prog, "vals", (size_t)a->nnz * 4, &iv);
    if (s == SD_OK)
        s = sdi_program_alloc_buffer(g_ctx, &t->prog, "x", (size_t)a->cols * 4, &ix);
    if (s == SD_OK)
        s = sdi_program_alloc_buffer(g_ctx, &t->prog, "y", (size_t)a->rows * 4, &t->iy);
    if (s == SD_OK)
        s = sdi_program_upload(g_ctx, &t->prog, "rowptr", a->rowptr, ((size_t)a->rows + 1) * 8);
    if (s == SD_OK)
        s = sdi_program_upload(g_ctx, &t->prog, "colind", a->colind, (size_t)a->nnz * 4);
    if (s == SD_OK)
        s = sdi_program_upload(g_ctx, &t->prog, "vals", a->vals, (size_t)a->nnz * 4);
    if (s == SD_OK)
        s = sdi_program_upload(g_ctx, &t->prog, "x", x, (size_t)a->cols * 4);
    if (s != SD_OK)
        return s;
    long long groups = block / tpr;
    long long grid = ((long long)a->rows + groups - 1) / groups;
    if (grid < 1)
        grid = 1;
    if (grid > 1 << 30)
        grid = 1 << 30;
    const unsigned g3[3] = {(unsigned)grid, 1, 1}, b3[3] = {(unsigned)block, 1, 1};
    sdi_arg args[6] = {sdi_arg_buffer(ir), sdi_arg_buffer(ic), sdi_arg_buffer(iv),
                       sdi_arg_buffer(ix), sdi_arg_buffer(t->iy), sdi_arg_i32(a->rows)};
    s = sdi_program_add_launch(&t->prog, f, g3, b3, 0, args, 6);
    if (s != SD_OK)
        return s;
    return sdi_reference_dense(a, SD_OP_SPMV, x, 1, exact, &t->ref);
}

static sd_status task_run(sd_context *ctx, void *arg, cudaStream_t st)
{
    return sdi_program_run(ctx, &((spmv_task *)arg)->prog, st);
}

static sd_status task_check(sd_context *ctx, void *arg)
{
    spmv_task *t = arg;
    return sdi_check_dense_output(ctx, &t->ref, t->prog.buffers[t->iy].dev, &t->val);
}

/* Compile → load → launch → validate (first warm-up) → time; prints one line. */
static void run_case(const char *name, const sd_csr *a, int exact, int tpr)
{
    float *x = malloc(((size_t)a->cols + 1) * sizeof *x);
    SDT_CHECK(x != NULL, "host x");
    if (x == NULL)
        return;
    sdi_gen_dense(x, a->cols, exact ? SDI_VALUES_SMALL_INT : SDI_VALUES_UNIFORM, sdt_seed);
    spmv_task t;
    sd_status s = task_build(&t, a, x, tpr, 256, exact);
    SDT_CHECK(s == SD_OK, "%s: building the task: %s", name, sd_last_error());
    if (s == SD_OK) {
        sdi_timing tm;
        s = sdi_measure(g_ctx, "sd_spmv_csr_vector", task_run, &t, task_check, &t, &tm);
        SDT_CHECK(s == SD_OK, "%s (TPR %d): %s", name, tpr, sd_last_error());
        SDT_CHECK(t.val.ok && t.val.n_checked == a->rows, "%s: validated %lld of %d rows",
                  name, (long long)t.val.n_checked, a->rows);
        if (s == SD_OK) {
            double roof = 1e6 * sdi_roofline_bytes(SD_OP_SPMV, a->rows, a->cols, a->nnz, 1) /
                          g_ctx->copy_bw;
            const sdi_function *f = &t.mod.functions[0];
            printf("  %-28s %8d x %-8d nnz %-9lld TPR %-2d regs %-3d local %zu B: mean %8.2f "
                   "min %8.2f med %8.2f pipe %8.2f us, roofline %5.1f%%%s\n",
                   name, a->rows, a->cols, (long long)a->nnz, tpr, f->num_regs, f->local_bytes,
                   tm.mean_us, tm.min_us, tm.median_us, tm.pipelined_us,
                   100 * roof / tm.mean_us, exact ? " (exact)" : "");
            double mx = 0;
            for (int r = 0; r < SDI_TIMED_RUNS; r++)
                mx = tm.runs_us[r] > mx ? tm.runs_us[r] : mx;
            SDT_CHECK(tm.min_us > 0 && tm.min_us <= tm.median_us && tm.median_us <= mx &&
                          tm.min_us <= tm.mean_us && tm.mean_us <= mx,
                      "timing summary ordered (min %g, median %g, mean %g, max %g)", tm.min_us,
                      tm.median_us, tm.mean_us, mx);
            SDT_CHECK(f->local_bytes == 0, "%s: no local memory (spills)", name);
        }
    }
    task_free(&t);
    free(x);
}

/* A CSR from a dense row-major picture (0 = absent). */
static void csr_from_dense(sd_csr *a, int rows, int cols, const float *d)
{
    int64_t nnz = 0;
    for (int i = 0; i < rows * cols; i++)
        nnz += d[i] != 0;
    sdi_csr_alloc(a, rows, cols, nnz);
    int64_t k = 0;
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++)
            if (d[i * cols + j] != 0) {
                a->colind[k] = j;
                a->vals[k++] = d[i * cols + j];
            }
        a->rowptr[i + 1] = k;
    }
}

/* ------------------------------------------------------------------ tests */

static void test_props(void)
{
    const sdi_gpu_props *g = &g_ctx->props;
    printf("  device %d: %s, cc %d.%d (%s), %d SMs, L2 %lld KiB, smem/CTA %d (opt-in %d), "
           "smem/SM %d, regs/CTA %d, regs/SM %d, threads/CTA %d, threads/SM %d, "
           "%.0f GB/s theoretical, %.1f GiB; driver %d, runtime %d\n",
           g_ctx->device, g->name, g->cc_major, g->cc_minor, g_ctx->arch, g->sm_count,
           (long long)g->l2_bytes / 1024, g->smem_per_cta_default, g->smem_per_cta_optin,
           g->smem_per_sm, g->regs_per_cta, g->regs_per_sm, g->max_threads_per_cta,
           g->max_threads_per_sm, g->mem_bandwidth * 1e-9,
           (double)g->global_mem_bytes / (1 << 30), g_ctx->driver_version,
           g_ctx->runtime_version);
    SDT_CHECK(g->from_device == 1, "from the device");
    SDT_CHECK(g->sm_count > 0 && g->l2_bytes > 0 && g->regs_per_cta > 0, "sizes read");
    SDT_CHECK(g->smem_per_cta_optin >= g->smem_per_cta_default, "opt-in >= default smem");
    SDT_CHECK(g->mem_bandwidth > 1e11, "bandwidth %.3g B/s", g->mem_bandwidth);
    SDT_CHECK(strncmp(g_ctx->arch, "sm_", 3) == 0, "arch %s", g_ctx->arch);
    sdi_gpu_props p;
    SDT_OK(sdi_runtime_gpu_props(g_ctx->device, &p));
    SDT_CHECK(strcmp(p.name, g->name) == 0, "same name");
    SDT_STATUS(sdi_runtime_gpu_props(-1, &p), SD_ERR_INVALID_ARG);
}

static void test_calibrate(void)
{
    SDT_OK(sdi_device_calibrate(g_ctx));
    printf("  copy bandwidth %.0f GB/s (read + written; %.0f%% of theoretical), empty launch "
           "%.2f us mean, %.2f us min\n",
           g_ctx->copy_bw * 1e-9, 100 * g_ctx->copy_bw / g_ctx->props.mem_bandwidth,
           g_ctx->launch_us_mean, g_ctx->launch_us_min);
    SDT_CHECK(g_ctx->copy_bw > 1e11 && g_ctx->copy_bw < 2 * g_ctx->props.mem_bandwidth,
              "copy bandwidth %.3g B/s", g_ctx->copy_bw);
    SDT_CHECK(g_ctx->launch_us_min > 0.3 && g_ctx->launch_us_mean < 200,
              "launch %.2f us", g_ctx->launch_us_mean);
    double bw = g_ctx->copy_bw;
    SDT_OK(sdi_device_calibrate(g_ctx));
    SDT_CHECK(g_ctx->copy_bw == bw, "measured once per context");
}

static void test_edge_cases(void)
{
    sd_csr a;
    float one[1] = {2};
    csr_from_dense(&a, 1, 1, one);
    run_case("1x1", &a, 1, 32);
    run_case("1x1", &a, 1, 1);
    sd_csr_free(&a);
    /* 0 entries: y must become all zeros. */
    SDT_OK(sdi_csr_alloc(&a, 5, 7, 0));
    run_case("5x7 empty", &a, 1, 4);
    sd_csr_free(&a);
    /* Empty rows between full ones, rectangular. */
    float d[6 * 9] = {0};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 9; j++)
            if (i % 3 != 1 && (i + j) % 2 == 0)
                d[i * 9 + j] = (float)((i * 7 + j) % 4 - 2 >= 0 ? (i * 7 + j) % 4 - 1 : -1);
    csr_from_dense(&a, 6, 9, d);
    run_case("6x9 empty rows", &a, 1, 2);
    sd_csr_free(&a);
    /* One huge row among short ones (a warp per row still covers it). */
    sd_csr h;
    SDT_OK(sdi_gen("bimodal:rows=2000,cols=300000,short=2,long=200000,frac=0.001,values=int",
                   sdt_seed, &h));
    if (h.rowptr != NULL) {
        run_case("huge rows (bimodal)", &h, 1, 32);
        run_case("huge rows (bimodal)", &h, 1, 1);
    }
    sd_csr_free(&h);
}

/* Every generator family, exact (small integers) and by bound (uniform values). */
static void test_generator_families(void)
{
    static const char *specs[] = {
        "stencil2d:n=300,values=int",
        "stencil3d7:n=40,values=int",
        "stencil3d27:n=24,values=int",
        "banded:n=20000,bw=16,values=int",
        "blockdiag:n=8192,b=32,values=int",
        "uniform:rows=100000,cols=50000,deg=12,values=int",
        "powerlaw:rows=50000,deg=10,values=int",
        "rmat:scale=15,ef=16,values=int",
        "knn:n=20000,k=8,values=int",
        "bimodal:rows=20000,values=int",
        "uniform:rows=200000,deg=20",
        "powerlaw:rows=100000,deg=16,alpha=1.8",
    };
    const int tprs[] = {32, 4};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        sd_csr a;
        sd_status s = sdi_gen(specs[i], sdt_seed + i, &a);
        SDT_CHECK(s == SD_OK, "%s: %s", specs[i], sd_last_error());
        if (s != SD_OK)
            continue;
        int exact = strstr(specs[i], "values=int") != NULL;
        for (int t = 0; t < 2; t++)
            run_case(specs[i], &a, exact, tprs[t]);
        sd_csr_free(&a);
    }
}

static void test_real_matrix(void)
{
    const char *names[] = {"bcsstk13.mtx.gz", "wiki-Vote.mtx.gz", "Chem97Zt.mtx.gz"};
    int found = 0;
    for (int i = 0; i < 3; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/suitesparse/%s", SD_MATRICES_DIR, names[i]);
        if (access(path, R_OK) != 0)
            continue;
        found++;
        sd_csr a;
        sdi_mtx_info info;
        sd_status s = sdi_csr_read_info(path, &a, &info);
        SDT_CHECK(s == SD_OK, "%s: %s", path, sd_last_error());
        if (s != SD_OK)
            continue;
        if (info.field == SDI_MTX_PATTERN)
            sdi_gen_values(&a, SDI_VALUES_UNIFORM, sdt_seed);
        run_case(names[i], &a, 0, 32);
        run_case(names[i], &a, 0, 8);
        sd_csr_free(&a);
    }
    if (found == 0)
        printf("  (no real matrices under %s/suitesparse: skipped)\n", SD_MATRICES_DIR);
}

static void test_memo(void)
{
    sdi_macro m[1] = {{"SD_TPR", "16"}};
    sdi_jit_request req = {.source = g_vector_src, .macros = m, .nmacros = 1};
    const sdi_cubin *c1 = NULL, *c2 = NULL;
    bool hit = true;
    SDT_OK(sdi_jit_get(g_ctx, &req, &c1, &hit));
    SDT_CHECK(!hit, "first request compiles");
    SDT_OK(sdi_jit_get(g_ctx, &req, &c2, &hit));
    SDT_CHECK(hit && c1 == c2, "second request hits the memo");
    sdi_macro m2[1] = {{"SD_TPR", "2"}};
    sdi_jit_request other = {.source = g_vector_src, .macros = m2,
                             .nmacros = 1};
    SDT_OK(sdi_jit_get(g_ctx, &other, &c2, &hit));
    SDT_CHECK(!hit && c2 != c1, "other macros miss");
    /* The cubin's architecture is the device's. */
    SDT_CHECK(c1->size > 0, "memo cubin");
}

typedef struct {
    const sdi_cubin *got;
    sd_status s;
} thread_result;

static void *memo_thread(void *arg)
{
    thread_result *r = arg;
    sdi_macro m[2] = {{"SD_TPR", "8"}, {"SD_BLOCK", "384"}};
    sdi_jit_request req = {.source = g_vector_src, .macros = m, .nmacros = 2};
    r->s = sdi_jit_get(g_ctx, &req, &r->got, NULL);
    return NULL;
}

/* Many threads asking for one new kernel at once: one cubin comes back to all. */
static void test_memo_threads(void)
{
    pthread_t th[6];
    thread_result r[6];
    memset(r, 0, sizeof r);
    for (int i = 0; i < 6; i++)
        pthread_create(&th[i], NULL, memo_thread, &r[i]);
    for (int i = 0; i < 6; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 6; i++) {
        SDT_CHECK(r[i].s == SD_OK, "thread %d: %s", i, sd_status_string(r[i].s));
        SDT_CHECK(r[i].got == r[0].got, "thread %d got the same cubin", i);
    }
}

/* Three launches (y1 = A·x, y2 = A·x, y3 = A·x) replayed as one CUDA graph. */
static void test_graph(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=200,values=int", sdt_seed, &a));
    float *x = malloc((size_t)a.cols * sizeof *x);
    sdi_gen_dense(x, a.cols, SDI_VALUES_SMALL_INT, sdt_seed);
    spmv_task t;
    SDT_OK(task_build(&t, &a, x, 8, 256, 1));
    int extra[2];
    SDT_OK(sdi_program_alloc_buffer(g_ctx, &t.prog, "y2", (size_t)a.rows * 4, &extra[0]));
    SDT_OK(sdi_program_alloc_buffer(g_ctx, &t.prog, "y3", (size_t)a.rows * 4, &extra[1]));
    sdi_launch first = t.prog.launches[0];
    for (int i = 0; i < 2; i++) {
        sdi_arg args[6];
        memcpy(args, first.args, sizeof args);
        args[4] = sdi_arg_buffer(extra[i]);
        SDT_OK(sdi_program_add_launch(&t.prog, first.fn, first.grid, first.block, 0, args, 6));
    }
    sdi_timing plain, graph;
    SDT_OK(sdi_measure(g_ctx, "3 launches", task_run, &t, task_check, &t, &plain));
    t.prog.use_graph = true;
    SDT_OK(sdi_measure(g_ctx, "3 launches (graph)", task_run, &t, task_check, &t, &graph));
    SDT_CHECK(t.prog.graph != NULL && t.prog.graph_runs > 0, "graph built and replayed");
    for (int i = 0; i < 2; i++) {
        sdi_validation v;
        SDT_OK(sdi_check_dense_output(g_ctx, &t.ref, t.prog.buffers[extra[i]].dev, &v));
    }
    printf("  3 launches: %.2f us (pipelined %.2f); as a graph: %.2f us (pipelined %.2f)\n",
           plain.mean_us, plain.pipelined_us, graph.mean_us, graph.pipelined_us);
    void *y2 = t.prog.buffers[extra[0]].dev;
    SDT_STATUS(sdi_program_bind_buffer(&t.prog, "y2", y2, (size_t)a.rows * 4, NULL),
               SD_ERR_INVALID_ARG); /* owned buffers cannot be rebound */

    /* A fourth launch into a caller's buffer: rebinding it updates the graph's node
     * arguments in place (same executable graph), and the output lands in the new one. */
    const size_t ybytes = (size_t)a.rows * 4;
    float *yc[2] = {NULL, NULL};
    SDT_OK(sdi_device_malloc(g_ctx, (void **)&yc[0], ybytes, "yc0"));
    SDT_OK(sdi_device_malloc(g_ctx, (void **)&yc[1], ybytes, "yc1"));
    int ic = -1;
    SDT_OK(sdi_program_bind_buffer(&t.prog, "yc", yc[0], ybytes, &ic));
    sdi_arg args[6];
    memcpy(args, first.args, sizeof args);
    args[4] = sdi_arg_buffer(ic);
    SDT_OK(sdi_program_add_launch(&t.prog, first.fn, first.grid, first.block, 0, args, 6));
    for (int i = 0; i < 2; i++) {
        SDT_OK(sdi_program_bind_buffer(&t.prog, "yc", yc[i], ybytes, NULL));
        SDT_OK(sdi_cuda_status(g_ctx, cudaMemset(yc[i], 0xff, ybytes), "poisoning", NULL));
        long runs = t.prog.graph_runs;
        cudaGraphExec_t before = t.prog.graph;
        SDT_OK(sdi_program_run(g_ctx, &t.prog, g_ctx->stream));
        SDT_OK(sdi_stream_sync(g_ctx, "graph run", NULL));
        SDT_CHECK(t.prog.graph_runs == runs + 1 && !t.prog.graph_failed, "run %d replayed the graph", i);
        if (i == 1)
            SDT_CHECK(t.prog.graph == before, "a rebound buffer keeps the instantiated graph");
        sdi_validation v;
        SDT_OK(sdi_check_dense_output(g_ctx, &t.ref, yc[i], &v));
        SDT_CHECK(v.ok, "output in the buffer bound for run %d", i);
    }
    /* A stream the caller captures: plain launches go into the caller's graph. */
    cudaStream_t cs = NULL;
    cudaGraph_t cg = NULL;
    cudaGraphExec_t ce = NULL;
    SDT_OK(sdi_cuda_status(g_ctx, cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), "stream", NULL));
    SDT_OK(sdi_cuda_status(g_ctx, cudaMemset(yc[1], 0xff, ybytes), "poisoning", NULL));
    long runs = t.prog.graph_runs;
    SDT_OK(sdi_cuda_status(g_ctx, cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), "capture", NULL));
    sd_status rs = sdi_program_run(g_ctx, &t.prog, cs);
    SDT_OK(sdi_cuda_status(g_ctx, cudaStreamEndCapture(cs, &cg), "end capture", NULL));
    SDT_OK(rs);
    SDT_CHECK(t.prog.graph_runs == runs, "no graph launch inside the caller's capture");
    SDT_OK(sdi_cuda_status(g_ctx, cudaGraphInstantiate(&ce, cg, 0), "instantiate", NULL));
    SDT_OK(sdi_cuda_status(g_ctx, cudaGraphLaunch(ce, cs), "caller's graph", NULL));
    SDT_OK(sdi_cuda_status(g_ctx, cudaStreamSynchronize(cs), "caller's stream", NULL));
    sdi_validation v;
    SDT_OK(sdi_check_dense_output(g_ctx, &t.ref, yc[1], &v));
    SDT_CHECK(v.ok, "the caller's graph computed y");
    cudaGraphExecDestroy(ce);
    cudaGraphDestroy(cg);
    cudaStreamDestroy(cs);
    sdi_device_free(yc[0]);
    sdi_device_free(yc[1]);
    task_free(&t);
    free(x);
    sd_csr_free(&a);
}

/* The search's screened protocol: validated first, then one timed execution; a slow
 * candidate stops there (2 executions in all), a fast one gets the full protocol. */
typedef struct {
    spmv_task *t;
    int runs;
} counted;

static sd_status counted_run(sd_context *ctx, void *arg, cudaStream_t st)
{
    counted *c = arg;
    c->runs++;
    return task_run(ctx, c->t, st);
}

static void test_screened(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("uniform:rows=20000,deg=8,values=int", sdt_seed, &a));
    float *x = malloc((size_t)a.cols * sizeof *x);
    sdi_gen_dense(x, a.cols, SDI_VALUES_SMALL_INT, sdt_seed);
    spmv_task t;
    SDT_OK(task_build(&t, &a, x, 8, 256, 1));
    counted c = {&t, 0};
    sdi_timing tm;
    sdi_measured how = SDI_MEASURED_FULL;
    memset(&t.val, 0, sizeof t.val);
    sdi_screen sc = {.screen_us = 1e-3};
    SDT_OK(sdi_measure_screened(g_ctx, "screened", counted_run, &c, task_check, &t, &sc, &tm, &how));
    SDT_CHECK(how == SDI_MEASURED_SCREENED && c.runs == 2, "screened %d after %d executions", (int)how, c.runs);
    SDT_CHECK(t.val.ok && t.val.n_checked == a.rows, "screened: the output was still validated");
    SDT_CHECK(tm.mean_us > 0 && tm.mean_us == tm.min_us && tm.mean_us == tm.pipelined_us &&
                  tm.runs_us[SDI_TIMED_RUNS - 1] == tm.mean_us,
              "screened timing holds the one execution");
    c.runs = 0;
    sc.screen_us = 1e9;
    SDT_OK(sdi_measure_screened(g_ctx, "full", counted_run, &c, task_check, &t, &sc, &tm, &how));
    SDT_CHECK(how == SDI_MEASURED_FULL && c.runs == 2 + (SDI_WARMUPS - 2) + SDI_TIMED_RUNS + SDI_PIPELINED_RUNS,
              "full protocol: how %d, %d executions", (int)how, c.runs);
    /* Brief: a candidate at least brief_us long gets SDI_BRIEF_RUNS timed executions after
     * the timed warm-up, nothing else (still validated first); below it, the full protocol. */
    c.runs = 0;
    memset(&t.val, 0, sizeof t.val);
    sc.brief_us = 1e-3;
    SDT_OK(sdi_measure_screened(g_ctx, "brief", counted_run, &c, task_check, &t, &sc, &tm, &how));
    SDT_CHECK(how == SDI_MEASURED_BRIEF && c.runs == 2 + SDI_BRIEF_RUNS, "brief: how %d after %d executions",
              (int)how, c.runs);
    SDT_CHECK(t.val.ok && t.val.n_checked == a.rows, "brief: the output was still validated");
    SDT_CHECK(tm.mean_us > 0 && tm.min_us <= tm.median_us && tm.median_us <= tm.mean_us * SDI_BRIEF_RUNS &&
                  tm.pipelined_us == tm.mean_us && tm.runs_us[SDI_BRIEF_RUNS] == 0,
              "brief timing: mean %.2f min %.2f median %.2f pipelined %.2f", tm.mean_us, tm.min_us,
              tm.median_us, tm.pipelined_us);
    /* Very long (brief_long_us): one timed execution after the timed warm-up, the two the
     * timing. */
    c.runs = 0;
    memset(&t.val, 0, sizeof t.val);
    sc.brief_long_us = 1e-3;
    SDT_OK(sdi_measure_screened(g_ctx, "brief, long", counted_run, &c, task_check, &t, &sc, &tm, &how));
    SDT_CHECK(how == SDI_MEASURED_BRIEF && c.runs == 3, "brief, long: how %d after %d executions",
              (int)how, c.runs);
    SDT_CHECK(t.val.ok && t.val.n_checked == a.rows, "brief, long: the output was still validated");
    SDT_CHECK(tm.runs_us[0] > 0 && tm.runs_us[1] > 0 && tm.runs_us[2] == 0 &&
                  tm.mean_us == 0.5 * (tm.runs_us[0] + tm.runs_us[1]) && tm.pipelined_us == tm.mean_us,
              "brief, long timing: runs %.2f %.2f %.2f mean %.2f", tm.runs_us[0], tm.runs_us[1],
              tm.runs_us[2], tm.mean_us);
    sc.brief_long_us = 0;
    c.runs = 0;
    sc.brief_us = 1e9;
    SDT_OK(sdi_measure_screened(g_ctx, "not brief", counted_run, &c, task_check, &t, &sc, &tm, &how));
    SDT_CHECK(how == SDI_MEASURED_FULL && c.runs == SDI_WARMUPS + SDI_TIMED_RUNS + SDI_PIPELINED_RUNS,
              "below brief_us: how %d, %d executions", (int)how, c.runs);
    c.runs = 0;
    SDT_OK(sdi_measure(g_ctx, "plain", counted_run, &c, task_check, &t, &tm));
    SDT_CHECK(c.runs == SDI_WARMUPS + SDI_TIMED_RUNS + SDI_PIPELINED_RUNS, "plain protocol: %d executions", c.runs);
    printf("  screened protocol: 2 executions; full: %d\n", SDI_WARMUPS + SDI_TIMED_RUNS + SDI_PIPELINED_RUNS);
    task_free(&t);
    free(x);
    sd_csr_free(&a);
}

/* A corrupted output entry is caught and named. */
static void test_validation_catches(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("uniform:rows=5000,deg=8,values=int", sdt_seed, &a));
    float *x = malloc((size_t)a.cols * sizeof *x);
    sdi_gen_dense(x, a.cols, SDI_VALUES_SMALL_INT, sdt_seed);
    spmv_task t;
    SDT_OK(task_build(&t, &a, x, 32, 128, 1));
    SDT_OK(sdi_program_run(g_ctx, &t.prog, g_ctx->stream));
    SDT_OK(sdi_stream_sync(g_ctx, "spmv", "sd_spmv_csr_vector"));
    SDT_OK(task_check(g_ctx, &t));
    float bad = 12345.0f;
    float *y = t.prog.buffers[t.iy].dev;
    SDT_OK(sdi_copy_to_device(g_ctx, y + 1234, &bad, sizeof bad, "a wrong entry"));
    SDT_STATUS(task_check(g_ctx, &t), SD_ERR_VALIDATION);
    SDT_CHECK(strstr(sd_last_error(), "1234") != NULL, "names the entry: %s", sd_last_error());
    /* The bound variant catches it too. */
    t.ref.exact = 0;
    SDT_STATUS(task_check(g_ctx, &t), SD_ERR_VALIDATION);
    task_free(&t);
    free(x);
    sd_csr_free(&a);
}

static void test_legality(void)
{
    sdi_module m;
    sdi_jit_request req = {.source = g_vector_src};
    SDT_OK(sdi_module_build(g_ctx, &req, "sd_spmv_csr_vector", &m));
    sdi_function *f = sdi_module_function(&m, "sd_spmv_csr_vector");
    SDT_CHECK(f != NULL && f->num_regs > 0, "registers read back");
    if (f != NULL) {
        printf("  sd_spmv_csr_vector: %d regs, %zu B static smem, %zu B local, max %d "
               "threads, binary %d\n",
               f->num_regs, f->static_smem, f->local_bytes, f->max_threads, f->binary_version);
        SDT_OK(sdi_function_check_legal(g_ctx, f, 256, 0));
        SDT_STATUS(sdi_function_check_legal(g_ctx, f, 2048, 0), SD_ERR_UNSUPPORTED);
        SDT_STATUS(sdi_function_check_legal(g_ctx, f, 128, 1 << 30), SD_ERR_UNSUPPORTED);
        SDT_STATUS(sdi_function_check_legal(g_ctx, f, 128, 64 * 1024), SD_ERR_UNSUPPORTED);
        SDT_OK(sdi_function_reserve_smem(g_ctx, f, 64 * 1024));
        SDT_OK(sdi_function_check_legal(g_ctx, f, 128, 64 * 1024));
    }
    SDT_CHECK(sdi_module_function(&m, "nope") == NULL, "absent function");
    sdi_module_unload(&m);
    /* A name the cubin lacks. */
    const sdi_cubin *c = NULL;
    SDT_OK(sdi_jit_get(g_ctx, &req, &c, NULL));
    const char *names[1] = {"sd_not_there"};
    SDT_STATUS(sdi_module_load(g_ctx, c->cubin, c->size, names, 1, &m), SD_ERR_CUDA);
    SDT_CHECK(strstr(sd_last_error(), "sd_not_there") != NULL, "names it: %s", sd_last_error());
    /* A compile error on the device path. */
    sdi_jit_request bad = {.source = "SD_KERNEL void f( {", .kernel_name = "sd_bad"};
    SDT_STATUS(sdi_module_build(g_ctx, &bad, "sd_bad", &m), SD_ERR_COMPILE);
}

/* Every device allocation of a task may fail: OOM, and nothing left allocated. */
static void test_device_fault_injection(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=50,values=int", sdt_seed, &a));
    float *x = malloc((size_t)a.cols * sizeof *x);
    sdi_gen_dense(x, a.cols, SDI_VALUES_SMALL_INT, sdt_seed);
    long live0 = sdi_device_alloc_live();
    int failures = 0;
    for (long n = 0; n < 32; n++) {
        spmv_task t;
        sdi_device_alloc_fail_after(n);
        sd_status s = task_build(&t, &a, x, 4, 128, 1);
        sdi_device_alloc_fail_after(-1);
        if (s == SD_OK) {
            sdi_timing tm;
            SDT_OK(sdi_measure(g_ctx, "after injection", task_run, &t, task_check, &t, &tm));
            task_free(&t);
            break;
        }
        failures++;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "failure %ld: %s (%s)", n, sd_status_string(s),
                  sd_last_error());
        task_free(&t);
        SDT_CHECK(sdi_device_alloc_live() == live0, "no device leak after failure %ld", n);
    }
    SDT_CHECK(failures == 5, "five device allocations in a task (saw %d failures)", failures);
    SDT_CHECK(sdi_device_alloc_live() == live0, "no device leak");
    free(x);
    sd_csr_free(&a);
}

/* ------------------------------------------------------------------ the fault (child) */

static const char fault_source[] =
    "#include \"sd_common.cuh\"\n"
    "SD_KERNEL void sd_fault_kernel(float *p) { p[threadIdx.x] = 1.0f; }\n";

/* Runs in a fresh process: a kernel writing through a NULL pointer. */
static int fault_child(void)
{
    sd_context *ctx = NULL;
    if (sd_context_create(NULL, &ctx) != SD_OK) {
        printf("  child: no context: %s\n", sd_last_error());
        return 2;
    }
    int bad = 0;
    sdi_module m;
    sdi_program p;
    sdi_program_init(&p);
    sdi_jit_request req = {.source = fault_source, .kernel_name = "sd_fault_kernel"};
    if (sdi_module_build(ctx, &req, "sd_fault_kernel", &m) != SD_OK) {
        printf("  child: build failed: %s\n", sd_last_error());
        return 3;
    }
    sdi_arg arg = {.kind = SDI_ARG_PTR, .buffer = -1};
    arg.v.ptr = NULL;
    const unsigned g[3] = {1, 1, 1}, b[3] = {32, 1, 1};
    if (sdi_program_add_launch(&p, &m.functions[0], g, b, 0, &arg, 1) != SD_OK)
        return 4;
    sd_status s = sdi_program_run(ctx, &p, ctx->stream);
    if (s == SD_OK)
        s = sdi_stream_sync(ctx, "running the faulting kernel", "sd_fault_kernel");
    printf("  child: fault reported as %s: %s\n", sd_status_string(s), sd_last_error());
    if (s != SD_ERR_CUDA || strstr(sd_last_error(), "sd_fault_kernel") == NULL ||
        strstr(sd_last_error(), "unusable") == NULL) {
        printf("  child: expected SD_ERR_CUDA naming sd_fault_kernel and the unusable context\n");
        bad = 1;
    }
    s = sdi_ctx_enter(ctx);
    printf("  child: the next call: %s: %s\n", sd_status_string(s), sd_last_error());
    if (s != SD_ERR_CUDA || strstr(sd_last_error(), "earlier error") == NULL)
        bad = 1;
    sdi_device_calibrate(ctx); /* refused, not attempted */
    if (strstr(sd_last_error(), "earlier error") == NULL)
        bad = 1;
    sdi_program_free(&p);
    sdi_module_unload(&m);
    sd_context_destroy(ctx);
    return bad;
}

static char *g_self;

static void test_fault_is_reported(void)
{
    if (getenv("SD_TEST_NO_FAULT") != NULL) {
        printf("  (SD_TEST_NO_FAULT set: the deliberate fault is not run)\n");
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* exec gives the child a CUDA state of its own (CUDA does not survive fork). */
        execl("/proc/self/exe", g_self, "--fault-child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    SDT_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "child ran");
    SDT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the faulting kernel was reported and the context refused further work (child "
              "status %d)", status);
}

int main(int argc, char **argv)
{
    g_self = argv[0];
    g_vector_src = sdt_data_text("spmv_csr_vector.cuh");
    if (argc > 1 && strcmp(argv[1], "--fault-child") == 0)
        return fault_child();
    sdt_init("test_runtime");
    sd_status s = sd_context_create(NULL, &g_ctx);
    if (s == SD_ERR_NO_DEVICE)
        return sdt_skip(sd_last_error());
    if (s != SD_OK) {
        printf("FAIL: sd_context_create: %s: %s\n", sd_status_string(s), sd_last_error());
        return 1;
    }
    SDT_RUN(test_props);
    SDT_RUN(test_calibrate);
    SDT_RUN(test_legality);
    SDT_RUN(test_memo);
    SDT_RUN(test_memo_threads);
    SDT_RUN(test_edge_cases);
    SDT_RUN(test_generator_families);
    SDT_RUN(test_real_matrix);
    SDT_RUN(test_graph);
    SDT_RUN(test_screened);
    SDT_RUN(test_validation_catches);
    SDT_RUN(test_device_fault_injection);
    SDT_RUN(test_fault_is_reported);
    sd_context_destroy(g_ctx);
    free(g_vector_src);
    return sdt_finish();
}
