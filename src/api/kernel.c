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

#include "cache/cache.h"
#include "core/io.h"
#include "plan/plan.h"
#include "tune/tune.h"
#include "tune/tune_agent.h"

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

/* What a cache entry stores to rebuild the winner (binary, versioned by the cache key's
 * library and generator versions). */
typedef struct {
    int32_t kind, op, k;
    int32_t flags; /* IMPL_VENDOR_PLAIN; 0 in entries older than the flag (graph replay) */
    sdi_spmv_config spmv;
    sdi_spmm_config spmm;
    char vendor[48];
    sdi_spgemm_config spgemm;
    int32_t aat, general_b; /* SpGEMM product */
} impl_record;

#define IMPL_VENDOR_PLAIN 1 /* cuSPARSE's calls run plainly (sdi_impl.vendor_plain) */

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
    sdi_json_string(&j, kern->op == SD_OP_SPMV ? "spmv" : kern->op == SD_OP_SPMM ? "spmm" : "spgemm");
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
    sdi_json_end_object(&j);
    sd_status s = sdi_json_finish(&j);
    if (s == SD_OK) {
        *out = j.buf;
        j.buf = NULL;
    }
    sdi_json_free(&j);
    return s;
}

static void fill_key(const sd_kernel *kern, const sd_compile_options *o, sdi_cache_key *key)
{
    int32_t flags = (o->allow_vendor ? 1 : 0) | (o->deterministic ? 2 : 0);
    /* A winner found with the agent round is not one found without it (and vice versa). */
    if (kern->op != SD_OP_SPGEMM && sdi_config_get()->lowering == SDI_LOWERING_AGENT)
        flags |= SDI_CACHE_FLAG_AGENT_SEARCHED;
    sdi_tune_task_key(kern->ctx, &kern->a, kern->has_b ? &kern->b : NULL, kern->op, kern->k, flags, key);
}

/* A SpGEMM entry holds its program as launch units, each its source and cubin ("sg_src_<u>",
 * "sg_cubin_<u>", their count in "sg_units"), plus the scan ("cubin_scan"): the memo is
 * seeded with them as they are, so it needs no schedule (that needs the device operands).
 * An entry without "sg_units" predates per-launch units (one module, other kernel names):
 * false, and the entry is rebuilt rather than read as something it is not. */
#define SG_BLOB_UNITS "sg_units"

static const sdi_cache_blob *find_blob(const sdi_cache_entry *e, const char *name)
{
    for (int i = 0; i < e->nblobs; i++)
        if (strcmp(e->blobs[i].name, name) == 0)
            return &e->blobs[i];
    return NULL;
}

static bool seed_spgemm_units(sd_context *ctx, const sdi_cache_entry *e, int fast)
{
    const sdi_cache_blob *nb = find_blob(e, SG_BLOB_UNITS);
    int32_t n = 0;
    if (nb == NULL || nb->size != sizeof n)
        return false;
    memcpy(&n, nb->data, sizeof n);
    if (n < 0 || n > SDI_SG_MAX_LAUNCHES)
        return false;
    for (int32_t u = 0; u < n; u++) {
        char name[64];
        snprintf(name, sizeof name, "sg_src_%d", u);
        const sdi_cache_blob *src = find_blob(e, name);
        snprintf(name, sizeof name, "sg_cubin_%d", u);
        const sdi_cache_blob *bin = find_blob(e, name);
        if (src == NULL || bin == NULL || src->size == 0 ||
            strnlen(src->data, src->size) != src->size - 1)
            return false;
        sdi_jit_request req;
        memset(&req, 0, sizeof req);
        req.source = src->data;
        req.kernel_name = "a cached SpGEMM unit";
        req.fast = fast; /* the level the units were compiled at: part of the memo key */
        req.link = sdi_config_get()->sg_link; /* linked units are keyed apart (jit.c) */
        if (sdi_jit_memo_put(ctx, &req, bin->data, bin->size) != SD_OK)
            sdi_error_clear(); /* compiled again if needed */
    }
    const sdi_cache_blob *scan = find_blob(e, "cubin_scan");
    if (scan != NULL) {
        sdi_jit_request req;
        sdi_spgemm_scan_request(&req);
        if (sdi_jit_memo_put(ctx, &req, scan->data, scan->size) != SD_OK)
            sdi_error_clear();
    }
    return true;
}

/* The cubin of req as the blob `name` in *b: 1, or 0 (error cleared) when it cannot be had. */
static int cubin_blob(sd_kernel *kern, const sdi_jit_request *req, const char *name,
                      sdi_cache_blob *b)
{
    const sdi_cubin *cub = NULL;
    if (sdi_jit_get(kern->ctx, req, &cub, NULL) != SD_OK) {
        sdi_error_clear();
        return 0;
    }
    snprintf(b->name, sizeof b->name, "%s", name);
    b->data = cub->cubin;
    b->size = cub->size;
    return 1;
}

/* The blobs of a built SpGEMM implementation's units and scan, after blobs[0 .. n) (cap
 * entries in all; *count receives the unit count the "sg_units" blob points at). All
 * units or none: an entry missing one is rebuilt on load. Returns the new n. */
static int spgemm_blobs(sd_kernel *kern, sdi_cache_blob *blobs, int n, int cap, int32_t *count)
{
    const sdi_sg_lowered *low = &kern->impl.sg_low;
    const int n0 = n;
    if (n + 2 * low->nunits + 2 > cap)
        return n0;
    for (int u = 0; u < low->nunits; u++) {
        sdi_jit_request req;
        char name[32];
        sdi_spgemm_unit_request(low, u, &req);
        snprintf(name, sizeof name, "sg_cubin_%d", u);
        if (!cubin_blob(kern, &req, name, &blobs[n + 1]))
            return n0;
        snprintf(blobs[n].name, sizeof blobs[n].name, "sg_src_%d", u);
        blobs[n].data = low->units[u].source;
        blobs[n].size = strlen(low->units[u].source) + 1;
        n += 2;
    }
    *count = low->nunits;
    snprintf(blobs[n].name, sizeof blobs[n].name, SG_BLOB_UNITS);
    blobs[n].data = count;
    blobs[n].size = sizeof *count;
    n++;
    sdi_jit_request req;
    sdi_spgemm_scan_request(&req);
    n += cubin_blob(kern, &req, "cubin_scan", &blobs[n]);
    sdi_error_clear();
    return n;
}

/* A cache hit: rebuild the winner from its record and cubin(s). SD_OK with *used = 0 when
 * the entry cannot be used (it is then rebuilt by a search). */
static sd_status load_from_cache(sd_kernel *kern, const sdi_cache_entry *e, int *used)
{
    *used = 0;
    const sdi_cache_blob *rec = NULL, *cubin = NULL, *prep = NULL;
    for (int i = 0; i < e->nblobs; i++) {
        if (strcmp(e->blobs[i].name, "impl") == 0)
            rec = &e->blobs[i];
        else if (strcmp(e->blobs[i].name, "cubin") == 0)
            cubin = &e->blobs[i];
        else if (strcmp(e->blobs[i].name, "cubin_prep") == 0)
            prep = &e->blobs[i];
    }
    if (rec == NULL || rec->size != sizeof(impl_record)) {
        sdi_log(1, "cache: entry without a usable implementation record: rebuilding");
        return SD_OK;
    }
    impl_record r;
    memcpy(&r, rec->data, sizeof r);
    if (r.op != (int32_t)kern->op || r.general_b != kern->has_b ||
        (r.kind != SDI_IMPL_SPMV && r.kind != SDI_IMPL_SPMM && r.kind != SDI_IMPL_VENDOR &&
         r.kind != SDI_IMPL_SPGEMM)) {
        sdi_log(1, "cache: entry for another operator or kind: rebuilding");
        return SD_OK;
    }
    memset(&kern->impl, 0, sizeof kern->impl);
    kern->impl.kind = (sdi_impl_kind)r.kind;
    kern->impl.op = kern->op;
    kern->impl.k = r.k;
    kern->impl.spmv_cfg = r.spmv;
    kern->impl.spmm_cfg = r.spmm;
    memcpy(kern->impl.vendor_name, r.vendor, sizeof r.vendor);
    kern->impl.vendor_name[sizeof kern->impl.vendor_name - 1] = '\0';
    kern->impl.vendor_plain = (r.flags & IMPL_VENDOR_PLAIN) != 0;
    kern->impl.spgemm_cfg = r.spgemm;
    kern->impl.sg_aat = r.aat;
    kern->impl.sg_b = kern->has_b ? &kern->b : NULL;
    if (prep != NULL) {
        /* The operand preparation module: seeded so that a hit runs no NVRTC at all. */
        sdi_jit_request req;
        sdi_spgemm_prep_request(&req);
        if (sdi_jit_memo_put(kern->ctx, &req, prep->data, prep->size) != SD_OK)
            sdi_error_clear();
    }
    if (r.kind == SDI_IMPL_SPGEMM && !seed_spgemm_units(kern->ctx, e, r.spgemm.fast_compile)) {
        sdi_log(1, "cache: SpGEMM entry without its launch units (an older layout): rebuilding");
        return SD_OK;
    }
    const bool seed = cubin != NULL && r.kind != SDI_IMPL_SPGEMM;
    sd_status s = sdi_impl_build(kern->ctx, &kern->a, &kern->impl, seed ? cubin->data : NULL,
                                 seed ? cubin->size : 0);
    if (s != SD_OK) {
        if (kern->ctx->broken)
            return s;
        sdi_log(1, "cache: entry could not be rebuilt (%s): searching again", sd_last_error());
        sdi_error_clear();
        return SD_OK;
    }
    kern->record_json = dup_text(e->record_json ? e->record_json : "{}");
    if (kern->record_json == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the kernel record");
    *used = 1;
    return SD_OK;
}

static sd_status store_in_cache(sdi_cache *cache, const sdi_cache_key *key, sd_kernel *kern)
{
    /* An agent winner was cached by its round, under the agent key, with its provenance. */
    if (kern->impl.kind == SDI_IMPL_AGENT)
        return SD_OK;
    impl_record r;
    memset(&r, 0, sizeof r);
    r.kind = kern->impl.kind;
    r.op = kern->op;
    r.k = kern->impl.k;
    r.spmv = kern->impl.spmv_cfg;
    r.spmm = kern->impl.spmm_cfg;
    snprintf(r.vendor, sizeof r.vendor, "%s", kern->impl.vendor_name);
    r.flags = kern->impl.vendor_plain ? IMPL_VENDOR_PLAIN : 0;
    r.spgemm = kern->impl.spgemm_cfg;
    r.aat = kern->impl.sg_aat;
    r.general_b = kern->has_b;
    sdi_cache_blob blobs[3 + 2 * SDI_SG_MAX_LAUNCHES + 2];
    int32_t sg_units = 0;
    memset(blobs, 0, sizeof blobs);
    int n = 0;
    snprintf(blobs[n].name, sizeof blobs[n].name, "impl");
    blobs[n].data = &r;
    blobs[n].size = sizeof r;
    n++;
    if (kern->impl.kind == SDI_IMPL_SPGEMM)
        n = spgemm_blobs(kern, blobs, n, (int)(sizeof blobs / sizeof blobs[0]), &sg_units);
    else if (kern->impl.kind != SDI_IMPL_VENDOR) {
        sdi_macro macros[SDI_SPMM_MAX_MACROS > SDI_SPMV_MAX_MACROS ? SDI_SPMM_MAX_MACROS : SDI_SPMV_MAX_MACROS];
        sdi_jit_request req;
        if (sdi_impl_jit_request(&kern->impl, kern->ctx, macros, &req) == SD_OK)
            n += cubin_blob(kern, &req, "cubin", &blobs[n]);
        sdi_error_clear();
    }
    if (kern->impl.kind == SDI_IMPL_SPGEMM) {
        sdi_jit_request req;
        sdi_spgemm_prep_request(&req);
        n += cubin_blob(kern, &req, "cubin_prep", &blobs[n]);
        sdi_error_clear();
    }
    sdi_cache_entry e = {kern->plan_json, kern->record_json, n, blobs};
    return sdi_cache_store(cache, key, &e);
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

/* sd_compile and sd_compile_spgemm: b is a general B for SpGEMM (NULL: A·A or A·Aᵀ);
 * fn names the entry point in messages. cache_only: a cached kernel or SD_ERR_CACHE, never
 * a search (`sparseditto run`). */
static sd_status compile_any(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op, int k,
                             const sd_compile_options *opts, sdi_tune_progress_fn progress,
                             void *progress_arg, const char *fn, bool cache_only, sd_kernel **out)
{
    sd_kernel *kern = NULL;
    sdi_cache *cache = NULL;
    sdi_cache_lock *lock = NULL;
    sdi_cache_entry entry;
    memset(&entry, 0, sizeof entry);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_cache_entry_free(&entry);                                                      \
        sdi_cache_lock_release(lock);                                                      \
        sdi_cache_close(cache);                                                            \
        kernel_free(kern);                                                                 \
    } while (0)
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
    int done = 0;
    if (o.use_cache) {
        sd_status s = sdi_cache_open(ctx->cache_dir && ctx->cache_dir[0] ? ctx->cache_dir : NULL, &cache);
        if (s != SD_OK) {
            /* An unusable cache degrades to no cache; the user still gets a kernel. */
            sdi_log(1, "kernel cache unusable (%s): compiling without it", sd_last_error());
            sdi_error_clear();
            cache = NULL;
        }
    }
    if (cache != NULL) {
        bool hit = false;
        SD_TRY(sdi_cache_lookup(cache, &key, &entry, &hit));
        if (!hit && !cache_only) {
            /* Miss: one process compiles, the others wait and then hit. */
            SD_TRY(sdi_cache_lock_acquire(cache, &key, 3600.0, &lock));
            SD_TRY(sdi_cache_lookup(cache, &key, &entry, &hit));
        }
        if (hit) {
            SD_TRY(load_from_cache(kern, &entry, &done));
            kern->from_cache = done;
        }
        sdi_cache_entry_free(&entry);
        if (!done && kern->op != SD_OP_SPGEMM) {
            /* An agent kernel that won this task is cached under its own key (the built-in
             * entry is not written for it): re-checked in a worker, it runs with no search. */
            sdi_tune_options to;
            memset(&to, 0, sizeof to);
            to.allow_vendor = o.allow_vendor;
            to.deterministic = o.deterministic;
            bool used = false;
            SD_TRY(sdi_tune_agent_cached(ctx, &kern->a, kern->op, kern->k, &to, &kern->impl, &kern->record_json,
                                         &used));
            done = used;
            kern->from_cache = used;
        }
    }
    if (!done && cache_only) {
        char task[32];
        if (op == SD_OP_SPMM)
            snprintf(task, sizeof task, "spmm K=%d", k);
        else
            snprintf(task, sizeof task, "%s", op == SD_OP_SPMV ? "spmv" : b != NULL ? "spgemm A*B" : "spgemm");
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_CACHE,
                       "%s: no cached kernel for this task (%dx%d, nnz %lld, %s%s%s) under '%s': compile it "
                       "first, with the same --no-vendor / --deterministic choices",
                       fn, a->rows, a->cols, (long long)a->nnz, task, o.allow_vendor ? "" : ", no vendor",
                       o.deterministic ? ", deterministic" : "",
                       ctx->cache_dir && ctx->cache_dir[0] ? ctx->cache_dir : "(the default cache)");
    }
    if (!done)
        SD_TRY(search(kern, &o, progress, progress_arg));
    SD_TRY(plan_json(kern, &kern->plan_json));
    if (cache != NULL && !kern->from_cache) {
        sd_status s = store_in_cache(cache, &key, kern);
        if (s != SD_OK) {
            sdi_log(1, "could not store the kernel in the cache: %s", sd_last_error());
            sdi_error_clear();
        }
    }
    sdi_cache_lock_release(lock);
    lock = NULL;
    sdi_cache_close(cache);
    cache = NULL;
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
