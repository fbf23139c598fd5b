/* src/runtime/timing.c: the measurement protocol of docs/ARCHITECTURE.md "Measurement"
 * (warm-ups, check-then-time,
 * event-timed executions, pipelined time), the once-per-context calibration (copy
 * bandwidth, empty-launch latency) and the CSR streaming-limit bytes of the roofline. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "device_memory.h"
#include "module.h"
#include "program.h"
#include "timing.h"

/* ------------------------------------------------------------------ events */

typedef struct {
    cudaEvent_t a, b;
} event_pair;

static void events_destroy(event_pair *e)
{
    if (e->a != NULL)
        (void)cudaEventDestroy(e->a);
    if (e->b != NULL)
        (void)cudaEventDestroy(e->b);
    e->a = e->b = NULL;
}

static sd_status events_create(sd_context *ctx, event_pair *e)
{
    e->a = e->b = NULL;
    sd_status s = sdi_cuda_status(ctx, cudaEventCreate(&e->a), "cudaEventCreate", NULL);
    if (s == SD_OK)
        s = sdi_cuda_status(ctx, cudaEventCreate(&e->b), "cudaEventCreate", NULL);
    if (s != SD_OK)
        events_destroy(e);
    return s;
}

/* Milliseconds between the two events once the second has completed. */
static sd_status events_elapsed(sd_context *ctx, event_pair *e, const char *name, float *ms)
{
    sd_status s = sdi_cuda_status(ctx, cudaEventSynchronize(e->b), "running", name);
    if (s != SD_OK)
        return s;
    return sdi_cuda_status(ctx, cudaEventElapsedTime(ms, e->a, e->b), "reading the events of",
                           name);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean, min and median of the first n timed runs (n <= SDI_TIMED_RUNS). */
static void summarise(sdi_timing *t, int n)
{
    double sorted[SDI_TIMED_RUNS];
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sorted[i] = t->runs_us[i];
        sum += t->runs_us[i];
    }
    qsort(sorted, (size_t)n, sizeof sorted[0], cmp_double);
    t->mean_us = sum / n;
    t->min_us = sorted[0];
    t->median_us = (n % 2) ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/* n executions, each between its own pair of events on the same stream, into out->runs_us. */
static sd_status time_each(sd_context *ctx, const char *name, sdi_exec_fn run, void *run_arg,
                           event_pair *ev, int n, sdi_timing *out)
{
#define SD_FREE_ALL (void)0
    cudaStream_t st = ctx->stream;
    for (int i = 0; i < n; i++) {
        SD_TRY(sdi_cuda_status(ctx, cudaEventRecord(ev->a, st), "cudaEventRecord", name));
        SD_TRY(run(ctx, run_arg, st));
        SD_TRY(sdi_cuda_status(ctx, cudaEventRecord(ev->b, st), "cudaEventRecord", name));
        float ms = 0;
        SD_TRY(events_elapsed(ctx, ev, name, &ms));
        out->runs_us[i] = 1e3 * (double)ms;
    }
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ protocol */

sd_status sdi_measure(sd_context *ctx, const char *name, sdi_exec_fn run, void *run_arg,
                      sdi_check_fn check, void *check_arg, sdi_timing *out)
{
    return sdi_measure_screened(ctx, name, run, run_arg, check, check_arg, NULL, out, NULL);
}

sd_status sdi_measure_screened(sd_context *ctx, const char *name, sdi_exec_fn run, void *run_arg,
                               sdi_check_fn check, void *check_arg, const sdi_screen *sc,
                               sdi_timing *out, sdi_measured *how)
{
    if (how != NULL)
        *how = SDI_MEASURED_FULL;
    if (out != NULL)
        memset(out, 0, sizeof *out);
    sd_status s = sdi_ctx_enter(ctx);
    if (s != SD_OK)
        return s;
    if (run == NULL || out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_measure: run or out is NULL");
    const double screen_us = sc != NULL ? sc->screen_us : 0;
    const double brief_us = sc != NULL ? sc->brief_us : 0;
    cudaStream_t st = ctx->stream;
    event_pair ev = {NULL, NULL};
#define SD_FREE_ALL events_destroy(&ev)
    SD_TRY(events_create(ctx, &ev));
    /* Warm-up 1, then check its output before anything is timed. */
    SD_TRY(run(ctx, run_arg, st));
    SD_TRY(sdi_stream_sync(ctx, "the first warm-up run", name));
    if (check != NULL)
        SD_TRY(check(ctx, check_arg));
    int first = 1;
    if (screen_us > 0 || brief_us > 0) {
        /* Warm-up 2, event-timed: a candidate far behind the best stops here; a long one
         * is timed briefly. */
        SD_TRY(time_each(ctx, name, run, run_arg, &ev, 1, out));
        first = 2;
        const double us = out->runs_us[0];
        if (screen_us > 0 && us > screen_us) {
            for (int i = 0; i < SDI_TIMED_RUNS; i++)
                out->runs_us[i] = us;
            out->mean_us = out->min_us = out->median_us = out->pipelined_us = us;
            if (how != NULL)
                *how = SDI_MEASURED_SCREENED;
            events_destroy(&ev);
            return SD_OK;
        }
        if (brief_us > 0 && us >= brief_us) {
            /* Very long executions (brief_long_us) vary by well under a per cent, and the
             * warm-up just timed is one sample: one more, not three. */
            const int nb = sc->brief_long_us > 0 && us >= sc->brief_long_us ? 1 : SDI_BRIEF_RUNS;
            SD_TRY(time_each(ctx, name, run, run_arg, &ev, nb, out));
            if (nb == 1)
                out->runs_us[nb] = us;
            summarise(out, nb == 1 ? 2 : nb);
            out->pipelined_us = out->mean_us;
            if (how != NULL)
                *how = SDI_MEASURED_BRIEF;
            events_destroy(&ev);
            return SD_OK;
        }
    }
    for (int i = first; i < SDI_WARMUPS; i++)
        SD_TRY(run(ctx, run_arg, st));
    SD_TRY(sdi_stream_sync(ctx, "the warm-up runs", name));
    /* Timed: each execution between its own pair of events on the same stream. */
    SD_TRY(time_each(ctx, name, run, run_arg, &ev, SDI_TIMED_RUNS, out));
    summarise(out, SDI_TIMED_RUNS);
    /* Pipelined: back-to-back executions, as an iterative solver issues them. */
    SD_TRY(sdi_cuda_status(ctx, cudaEventRecord(ev.a, st), "cudaEventRecord", name));
    for (int i = 0; i < SDI_PIPELINED_RUNS; i++)
        SD_TRY(run(ctx, run_arg, st));
    SD_TRY(sdi_cuda_status(ctx, cudaEventRecord(ev.b, st), "cudaEventRecord", name));
    float ms = 0;
    SD_TRY(events_elapsed(ctx, &ev, name, &ms));
    out->pipelined_us = 1e3 * (double)ms / SDI_PIPELINED_RUNS;
    events_destroy(&ev);
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ calibration */

static const char empty_kernel_source[] =
    "/* the empty kernel whose event-timed launch is the launch latency */\n"
    "extern \"C\" __global__ void sd_empty_kernel(void) {}\n";

typedef struct {
    sdi_program prog;
} empty_arg;

static sd_status run_empty(sd_context *ctx, void *arg, cudaStream_t st)
{
    return sdi_program_run(ctx, &((empty_arg *)arg)->prog, st);
}

static sd_status measure_launch(sd_context *ctx)
{
    sdi_module m;
    empty_arg a;
    memset(&m, 0, sizeof m);
    sdi_program_init(&a.prog);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_program_free(&a.prog);                                                         \
        sdi_module_unload(&m);                                                             \
    } while (0)
    sdi_jit_request req = {.source = empty_kernel_source, .kernel_name = "sd_empty_kernel"};
    SD_TRY(sdi_module_build(ctx, &req, "sd_empty_kernel", &m));
    const unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    SD_TRY(sdi_program_add_launch(&a.prog, &m.functions[0], grid, block, 0, NULL, 0));
    /* The way our SpMV/SpMM programs launch: the floor of the ceilings (bench_suite.c)
     * is the cheapest launch we use (a graph: 3.1 us on the H200, a plain launch 5.2). */
    a.prog.use_graph = sdi_config_get()->graphs;
    sdi_timing t;
    SD_TRY(sdi_measure(ctx, "sd_empty_kernel", run_empty, &a, NULL, NULL, &t));
    ctx->launch_us_mean = t.mean_us;
    ctx->launch_us_min = t.min_us;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

static sd_status measure_copy(sd_context *ctx)
{
    void *src = NULL, *dst = NULL;
    event_pair ev = {NULL, NULL};
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_device_free(src);                                                              \
        sdi_device_free(dst);                                                              \
        events_destroy(&ev);                                                               \
    } while (0)
    /* 1 GiB each way (far beyond L2) when it fits in an eighth of free memory. */
    size_t free_b = 0, total_b = 0;
    SD_TRY(sdi_cuda_status(ctx, cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo", NULL));
    size_t bytes = (size_t)1 << 30;
    while (bytes > ((size_t)64 << 20) && bytes > free_b / 8)
        bytes /= 2;
    SD_TRY(sdi_device_malloc(ctx, &src, bytes, "copy-bandwidth source"));
    SD_TRY(sdi_device_malloc(ctx, &dst, bytes, "copy-bandwidth destination"));
    SD_TRY(sdi_cuda_status(ctx, cudaMemsetAsync(src, 1, bytes, ctx->stream), "cudaMemset",
                           NULL));
    SD_TRY(events_create(ctx, &ev));
    double best_ms = 0;
    for (int i = 0; i < 2 + SDI_TIMED_RUNS; i++) {
        SD_TRY(sdi_cuda_status(ctx, cudaEventRecord(ev.a, ctx->stream), "cudaEventRecord",
                               NULL));
        SD_TRY(sdi_cuda_status(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                                    ctx->stream),
                               "device-to-device copy", NULL));
        SD_TRY(sdi_cuda_status(ctx, cudaEventRecord(ev.b, ctx->stream), "cudaEventRecord",
                               NULL));
        float ms = 0;
        SD_TRY(events_elapsed(ctx, &ev, "device-to-device copy", &ms));
        /* The first two are warm-ups; the roofline takes the best copy seen, the
         * bandwidth the device demonstrably reaches. */
        if (i >= 2 && ms > 0 && (best_ms == 0 || ms < best_ms))
            best_ms = ms;
    }
    if (best_ms <= 0) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_CUDA, "the device-to-device copy took no measurable time");
    }
    ctx->copy_bw = 2.0 * (double)bytes / (best_ms * 1e-3); /* bytes read + written */
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_device_calibrate(sd_context *ctx)
{
    sd_status s = sdi_ctx_enter(ctx);
    if (s != SD_OK)
        return s;
    pthread_mutex_lock(&ctx->calib_lock);
    if (!ctx->calibrated) {
        s = measure_copy(ctx);
        if (s == SD_OK)
            s = measure_launch(ctx);
        if (s == SD_OK) {
            ctx->calibrated = 1;
            sdi_log(1, "device %d (%s): copy bandwidth %.0f GB/s, empty launch %.2f us "
                    "(min %.2f us)", ctx->device, ctx->props.name, ctx->copy_bw * 1e-9,
                    ctx->launch_us_mean, ctx->launch_us_min);
        }
    }
    pthread_mutex_unlock(&ctx->calib_lock);
    return s;
}

double sdi_roofline_bytes(sd_op op, int64_t rows, int64_t cols, int64_t nnz, int k)
{
    double r = (double)rows, c = (double)cols, z = (double)nnz;
    double spmv = z * 8 + (r + 1) * 4 + c * 4 + r * 4;
    switch (op) {
    case SD_OP_SPMV: return spmv;
    case SD_OP_SPMM: return spmv + c * k * 4.0 + r * k * 4.0 - c * 4 - r * 4;
    default: return 0;
    }
}

void sdi_timing_json(sdi_json *j, const sdi_timing *t)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "mean_us");
    sdi_json_number(j, t->mean_us);
    sdi_json_key(j, "min_us");
    sdi_json_number(j, t->min_us);
    sdi_json_key(j, "median_us");
    sdi_json_number(j, t->median_us);
    sdi_json_key(j, "pipelined_us");
    sdi_json_number(j, t->pipelined_us);
    sdi_json_end_object(j);
}
