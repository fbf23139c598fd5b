/* src/api/kernel.c: sd_compile and the kernel object: cache lookup → (miss) search →
 * store; execution entry points; describe; update values; destroy.
 *
 * Concurrency: a kernel's launch program binds the caller's pointers at each call, so
 * calls on one kernel are serialised by the kernel's mutex (calls on distinct kernels
 * run concurrently). On the device, calls on one kernel run in call order whatever their
 * streams: they share workspaces, counters and value arrays (see `done`). Searches are
 * serialised process-wide: they time kernels, and two searches sharing a GPU would time
 * each other. Cache hits take no lock. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cache/tiers.h"
#include "core/io.h"
#include "model/model_files.h"
#include "plan/plan.h"
#include "tune/impl_cache.h"
#include "tune/tune.h"
#include "tune/agent_round.h"

#define SDI_KERNEL_MAGIC 0x53444b524e4cull /* "SDKRNL" */

struct sd_kernel {
    uint64_t magic;
    sd_context *ctx;
    sd_op op;
    int k;
    sd_csr a; /* owned copy: the implementation borrows its arrays */
    sd_csr b; /* SpGEMM A·B: owned copy of a general B (zeroed otherwise) */
    int has_b;
    sdi_impl impl;
    pthread_mutex_t lock;
    char *plan_json;   /* the winner's plan (family, config, lowering, bounds) */
    char *record_json; /* the search record (from the search or the cache) */
    int from_cache;
    double ready_ms; /* wall time of sd_compile */
    /* Call order on the device. `done` is recorded on the caller's stream after each
     * call's work (done_stream_id: that stream's cudaStreamGetId; done_live); a call on
     * another stream waits for it there, and update_values and destroy wait for it on the
     * host. Without it a call on a second
     * stream could overlap the first one's work (plain launches share the workspaces and
     * the split kernels' counters; cuSPARSE's plain calls their buffer; SpGEMM's numeric
     * stage still runs when sd_spgemm returns), and an update's copy, made on the
     * context's stream, could overtake a call still queued on the caller's. */
    cudaEvent_t done;
    unsigned long long done_stream_id;
    bool done_live;
};

static pthread_mutex_t g_search_lock = PTHREAD_MUTEX_INITIALIZER;

sd_compile_options sd_compile_options_default(void)
{
    sd_compile_options o;
    memset(&o, 0, sizeof o);
    o.budget = 0; /* the default budget */
    o.use_cache = 1;
    o.allow_vendor = 1;
    o.deterministic = 0;
    o.report_path = NULL;
    return o;
}

static void kernel_free(sd_kernel *kern)
{
    if (kern == NULL)
        return;
    if (kern->done != NULL) {
        /* The last call may still use the arrays released below. After a sticky error
         * the wait fails too; nothing more can be done. */
        if (kern->done_live)
            (void)cudaEventSynchronize(kern->done);
        (void)cudaEventDestroy(kern->done);
        (void)cudaGetLastError();
        kern->done = NULL;
    }
    sdi_impl_release(&kern->impl);
    sd_csr_free(&kern->a);
    sd_csr_free(&kern->b);
    sdi_free(kern->plan_json);
    sdi_free(kern->record_json);
    pthread_mutex_destroy(&kern->lock);
    kern->magic = 0;
    sdi_free(kern);
}

static sd_status check_kernel(const sd_kernel *kern, const char *fn)
{
    if (kern == NULL || kern->magic != SDI_KERNEL_MAGIC)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: kern is NULL or not a kernel", fn);
    return SD_OK;
}

/* Before a call's work: the device current, and the stream after the kernel's previous
 * call when that ran on another stream. Streams are told apart by their ids, not their
 * handles: cudaStreamPerThread names another stream in each thread, and a destroyed
 * stream's handle may come back for a new one. A stream being captured neither waits nor
 * records (*capturing): a captured node cannot wait for an event recorded outside the
 * capture, and the user orders the graph's launches. */
static sd_status call_begin(sd_kernel *kern, cudaStream_t stream, bool *capturing,
                            unsigned long long *stream_id, const char *fn)
{
    *capturing = false;
    *stream_id = 0;
    sd_status s = sdi_ctx_enter_run(kern->ctx);
    if (s != SD_OK) {
        sdi_error_prefix("%s", fn);
        return s;
    }
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(stream, &cs);
    if (e == cudaSuccess) {
        *capturing = cs != cudaStreamCaptureStatusNone;
        if (*capturing)
            return SD_OK;
        e = cudaStreamGetId(stream, stream_id);
        if (e == cudaSuccess && kern->done_live && *stream_id != kern->done_stream_id)
            e = cudaStreamWaitEvent(stream, kern->done, 0);
    }
    if (e != cudaSuccess) {
        s = sdi_cuda_status(kern->ctx, e, "ordering the call after the kernel's previous one", NULL);
        sdi_error_prefix("%s", fn);
    }
    return s;
}

/* After a call's work was enqueued (s: its status): the kernel's `done` on its stream. */
static sd_status call_end(sd_kernel *kern, cudaStream_t stream, bool capturing,
                          unsigned long long stream_id, sd_status s, const char *fn)
{
    if (capturing)
        return s;
    cudaError_t e = cudaEventRecord(kern->done, stream);
    if (e == cudaSuccess) {
        kern->done_stream_id = stream_id;
        kern->done_live = true;
        return s;
    }
    if (s != SD_OK)
        return s; /* the call's own error is the one to report */
    s = sdi_cuda_status(kern->ctx, e, "recording the end of the call", NULL);
    sdi_error_prefix("%s", fn);
    return s;
}

/* The host waits for the kernel's last call (under kern->lock). */
static sd_status wait_last_call(sd_kernel *kern, const char *fn)
{
    if (!kern->done_live)
        return SD_OK;
    sd_status s = sdi_cuda_status(kern->ctx, cudaEventSynchronize(kern->done),
                                  "waiting for the kernel's last call", NULL);
    if (s != SD_OK) {
        sdi_error_prefix("%s", fn);
        return s;
    }
    kern->done_live = false;
    return SD_OK;
}

static char *dup_text(const char *s)
{
    size_t n = strlen(s);
    char *d = sdi_malloc(n + 1);
    if (d != NULL)
        memcpy(d, s, n + 1);
    return d;
}

/* The plan of the winner: family, configuration, lowering and static bounds. */
static sd_status plan_json(const sd_kernel *kern, char **out)
{
    *out = NULL;
    const sdi_impl *im = &kern->impl;
    sdi_json j;
    sdi_json_init(&j, 0);
    char buf[SDI_IMPL_CONFIG_TEXT];
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "op");
    sdi_json_string(&j, sdi_op_name(kern->op));
    sdi_json_key(&j, "k");
    sdi_json_int(&j, kern->k);
    sdi_impl_family(im, buf, sizeof buf);
    sdi_json_key(&j, "family");
    sdi_json_string(&j, buf);
    sdi_impl_describe(im, buf, sizeof buf);
    sdi_json_key(&j, "config");
    sdi_json_string(&j, buf);
    sdi_json_key(&j, "vendor");
    sdi_json_bool(&j, im->kind == SDI_IMPL_VENDOR);
    /* The V_o label the plan instantiates; null outside V_o (and for cuSPARSE / agent). */
    sdi_json_key(&j, "vo_label");
    if (sdi_impl_vo_label(im, buf, sizeof buf))
        sdi_json_string(&j, buf);
    else
        sdi_json_null(&j);
    sdi_json_key(&j, "deterministic");
    sdi_json_bool(&j, !sdi_impl_uses_atomics(im));
    if (im->kind == SDI_IMPL_SPMV) {
        sdi_json_key(&j, "lowering");
        sdi_spmv_plan_json(&im->spmv_plan, &j);
    } else if (im->kind == SDI_IMPL_SPMM) {
        sdi_json_key(&j, "lowering");
        sdi_spmm_lowered_json(&im->spmm_low, &j);
    } else if (im->kind == SDI_IMPL_SPGEMM) {
        sdi_json_key(&j, "lowering");
        sdi_sg_schedule_json(sdi_spgemm_exec_schedule(im->sg_exec), &j);
    }
    if (kern->op == SD_OP_SPGEMM) {
        sdi_json_key(&j, "product");
        sdi_json_string(&j, kern->has_b ? "A*B" : im->sg_aat ? "A*At" : "A*A");
        sdi_json_key(&j, "peak_bytes");
        sdi_json_int(&j, sdi_impl_peak_bytes(im));
    }
    int64_t value, meta, work;
    sdi_impl_bytes(im, &value, &meta, &work);
    sdi_plan_bounds b;
    sdi_plan_bounds_compute(value, meta, work, kern->op, kern->k, kern->a.rows, kern->a.cols,
                            kern->a.nnz, &kern->ctx->props, &b);
    sdi_json_key(&j, "bounds");
    sdi_plan_bounds_json(&b, &j);
    /* What rebuilds the kernel from a cache entry (null for an agent kernel, which is
     * cached by its round). */
    sdi_json_key(&j, "impl");
    if (im->kind == SDI_IMPL_AGENT)
        sdi_json_null(&j);
    else
        sdi_impl_record_json(im, kern->has_b, &j);
    sdi_json_end_object(&j);
    return sdi_json_take(&j, out);
}

static void fill_key(const sd_kernel *kern, const sd_compile_options *o, sdi_cache_key *key)
{
    int32_t flags = (o->allow_vendor ? 1 : 0) | (o->deterministic ? 2 : 0);
    /* A winner found with the agent round is not one found without it (and vice versa). */
    if (kern->op != SD_OP_SPGEMM && sdi_config_get()->lowering == SDI_LOWERING_AGENT)
        flags |= SDI_CACHE_FLAG_AGENT_SEARCHED;
    sdi_tune_task_key(kern->ctx, &kern->a, kern->has_b ? &kern->b : NULL, kern->op, kern->k, flags, key);
}

/* The report the caller asked for, written as every output file is (core/io.h). */
static sd_status write_report(const char *path, const sd_kernel *kern)
{
    const char *parts[5] = {"{\"plan\":", kern->plan_json ? kern->plan_json : "null", ",\"search\":",
                            kern->record_json ? kern->record_json : "null", "}\n"};
    sdi_atomic_file af;
    sd_status s = sdi_atomic_begin(&af, path);
    for (int i = 0; i < 5 && s == SD_OK; i++)
        s = sdi_atomic_write(&af, parts[i], strlen(parts[i])); /* releases af on failure */
    if (s == SD_OK)
        s = sdi_atomic_commit(&af);
    if (s != SD_OK)
        sdi_error_prefix("the report");
    return s;
}

/* The search (cache miss). */
static sd_status search(sd_kernel *kern, const sd_compile_options *o, sdi_tune_progress_fn progress,
                        void *progress_arg)
{
    sdi_tune_options to;
    memset(&to, 0, sizeof to);
    to.budget = o->budget;
    to.allow_vendor = o->allow_vendor;
    to.deterministic = o->deterministic;
    to.measure_vendor = 1;
    to.progress = progress;
    to.progress_arg = progress_arg;
    sdi_tune_result *r = sdi_calloc(1, sizeof *r);
    if (r == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the search");
    pthread_mutex_lock(&g_search_lock);
    sd_status s = kern->op == SD_OP_SPGEMM
                      ? sdi_tune_spgemm(kern->ctx, &kern->a, kern->has_b ? &kern->b : NULL, -1, &to, r)
                      : sdi_tune(kern->ctx, &kern->a, kern->op, kern->k, &to, r);
    pthread_mutex_unlock(&g_search_lock);
    if (s == SD_OK) {
        /* The record first: it names the winner, which then moves into the kernel. */
        sdi_json j;
        sdi_json_init(&j, 0);
        sdi_tune_result_json(r, &j);
        s = sdi_json_finish(&j);
        if (s == SD_OK) {
            kern->record_json = j.buf;
            j.buf = NULL;
            kern->impl = r->best; /* the built winner moves into the kernel */
            memset(&r->best, 0, sizeof r->best);
        }
        sdi_json_free(&j);
    }
    sdi_tune_result_free(r);
    sdi_free(r);
    return s;
}

/* The kernel's side of the cache tiers (cache/tiers.h). */
typedef struct {
    sd_kernel *kern;
    const sd_compile_options *o;
    sdi_tune_progress_fn progress;
    void *progress_arg;
    sdi_impl_blobs blobs;
} tier_task;

static sd_status tier_load(void *arg, const sdi_cache_entry *e, bool *used)
{
    tier_task *t = arg;
    sd_kernel *kern = t->kern;
    sd_status s = sdi_impl_from_entry(kern->ctx, &kern->a, kern->has_b ? &kern->b : NULL, kern->op, e,
                                      &kern->impl, used);
    if (s != SD_OK || !*used)
        return s;
    kern->record_json = dup_text(e->record_json ? e->record_json : "{}");
    if (kern->record_json == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the kernel record");
    return SD_OK;
}

/* An agent kernel that won this task is cached under its own key (the built-in entry is
 * not written for it): re-checked in a worker, it runs with no search. */
static sd_status tier_load_agent(void *arg, bool *used)
{
    tier_task *t = arg;
    sd_kernel *kern = t->kern;
    *used = false;
    if (kern->op == SD_OP_SPGEMM)
        return SD_OK;
    sdi_tune_options to;
    memset(&to, 0, sizeof to);
    to.allow_vendor = t->o->allow_vendor;
    to.deterministic = t->o->deterministic;
    return sdi_tune_agent_cached(kern->ctx, &kern->a, kern->op, kern->k, &to, &kern->impl, &kern->record_json,
                                 used);
}

static sd_status tier_compile(void *arg)
{
    tier_task *t = arg;
    return search(t->kern, t->o, t->progress, t->progress_arg);
}

static sd_status tier_entry(void *arg, sdi_cache_entry *e, bool *store)
{
    tier_task *t = arg;
    sd_kernel *kern = t->kern;
    /* An agent winner was cached by its round, under the agent key, with its provenance. */
    *store = kern->impl.kind != SDI_IMPL_AGENT;
    if (!*store)
        return SD_OK;
    sd_status s = plan_json(kern, &kern->plan_json);
    if (s != SD_OK)
        return s;
    sdi_impl_entry_blobs(kern->ctx, &kern->impl, &t->blobs);
    e->plan_json = kern->plan_json;
    e->record_json = kern->record_json;
    e->nblobs = t->blobs.n;
    e->blobs = t->blobs.blobs;
    return SD_OK;
}

static void tier_entry_done(void *arg, sdi_cache_entry *e)
{
    (void)arg;
    memset(e, 0, sizeof *e); /* everything it points to is the kernel's */
}

/* sd_compile and sd_compile_spgemm: b is a general B for SpGEMM (NULL: A·A or A·Aᵀ);
 * fn names the entry point in messages. cache_only: a cached kernel or SD_ERR_CACHE, never
 * a search (`sparseditto run`). */
static sd_status compile_any(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op, int k,
                             const sd_compile_options *opts, sdi_tune_progress_fn progress,
                             void *progress_arg, const char *fn, bool cache_only, sd_kernel **out)
{
    sd_kernel *kern = NULL;
#define SD_FREE_ALL kernel_free(kern)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: out is NULL", fn);
    *out = NULL;
    if (ctx == NULL || a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: %s is NULL", fn, ctx == NULL ? "ctx" : "a");
    if (op != SD_OP_SPMV && op != SD_OP_SPMM && op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: unknown operator %d", fn, (int)op);
    if (op == SD_OP_SPMM && k <= 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: SpMM needs K >= 1 (got %d)", fn, k);
    if (op == SD_OP_SPMM && k > 65536)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "%s: K = %d is beyond 65536", fn, k);
    if (b != NULL && a->cols != b->rows)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: A is %dx%d and B is %dx%d: inner sizes differ",
                       fn, a->rows, a->cols, b->rows, b->cols);
    sd_compile_options o = opts != NULL ? *opts : sd_compile_options_default();
    if (o.budget < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: budget %d is negative", fn, o.budget);
    /* With the other argument checks, before anything is allocated. */
    if (cache_only && !o.use_cache)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: a cached kernel was asked for with use_cache = 0", fn);
    SD_TRY(sd_csr_check(a));
    if (b != NULL) {
        sd_status sb = sd_csr_check(b);
        if (sb != SD_OK) {
            sdi_error_prefix("%s: B", fn);
            return sb;
        }
    }
    SD_TRY(sdi_ctx_enter(ctx));
    double t0 = sdi_now();
    kern = sdi_calloc(1, sizeof *kern);
    SD_CHECK_ALLOC(kern, "a kernel");
    pthread_mutex_init(&kern->lock, NULL);
    kern->magic = SDI_KERNEL_MAGIC;
    kern->ctx = ctx;
    SD_TRY(sdi_cuda_status(ctx, cudaEventCreateWithFlags(&kern->done, cudaEventDisableTiming),
                           "creating the kernel's call-order event", NULL));
    kern->op = op;
    kern->k = op == SD_OP_SPMM ? k : 1;
    SD_TRY(sdi_csr_copy(a, &kern->a));
    if (b != NULL) {
        SD_TRY(sdi_csr_copy(b, &kern->b));
        kern->has_b = 1;
    }

    sdi_cache_key key;
    fill_key(kern, &o, &key);
    tier_task task = {.kern = kern, .o = &o, .progress = progress, .progress_arg = progress_arg};
    const sdi_cache_hooks hooks = {&task, tier_load, tier_load_agent, tier_compile, tier_entry, tier_entry_done};
    sdi_tier from = SDI_TIER_ABSENT;
    SD_TRY(sdi_cache_tiers_get(ctx->cache_dir && ctx->cache_dir[0] ? ctx->cache_dir : NULL, o.use_cache != 0,
                               cache_only, &key, &hooks, &from));
    if (from == SDI_TIER_ABSENT) {
        char what[32];
        if (op == SD_OP_SPMM)
            snprintf(what, sizeof what, "spmm K=%d", k);
        else
            snprintf(what, sizeof what, "%s", op == SD_OP_SPMV ? "spmv" : b != NULL ? "spgemm A*B" : "spgemm");
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_CACHE,
                       "%s: no cached kernel for this task (%dx%d, nnz %lld, %s%s%s) under '%s': compile it "
                       "first, with the same --no-vendor / --deterministic choices",
                       fn, a->rows, a->cols, (long long)a->nnz, what, o.allow_vendor ? "" : ", no vendor",
                       o.deterministic ? ", deterministic" : "",
                       ctx->cache_dir && ctx->cache_dir[0] ? ctx->cache_dir : "(the default cache)");
    }
    kern->from_cache = from != SDI_TIER_COMPILED;
    if (kern->plan_json == NULL)
        SD_TRY(plan_json(kern, &kern->plan_json));
    kern->ready_ms = (sdi_now() - t0) * 1e3;
    /* A report that cannot be written fails the call rather than going missing silently
     * (the kernel is in the cache: a second call is quick). */
    if (o.report_path != NULL)
        SD_TRY(write_report(o.report_path, kern));
    *out = kern;
    return SD_OK;
#undef SD_FREE_ALL
}

/* sd_compile with a progress hook (the CLI's TTY progress). */
SDI_HIDDEN sd_status sdi_compile_ex(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                                    const sd_compile_options *opts, sdi_tune_progress_fn progress,
                                    void *progress_arg, sd_kernel **out);
sd_status sdi_compile_ex(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                         const sd_compile_options *opts, sdi_tune_progress_fn progress,
                         void *progress_arg, sd_kernel **out)
{
    return compile_any(ctx, a, NULL, op, k, opts, progress, progress_arg, "sd_compile", false, out);
}

/* A kernel from the cache only (SD_ERR_CACHE when the task has none): `sparseditto run`.
 * b: SpGEMM's general B, or NULL. */
SDI_HIDDEN sd_status sdi_compile_cached(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op, int k,
                                        const sd_compile_options *opts, sd_kernel **out);
sd_status sdi_compile_cached(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op, int k,
                             const sd_compile_options *opts, sd_kernel **out)
{
    return compile_any(ctx, a, b == a ? NULL : b, op, k, opts, NULL, NULL, "sparseditto run", true, out);
}

/* sd_compile_spgemm with a progress hook: b NULL or b == a is A·A / A·Aᵀ. */
SDI_HIDDEN sd_status sdi_compile_spgemm_ex(sd_context *ctx, const sd_csr *a, const sd_csr *b,
                                           const sd_compile_options *opts,
                                           sdi_tune_progress_fn progress, void *progress_arg,
                                           sd_kernel **out);
sd_status sdi_compile_spgemm_ex(sd_context *ctx, const sd_csr *a, const sd_csr *b,
                                const sd_compile_options *opts, sdi_tune_progress_fn progress,
                                void *progress_arg, sd_kernel **out)
{
    return compile_any(ctx, a, b == a ? NULL : b, SD_OP_SPGEMM, 1, opts, progress, progress_arg,
                       "sd_compile_spgemm", false, out);
}

sd_status sd_compile(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                     const sd_compile_options *opts, sd_kernel **out)
{
    return sdi_compile_ex(ctx, a, op, k, opts, NULL, NULL, out);
}

sd_status sd_compile_spgemm(sd_context *ctx, const sd_csr *a, const sd_csr *b,
                            const sd_compile_options *opts, sd_kernel **out)
{
    return sdi_compile_spgemm_ex(ctx, a, b, opts, NULL, NULL, out);
}

sd_status sd_kernel_update_values(sd_kernel *kern, const float *vals_host)
{
    sd_status s = check_kernel(kern, "sd_kernel_update_values");
    if (s != SD_OK)
        return s;
    /* A SpGEMM kernel for A·B takes A's values followed by B's. */
    const int64_t total = kern->a.nnz + (kern->has_b ? kern->b.nnz : 0);
    if (vals_host == NULL && total > 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_kernel_update_values: vals is NULL");
    for (int64_t e = 0; e < total; e++)
        if (!isfinite(vals_host[e]))
            return SDI_ERR(SD_ERR_INVALID_ARG, "sd_kernel_update_values: value %lld is not finite",
                           (long long)e);
    pthread_mutex_lock(&kern->lock);
    /* The device arrays are rewritten on the context's stream: the calls queued on the
     * callers' streams read the old values first. */
    s = wait_last_call(kern, "sd_kernel_update_values");
    if (s != SD_OK) {
        pthread_mutex_unlock(&kern->lock);
        return s;
    }
    if (kern->a.nnz > 0)
        memcpy(kern->a.vals, vals_host, (size_t)kern->a.nnz * sizeof *vals_host);
    if (kern->has_b && kern->b.nnz > 0)
        memcpy(kern->b.vals, vals_host + kern->a.nnz, (size_t)kern->b.nnz * sizeof *vals_host);
    s = sdi_impl_update_values(kern->ctx, &kern->impl, &kern->a);
    pthread_mutex_unlock(&kern->lock);
    return s;
}

static sd_status run_dense(sd_kernel *kern, sd_op op, const float *in, float *out, void *stream,
                           const char *fn)
{
    sd_status s = check_kernel(kern, fn);
    if (s != SD_OK)
        return s;
    if (kern->op != op)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: the kernel was compiled for %s", fn,
                       kern->op == SD_OP_SPMV ? "SpMV" : kern->op == SD_OP_SPMM ? "SpMM" : "SpGEMM");
    if ((in == NULL && kern->a.cols > 0) || (out == NULL && kern->a.rows > 0))
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: input or output pointer is NULL", fn);
    /* 16-byte loads of x / B in some templates need aligned operands. */
    if (((uintptr_t)in & 15) != 0 || ((uintptr_t)out & 15) != 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: operands must be 16-byte aligned (cudaMalloc is)", fn);
    if (kern->ctx->broken)
        return SDI_ERR(SD_ERR_CUDA, "%s: %s", fn, kern->ctx->broken_reason);
    pthread_mutex_lock(&kern->lock);
    bool capturing = false;
    unsigned long long sid = 0;
    s = call_begin(kern, (cudaStream_t)stream, &capturing, &sid, fn);
    if (s == SD_OK) {
        s = sdi_impl_run(kern->ctx, &kern->impl, in, out, (cudaStream_t)stream);
        s = call_end(kern, (cudaStream_t)stream, capturing, sid, s, fn);
    }
    pthread_mutex_unlock(&kern->lock);
    return s;
}

sd_status sd_spmv(sd_kernel *kern, const float *x, float *y, void *stream)
{
    return run_dense(kern, SD_OP_SPMV, x, y, stream, "sd_spmv");
}

sd_status sd_spmm(sd_kernel *kern, const float *b, float *c, void *stream)
{
    return run_dense(kern, SD_OP_SPMM, b, c, stream, "sd_spmm");
}

sd_status sd_spgemm(sd_kernel *kern, sd_device_csr *c_out, void *stream)
{
    if (c_out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_spgemm: c_out is NULL");
    memset(c_out, 0, sizeof *c_out);
    sd_status s = check_kernel(kern, "sd_spgemm");
    if (s != SD_OK)
        return s;
    if (kern->op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_spgemm: the kernel was compiled for %s",
                       kern->op == SD_OP_SPMV ? "SpMV" : "SpMM");
    if (kern->ctx->broken)
        return SDI_ERR(SD_ERR_CUDA, "sd_spgemm: %s", kern->ctx->broken_reason);
    pthread_mutex_lock(&kern->lock);
    bool capturing = false;
    unsigned long long sid = 0;
    s = call_begin(kern, (cudaStream_t)stream, &capturing, &sid, "sd_spgemm");
    if (s == SD_OK) {
        s = sdi_impl_run_spgemm(kern->ctx, &kern->impl, (cudaStream_t)stream, c_out);
        s = call_end(kern, (cudaStream_t)stream, capturing, sid, s, "sd_spgemm");
    }
    pthread_mutex_unlock(&kern->lock);
    return s;
}

sd_status sd_kernel_describe(const sd_kernel *kern, char *json, size_t cap)
{
    sd_status s = check_kernel(kern, "sd_kernel_describe");
    if (s != SD_OK)
        return s;
    char head[160];
    int hn = snprintf(head, sizeof head,
                      "{\"rows\":%d,\"cols\":%d,\"nnz\":%lld,\"from_cache\":%s,\"ready_ms\":%.3f,",
                      kern->a.rows, kern->a.cols, (long long)kern->a.nnz,
                      kern->from_cache ? "true" : "false", kern->ready_ms);
    const char *plan = kern->plan_json ? kern->plan_json : "null";
    const char *rec = kern->record_json ? kern->record_json : "null";
    size_t need = (size_t)hn + strlen("\"plan\":,\"search\":}") + strlen(plan) + strlen(rec) + 1;
    if (json == NULL || cap < need)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_kernel_describe: the buffer needs %zu bytes", need);
    snprintf(json, cap, "%s\"plan\":%s,\"search\":%s}", head, plan, rec);
    return SD_OK;
}

void sd_kernel_destroy(sd_kernel *kern)
{
    if (kern == NULL || kern->magic != SDI_KERNEL_MAGIC)
        return;
    kernel_free(kern);
}
