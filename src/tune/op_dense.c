/* src/tune/op_dense.c: the search's hooks for the operators with a dense output, SpMV and
 * SpMM: the statistics their families read, the seeded dense operand and the CPU
 * reference, measurement of y / C (poisoned first, checked against the reference), the
 * parallel precompilation switch, ParamSpMM's preset for the PCSR branch (through the
 * task), and the vendor round with cuSPARSE's fallback replayed as a graph. */
#include <stdio.h>
#include <string.h>

#include <omp.h>

#include "../gen/gen.h"
#include "../model/pcsr_shipped.h"
#include "search.h"

#define SD_FREE_ALL ((void)0)

static sd_status dense_stats(sdi_search *s)
{
    if (s->op == SD_OP_SPMV) {
        SD_TRY(sdi_spmv_stats_compute(s->a, &s->spmv_st));
        s->task.spmv = &s->spmv_st;
    } else {
        sdi_spmm_stats_compute(s->a, &s->spmm_st);
        s->task.spmm = &s->spmm_st;
        /* ParamSpMM's decider picks the PCSR branch's first plan when a paramspmm.json is
         * on the models' path (pcsr_shipped.h): a search-side choice the family's defaults
         * consult through the task (plan/ does not include model/). */
        s->task.preset = sdi_paramspmm_task_preset;
    }
    return SD_OK;
}

/* Seeded values, the CPU reference, the roofline. */
static sd_status dense_operands(sdi_search *s)
{
    const sd_csr *a = s->a;
    size_t in_n = (size_t)a->cols * (size_t)s->k, out_n = (size_t)a->rows * (size_t)s->k;
    s->host_in = sdi_malloc_array(in_n ? in_n : 1, sizeof *s->host_in);
    SD_CHECK_ALLOC(s->host_in, "the dense operand");
    sdi_gen_dense(s->host_in, (int64_t)in_n, SDI_VALUES_UNIFORM, 0x5d1770);
    SD_TRY(sdi_reference_dense(a, s->op, s->host_in, s->k, 0, &s->ref));
    SD_TRY(sdi_device_upload(s->ctx, (void **)&s->d_in, s->host_in, in_n * sizeof(float),
                             "the dense operand"));
    SD_TRY(sdi_device_malloc(s->ctx, (void **)&s->d_out, out_n * sizeof(float), "the dense output"));
    SD_TRY(sdi_device_calibrate(s->ctx));
    if (s->ctx->copy_bw > 0)
        s->r->roofline_us =
            sdi_roofline_bytes(s->op, a->rows, a->cols, a->nnz, s->k) / s->ctx->copy_bw * 1e6;
    return SD_OK;
}

/* The kernels of the plans a round is about to measure, compiled in parallel into the memo
 * when that is on (sdi_candidate_precompile); the round's builds then find them there.
 * Threads are capped so that their private lowerings (about two copies of A each) stay
 * within 4 GiB. */
static void dense_precompile(sdi_search *s, const sdi_plan *v, int n)
{
    if (!sdi_config_get()->parallel_jit || n < 2)
        return;
    const double per = 2.0 * (12.0 * (double)s->a->nnz + 8.0 * (double)s->a->rows) + 1.0;
    int threads = omp_get_max_threads();
    if ((double)threads * per > (double)(4ull << 30))
        threads = (int)((double)(4ull << 30) / per);
    if (threads < 2)
        return;
    double wall_ms = 0;
    if (sdi_candidate_precompile(s->ctx, &s->task, v, n, threads, &wall_ms) != SD_OK)
        sdi_error_clear(); /* a broken context: the next build reports it */
    s->r->ms_compile += wall_ms; /* lowering + NVRTC of the batch, in parallel */
}

/* ------------------------------------------------------------------ measurement */

typedef struct {
    sdi_search *s;
    sdi_candidate *c;
    sdi_validation *val;
} run_arg;

static sd_status exec_fn(sd_context *ctx, void *arg, cudaStream_t stream)
{
    run_arg *ra = arg;
    return sdi_exe_run(ctx, &ra->c->exe, ra->s->d_in, ra->s->d_out, stream);
}

static sd_status check_fn(sd_context *ctx, void *arg)
{
    run_arg *ra = arg;
    if (ra->s->a->rows == 0)
        return SD_OK;
    return sdi_check_dense_output(ctx, &ra->s->ref, ra->s->d_out, ra->val);
}

/* Poison: an output entry the candidate never writes fails validation. */
static sd_status poison(sdi_search *s)
{
    const size_t out_bytes = (size_t)s->a->rows * (size_t)s->k * sizeof(float);
    if (out_bytes == 0)
        return SD_OK;
    return sdi_cuda_status(s->ctx, cudaMemsetAsync(s->d_out, 0xff, out_bytes, s->ctx->stream),
                           "poisoning the output", NULL);
}

static sd_status dense_measure(sdi_search *s, sdi_candidate *c, const char *name, const sdi_screen *sc,
                               sdi_timing *t, sdi_measured *how, sdi_validation *val)
{
    SD_TRY(poison(s));
    run_arg ra = {s, c, val};
    if (sc == NULL)
        return sdi_measure(s->ctx, name, exec_fn, &ra, check_fn, &ra, t);
    return sdi_measure_screened(s->ctx, name, exec_fn, &ra, check_fn, &ra, sc, t, how);
}

/* ------------------------------------------------------------------ cuSPARSE */

/* cuSPARSE's best variant as the fallback runs it: through its own executor
 * (sdi_vendor_run), which replays one run captured into a CUDA graph once the same
 * operands come twice in a row. Primed with two runs, so that every measured run (the
 * checked first one included) is a replay. This is the fallback's time and the report's
 * second baseline, cuSPARSE in a graph as a user of cuSPARSE could capture it, which shows
 * how much of a speed-up is the launch path (our programs replay graphs, sdi_program) and
 * how much the kernel. An executor that could not capture its run is left out (mean 0):
 * it runs plainly, as the baseline timed it. */
typedef struct {
    sdi_vendor *v;
    const sdi_search *s;
} vendor_exec_arg;

static sd_status vendor_exec_run(sd_context *ctx, void *arg, cudaStream_t stream)
{
    (void)ctx;
    const vendor_exec_arg *a = arg;
    return sdi_vendor_run(a->v, a->s->d_in, a->s->d_out, stream);
}

static sd_status vendor_exec_check(sd_context *ctx, void *arg)
{
    const sdi_search *s = ((vendor_exec_arg *)arg)->s;
    sdi_validation val;
    if (s->a->rows == 0)
        return SD_OK;
    return sdi_check_dense_output(ctx, &s->ref, s->d_out, &val);
}

static sd_status measure_vendor_graph(sdi_search *s)
{
    sdi_tune_result *r = s->r;
    const char *name = r->baseline->v[r->vendor_best].name;
    vendor_exec_arg ea = {NULL, s};
    sd_status st = sdi_vendor_create(s->ctx, s->a, s->op, s->k, name, &ea.v);
    for (int i = 0; i < 2 && st == SD_OK; i++)
        st = vendor_exec_run(s->ctx, &ea, s->ctx->stream);
    if (st == SD_OK)
        st = sdi_stream_sync(s->ctx, "priming the executor of", name);
    const bool graphed = st == SD_OK && sdi_vendor_graph_runs(ea.v) > 0;
    /* Long executions briefly, as the search's own (the launch path is noise there). */
    const sdi_screen sc = {.brief_us = sdi_tune_brief_us(s->opt), .brief_long_us = SDI_TUNE_BRIEF_LONG_US};
    /* Poisoned first: the check must see a replay's output, not an earlier run's. */
    if (graphed)
        st = poison(s);
    if (graphed && st == SD_OK)
        st = sdi_measure_screened(s->ctx, name, vendor_exec_run, &ea, vendor_exec_check, &ea, &sc,
                                  &r->vendor_graph_t, NULL);
    sdi_vendor_destroy(ea.v);
    if (st != SD_OK || !graphed) {
        memset(&r->vendor_graph_t, 0, sizeof r->vendor_graph_t);
        if (s->ctx->broken)
            return st;
        if (st != SD_OK)
            sdi_log(1, "cuSPARSE %s replayed as a graph: not measured (%s)", name, sd_last_error());
        else
            sdi_log(1, "cuSPARSE %s: its run could not be captured into a graph (it runs plainly)",
                    name);
        sdi_error_clear();
        (void)cudaGetLastError();
    }
    return SD_OK;
}

static sd_status dense_vendor_round(sdi_search *s)
{
    sdi_tune_result *r = s->r;
    sdi_baseline_options bo;
    memset(&bo, 0, sizeof bo);
    bo.k = s->k;
    bo.aat = -1;
    SD_TRY(sdi_search_vendor_baseline(s, s->host_in, &bo, false));
    if (r->vendor_best >= 0 && sdi_config_get()->graphs)
        SD_TRY(measure_vendor_graph(s));
    return SD_OK;
}

static void dense_cleanup(sdi_search *s)
{
    sdi_device_free(s->d_in);
    sdi_device_free(s->d_out);
    s->d_in = s->d_out = NULL;
    sdi_reference_free(&s->ref);
    sdi_free(s->host_in);
    s->host_in = NULL;
}

const sdi_search_op sdi_search_op_dense = {
    .interleave = true,
    .diagnose_families = true,
    .coverage = true,
    .dense = true,
    .what = "candidate",
    .vendor_none = " and no cuSPARSE variant is usable",
    .stats = dense_stats,
    .operands = dense_operands,
    .precompile = dense_precompile,
    .measure = dense_measure,
    .vendor_round = dense_vendor_round,
    .cleanup = dense_cleanup,
};
