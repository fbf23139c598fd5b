/* bench/bench_launch.c: what a launch costs on each path we could take, and what ours and
 * cuSPARSE's cost around their kernels. The question it answers: tasks whose kernel is
 * shorter than cuSPARSE's (Nsight Compute) still lose pipelined (10 back-to-back
 * executions), so the cost is around the kernels.
 *
 * Part 1, an empty kernel and a small copy kernel (n floats), launched through
 *   library   cudaLibraryLoadData + cudaLibraryGetKernel + cudaLaunchKernel (plain)
 *   program   the same through sdi_program_run (argument marshalling included), plain
 *             and as the program's graph (and, for the copy, with y rebound every call)
 *   cufunc    the library kernel's CUfunction in this context + cuLaunchKernel
 *   module    cuModuleLoadData + cuModuleGetFunction + cuLaunchKernel
 *   graph     a one-node CUDA graph of the library launch, cudaGraphLaunch
 * Part 2, tasks (generator specs): our compiled kernel (sd_compile without cuSPARSE, run
 *   by sd_spmv / sd_spmm) against cuSPARSE variants (sdi_vendor_run), each also captured
 *   by its caller into a graph (what a user could do with cuSPARSE's calls).
 * For each: per execution (event pair around each of 10, mean), pipelined (10 and 100
 * back to back between two events, per execution) and the host's issue time per
 * execution (wall clock of issuing 100 without waiting).
 *
 *   bench_launch --out DIR [--n FLOATS] [--task SPEC:OP[:K] ...]
 *
 * OP is spmv or spmm (K the width). Writes DIR/bench_launch.json and DIR/bench_launch.md.
 * Exit 0, 1 on a CUDA or library error, 3 without a device. */
#include <cuda.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen/gen.h"
#include "runtime/runtime.h"

#define MAX_TASKS 16
#define MAX_ROWS 256

typedef CUresult (*pfn_kernel_get_function)(CUfunction *, CUkernel);
typedef CUresult (*pfn_module_load_data)(CUmodule *, const void *);
typedef CUresult (*pfn_module_get_function)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_module_unload)(CUmodule);
typedef CUresult (*pfn_launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, CUstream, void **, void **);

static struct {
    pfn_kernel_get_function kernel_get_function;
    pfn_module_load_data module_load_data;
    pfn_module_get_function module_get_function;
    pfn_module_unload module_unload;
    pfn_launch_kernel launch_kernel;
} drv;

static int driver_entry(const char *sym, void **fn)
{
    enum cudaDriverEntryPointQueryResult q;
    cudaError_t e = cudaGetDriverEntryPointByVersion(sym, fn, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || *fn == NULL) {
        fprintf(stderr, "bench_launch: driver entry point %s unavailable (%s)\n", sym,
                cudaGetErrorName(e));
        return -1;
    }
    return 0;
}

static int load_driver(void)
{
    return driver_entry("cuKernelGetFunction", (void **)&drv.kernel_get_function) ||
           driver_entry("cuModuleLoadData", (void **)&drv.module_load_data) ||
           driver_entry("cuModuleGetFunction", (void **)&drv.module_get_function) ||
           driver_entry("cuModuleUnload", (void **)&drv.module_unload) ||
           driver_entry("cuLaunchKernel", (void **)&drv.launch_kernel);
}

/* One way of enqueueing one execution. */
typedef int (*launch_fn)(void *arg, cudaStream_t st);

typedef struct {
    char name[96];
    double each_us, pipe10_us, pipe100_us, issue_us;
} row;

static row rows[MAX_ROWS];
static int nrows;

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "bench_launch: %s: %s\n", what, cudaGetErrorString(e));
    return -1;
}

/* Times `fn` by the protocol of docs/ARCHITECTURE.md "Measurement" (5 warm-ups, 10 event
 * pairs, pipelined 10) plus pipelined 100 and the host issue time of 100. */
static int measure(const char *name, launch_fn fn, void *arg, cudaStream_t st)
{
    if (nrows == MAX_ROWS)
        return -1;
    cudaEvent_t a = NULL, b = NULL;
    if (cuda_ok(cudaEventCreate(&a), "cudaEventCreate") ||
        cuda_ok(cudaEventCreate(&b), "cudaEventCreate"))
        return -1;
    row *r = &rows[nrows];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    int rc = 0;
    for (int i = 0; i < 5 && rc == 0; i++)
        rc = fn(arg, st);
    rc = rc || cuda_ok(cudaStreamSynchronize(st), "warm-up");
    double sum = 0;
    for (int i = 0; i < 10 && rc == 0; i++) {
        float ms = 0;
        rc = cuda_ok(cudaEventRecord(a, st), "record") || fn(arg, st) ||
             cuda_ok(cudaEventRecord(b, st), "record") ||
             cuda_ok(cudaEventSynchronize(b), "sync") ||
             cuda_ok(cudaEventElapsedTime(&ms, a, b), "elapsed");
        sum += ms * 1e3;
    }
    r->each_us = sum / 10;
    const int reps[2] = {10, 100};
    for (int k = 0; k < 2 && rc == 0; k++) {
        float ms = 0;
        rc = cuda_ok(cudaEventRecord(a, st), "record");
        for (int i = 0; i < reps[k] && rc == 0; i++)
            rc = fn(arg, st);
        rc = rc || cuda_ok(cudaEventRecord(b, st), "record") ||
             cuda_ok(cudaEventSynchronize(b), "sync") ||
             cuda_ok(cudaEventElapsedTime(&ms, a, b), "elapsed");
        (k == 0 ? &r->pipe10_us : &r->pipe100_us)[0] = ms * 1e3 / reps[k];
    }
    if (rc == 0) {
        double t0 = sdi_now();
        for (int i = 0; i < 100 && rc == 0; i++)
            rc = fn(arg, st);
        r->issue_us = (sdi_now() - t0) * 1e6 / 100;
        rc = rc || cuda_ok(cudaStreamSynchronize(st), "issue sync");
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (rc != 0)
        return -1;
    fprintf(stderr, "%-44s each %7.2f  pipe10 %7.2f  pipe100 %7.2f  issue %6.2f us\n", r->name,
            r->each_us, r->pipe10_us, r->pipe100_us, r->issue_us);
    nrows++;
    return 0;
}

/* ------------------------------------------------------------------ part 1: paths */

static const char kernels_source[] =
    "extern \"C\" __global__ void bl_empty(void) {}\n"
    "extern \"C\" __global__ void bl_copy(const float *__restrict__ x, float *__restrict__ y,"
    " int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0f * x[i]; }\n";

typedef struct {
    cudaKernel_t kernel; /* library path */
    CUfunction func;     /* cufunc or module path */
    cudaGraphExec_t graph;
    sdi_program *prog;
    sd_context *ctx;
    unsigned grid, block;
    void **params;
    void *y[2]; /* the copy kernel's outputs, for the rebinding path */
    size_t ybytes;
    int flip;
} path_arg;

static int run_library(void *p, cudaStream_t st)
{
    path_arg *a = p;
    dim3 g = {a->grid, 1, 1}, b = {a->block, 1, 1};
    return cuda_ok(cudaLaunchKernel((const void *)a->kernel, g, b, a->params, 0, st),
                   "cudaLaunchKernel");
}

static int run_cufunction(void *p, cudaStream_t st)
{
    path_arg *a = p;
    CUresult e = drv.launch_kernel(a->func, a->grid, 1, 1, a->block, 1, 1, 0, (CUstream)st,
                                   a->params, NULL);
    if (e != CUDA_SUCCESS)
        fprintf(stderr, "bench_launch: cuLaunchKernel: error %d\n", (int)e);
    return e == CUDA_SUCCESS ? 0 : -1;
}

static int run_graph(void *p, cudaStream_t st)
{
    return cuda_ok(cudaGraphLaunch(((path_arg *)p)->graph, st), "cudaGraphLaunch");
}

static int run_program(void *p, cudaStream_t st)
{
    path_arg *a = p;
    return sdi_program_run(a->ctx, a->prog, st) == SD_OK ? 0 : -1;
}

/* The graph path with the output moving between two buffers every call (a caller's
 * ping-pong vectors): each run updates the node's arguments. */
static int run_program_rebind(void *p, cudaStream_t st)
{
    path_arg *a = p;
    a->flip ^= 1;
    if (sdi_program_bind_buffer(a->prog, "y", a->y[a->flip], a->ybytes, NULL) != SD_OK)
        return -1;
    return sdi_program_run(a->ctx, a->prog, st) == SD_OK ? 0 : -1;
}

/* The five paths for one kernel of the cubin. */
static int measure_paths(sd_context *ctx, const sdi_cubin *cubin, const char *kernel,
                         unsigned grid, unsigned block, void **params, const sdi_arg *args,
                         int nargs, void *const *ybuf, size_t ybytes)
{
    sdi_module m;
    sdi_program prog;
    CUmodule mod = NULL;
    cudaGraph_t g = NULL;
    path_arg a;
    memset(&a, 0, sizeof a);
    sdi_program_init(&prog);
    int rc = -1;
    char name[96];
    const char *names[1] = {kernel};
    if (sdi_module_load(ctx, cubin->cubin, cubin->size, names, 1, &m) != SD_OK) {
        fprintf(stderr, "bench_launch: %s\n", sd_last_error());
        return -1;
    }
    a.kernel = m.functions[0].kernel;
    a.grid = grid;
    a.block = block;
    a.params = params;
    a.prog = &prog;
    a.ctx = ctx;
    snprintf(name, sizeof name, "%s library cudaLaunchKernel", kernel);
    if (measure(name, run_library, &a, ctx->stream))
        goto done;
    const unsigned gr[3] = {grid, 1, 1}, bl[3] = {block, 1, 1};
    sdi_arg pargs[SDI_MAX_KERNEL_ARGS];
    for (int i = 0; i < nargs; i++)
        pargs[i] = args[i];
    if (ybuf != NULL) { /* the output as a bound buffer (the rebinding path moves it) */
        int iy = -1;
        if (sdi_program_bind_buffer(&prog, "y", ybuf[0], ybytes, &iy) != SD_OK)
            goto done;
        pargs[1] = sdi_arg_buffer(iy);
    }
    if (sdi_program_add_launch(&prog, &m.functions[0], gr, bl, 0, pargs, nargs) != SD_OK)
        goto done;
    snprintf(name, sizeof name, "%s sdi_program_run", kernel);
    if (measure(name, run_program, &a, ctx->stream))
        goto done;
    prog.use_graph = true;
    snprintf(name, sizeof name, "%s sdi_program_run graph", kernel);
    if (measure(name, run_program, &a, ctx->stream))
        goto done;
    if (prog.graph_runs == 0 || prog.graph_failed) {
        fprintf(stderr, "bench_launch: the program's graph was not used\n");
        goto done;
    }
    if (ybuf != NULL) {
        a.y[0] = ybuf[0];
        a.y[1] = ybuf[1];
        a.ybytes = ybytes;
        snprintf(name, sizeof name, "%s sdi_program_run graph, y rebound each call", kernel);
        if (measure(name, run_program_rebind, &a, ctx->stream))
            goto done;
    }
    prog.use_graph = false;
    if (drv.kernel_get_function((CUfunction *)&a.func, (CUkernel)a.kernel) != CUDA_SUCCESS)
        goto done;
    snprintf(name, sizeof name, "%s CUfunction cuLaunchKernel", kernel);
    if (measure(name, run_cufunction, &a, ctx->stream))
        goto done;
    if (drv.module_load_data(&mod, cubin->cubin) != CUDA_SUCCESS ||
        drv.module_get_function(&a.func, mod, kernel) != CUDA_SUCCESS)
        goto done;
    snprintf(name, sizeof name, "%s CUmodule cuLaunchKernel", kernel);
    if (measure(name, run_cufunction, &a, ctx->stream))
        goto done;
    if (cuda_ok(cudaStreamBeginCapture(ctx->stream, cudaStreamCaptureModeThreadLocal), "capture") ||
        run_library(&a, ctx->stream) ||
        cuda_ok(cudaStreamEndCapture(ctx->stream, &g), "end capture") ||
        cuda_ok(cudaGraphInstantiate(&a.graph, g, 0), "instantiate"))
        goto done;
    snprintf(name, sizeof name, "%s graph of 1", kernel);
    if (measure(name, run_graph, &a, ctx->stream))
        goto done;
    rc = 0;
done:
    if (a.graph != NULL)
        cudaGraphExecDestroy(a.graph);
    if (g != NULL)
        cudaGraphDestroy(g);
    if (mod != NULL)
        drv.module_unload(mod);
    sdi_program_free(&prog);
    sdi_module_unload(&m);
    return rc;
}

/* ------------------------------------------------------------------ part 2: tasks */

typedef struct {
    sd_kernel *kern;
    sdi_vendor *vend;
    sd_op op;
    const float *in;
    float *out;
} task_arg;

static int run_ours(void *p, cudaStream_t st)
{
    task_arg *t = p;
    sd_status s = t->op == SD_OP_SPMV ? sd_spmv(t->kern, t->in, t->out, st)
                                      : sd_spmm(t->kern, t->in, t->out, st);
    if (s != SD_OK)
        fprintf(stderr, "bench_launch: ours: %s\n", sd_last_error());
    return s == SD_OK ? 0 : -1;
}

static int run_vendor(void *p, cudaStream_t st)
{
    task_arg *t = p;
    sd_status s = sdi_vendor_run(t->vend, t->in, t->out, st);
    if (s != SD_OK)
        fprintf(stderr, "bench_launch: cuSPARSE: %s\n", sd_last_error());
    return s == SD_OK ? 0 : -1;
}

static int measure_vendor_graph(sd_context *ctx, task_arg *t, const char *text, const char *v)
{
    cudaStream_t cs = NULL;
    cudaGraph_t g = NULL;
    path_arg a;
    memset(&a, 0, sizeof a);
    int rc = -1;
    if (cuda_ok(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), "cudaStreamCreate") ||
        cuda_ok(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), "capture"))
        goto done;
    int r = run_vendor(t, cs);
    if (cuda_ok(cudaStreamEndCapture(cs, &g), "end capture") || r ||
        cuda_ok(cudaGraphInstantiate(&a.graph, g, 0), "instantiate"))
        goto done;
    char name[96];
    snprintf(name, sizeof name, "%.52s cusparse %s in a graph", text, v);
    rc = measure(name, run_graph, &a, ctx->stream);
done:
    if (a.graph != NULL)
        cudaGraphExecDestroy(a.graph);
    if (g != NULL)
        cudaGraphDestroy(g);
    if (cs != NULL)
        cudaStreamDestroy(cs);
    return rc;
}

static int measure_task(sd_context *ctx, const char *text)
{
    char spec[256];
    snprintf(spec, sizeof spec, "%s", text);
    /* SPEC:OP[:K] — the spec itself contains ':' once (family:keys). */
    char *op_s = strchr(spec, ':');
    op_s = op_s != NULL ? strchr(op_s + 1, ':') : NULL;
    if (op_s == NULL) {
        fprintf(stderr, "bench_launch: --task %s: expected SPEC:spmv or SPEC:spmm:K\n", text);
        return -1;
    }
    *op_s++ = '\0';
    int k = 1;
    char *k_s = strchr(op_s, ':');
    if (k_s != NULL) {
        *k_s++ = '\0';
        k = atoi(k_s);
    }
    sd_op op = strcmp(op_s, "spmm") == 0 ? SD_OP_SPMM : SD_OP_SPMV;
    if (op == SD_OP_SPMV)
        k = 1;
    if (k < 1) {
        fprintf(stderr, "bench_launch: --task %s: bad K\n", text);
        return -1;
    }
    sd_csr a;
    if (sdi_gen(spec, 1, &a) != SD_OK) {
        fprintf(stderr, "bench_launch: %s\n", sd_last_error());
        return -1;
    }
    task_arg t;
    memset(&t, 0, sizeof t);
    t.op = op;
    void *d_in = NULL, *d_out = NULL;
    float *h = NULL;
    int rc = -1;
    size_t in_n = (size_t)a.cols * k, out_n = (size_t)a.rows * k;
    h = malloc((in_n ? in_n : 1) * sizeof *h);
    if (h == NULL)
        goto done;
    sdi_gen_dense(h, (int64_t)in_n, SDI_VALUES_UNIFORM, 7);
    if (cuda_ok(cudaMalloc(&d_in, in_n * sizeof(float) + 16), "cudaMalloc") ||
        cuda_ok(cudaMalloc(&d_out, out_n * sizeof(float) + 16), "cudaMalloc") ||
        cuda_ok(cudaMemcpy(d_in, h, in_n * sizeof(float), cudaMemcpyHostToDevice), "copy"))
        goto done;
    t.in = d_in;
    t.out = d_out;
    sd_compile_options co = sd_compile_options_default();
    co.use_cache = 0;
    co.allow_vendor = 0;
    if (sd_compile(ctx, &a, op, k, &co, &t.kern) != SD_OK) {
        fprintf(stderr, "bench_launch: compile %s: %s\n", text, sd_last_error());
        goto done;
    }
    char desc[4096];
    if (sd_kernel_describe(t.kern, desc, sizeof desc) == SD_OK) {
        const char *c = strstr(desc, "\"config\"");
        fprintf(stderr, "%s: ours %.160s\n", text, c != NULL ? c : desc);
    }
    char name[96];
    snprintf(name, sizeof name, "%.60s ours", text);
    if (measure(name, run_ours, &t, ctx->stream))
        goto done;
    for (int i = 0;; i++) {
        const char *v = sdi_vendor_variant(op, i);
        if (v == NULL)
            break;
        if (sdi_vendor_create(ctx, &a, op, k, v, &t.vend) != SD_OK) {
            sdi_error_clear();
            continue;
        }
        snprintf(name, sizeof name, "%.60s cusparse %s", text, v);
        int m = measure(name, run_vendor, &t, ctx->stream);
        if (m == 0) /* the same call captured into a graph by its caller: what cuSPARSE
                       gains from the cheaper launch path our programs take */
            m = measure_vendor_graph(ctx, &t, text, v);
        sdi_vendor_destroy(t.vend);
        t.vend = NULL;
        if (m)
            goto done;
    }
    rc = 0;
done:
    sd_kernel_destroy(t.kern);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h);
    sd_csr_free(&a);
    return rc;
}

/* ------------------------------------------------------------------ output */

static int write_results(const char *dir, const char *gpu)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/bench_launch.json", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_launch: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\"gpu\": \"%s\", \"rows\": [\n", gpu);
    for (int i = 0; i < nrows; i++)
        fprintf(f,
                "  {\"name\": \"%s\", \"each_us\": %.3f, \"pipelined10_us\": %.3f, "
                "\"pipelined100_us\": %.3f, \"issue_us\": %.3f}%s\n",
                rows[i].name, rows[i].each_us, rows[i].pipe10_us, rows[i].pipe100_us,
                rows[i].issue_us, i + 1 < nrows ? "," : "");
    fprintf(f, "]}\n");
    fclose(f);
    snprintf(path, sizeof path, "%s/bench_launch.md", dir);
    f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_launch: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "# Launch paths (%s)\n\nPer execution: mean of 10 event pairs. Pipelined: N back "
               "to back between two events, per execution. Issue: host wall time per "
               "enqueue over 100 (no waiting).\n\n",
            gpu);
    fprintf(f, "| path / task | each (us) | pipelined 10 | pipelined 100 | host issue |\n"
               "|---|---:|---:|---:|---:|\n");
    for (int i = 0; i < nrows; i++)
        fprintf(f, "| %s | %.2f | %.2f | %.2f | %.2f |\n", rows[i].name, rows[i].each_us,
                rows[i].pipe10_us, rows[i].pipe100_us, rows[i].issue_us);
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    const char *tasks[MAX_TASKS];
    int ntasks = 0, n = 1 << 16;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--task") == 0 && i + 1 < argc && ntasks < MAX_TASKS)
            tasks[ntasks++] = argv[++i];
        else {
            fprintf(stderr, "usage: bench_launch --out DIR [--n FLOATS] [--task SPEC:OP[:K] ...]\n");
            return 2;
        }
    }
    if (out == NULL || n < 1) {
        fprintf(stderr, "usage: bench_launch --out DIR [--n FLOATS] [--task SPEC:OP[:K] ...]\n");
        return 2;
    }
    if (ntasks == 0) {
        tasks[ntasks++] = "stencil2d:n=300:spmv";
        tasks[ntasks++] = "knn:n=100000,k=8,dim=2:spmv";
        tasks[ntasks++] = "stencil2d:n=60:spmm:8";
    }
    if (mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_launch: cannot create %s: %s\n", out, strerror(errno));
        return 1;
    }
    sd_context *ctx = NULL;
    sd_status s = sd_context_create(NULL, &ctx);
    if (s != SD_OK) {
        fprintf(stderr, "bench_launch: %s\n", sd_last_error());
        return s == SD_ERR_NO_DEVICE ? 3 : 1;
    }
    if (load_driver()) {
        sd_context_destroy(ctx);
        return 1;
    }
    int rc = 0;
    sdi_cubin cubin;
    memset(&cubin, 0, sizeof cubin);
    sdi_jit_request req = {.source = kernels_source, .kernel_name = "bl_empty"};
    req.arch = ctx->arch;
    if (sdi_jit_compile(&req, &cubin) != SD_OK) {
        fprintf(stderr, "bench_launch: %s\n", sd_last_error());
        sd_context_destroy(ctx);
        return 1;
    }
    float *x = NULL, *y = NULL, *y2 = NULL;
    if (cuda_ok(cudaMalloc((void **)&x, (size_t)n * sizeof *x), "cudaMalloc") ||
        cuda_ok(cudaMalloc((void **)&y, (size_t)n * sizeof *y), "cudaMalloc") ||
        cuda_ok(cudaMalloc((void **)&y2, (size_t)n * sizeof *y2), "cudaMalloc") ||
        cuda_ok(cudaMemset(x, 0, (size_t)n * sizeof *x), "cudaMemset"))
        rc = 1;
    if (rc == 0 && measure_paths(ctx, &cubin, "bl_empty", 1, 32, NULL, NULL, 0, NULL, 0))
        rc = 1;
    void *params[3] = {&x, &y, &n};
    sdi_arg args[3] = {{.kind = SDI_ARG_PTR, .buffer = -1}, {.kind = SDI_ARG_PTR, .buffer = -1},
                       sdi_arg_i32(n)};
    args[0].v.ptr = x;
    args[1].v.ptr = y;
    void *ys[2] = {y, y2};
    if (rc == 0 && measure_paths(ctx, &cubin, "bl_copy", (unsigned)((n + 255) / 256), 256, params,
                                 args, 3, ys, (size_t)n * sizeof *y))
        rc = 1;
    for (int i = 0; i < ntasks && rc == 0; i++)
        if (measure_task(ctx, tasks[i]))
            rc = 1;
    char gpu[128];
    snprintf(gpu, sizeof gpu, "%s", ctx->props.name);
    if (write_results(out, gpu))
        rc = 1;
    cudaFree(x);
    cudaFree(y);
    cudaFree(y2);
    sdi_cubin_free(&cubin);
    sd_context_destroy(ctx);
    return rc;
}
