/* src/api/compile.c: sd_compile and sd_compile_spgemm — the kernel for a task from the
 * cache tiers (memory → disk), else from a search, stored afterwards (cache/tiers.h).
 * The winner is a candidate (tune/candidate.h); its executable moves into the kernel,
 * which execute.c runs. Searches are serialised process-wide: they time kernels, and two
 * searches sharing a GPU would time each other. Cache hits take no lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api/kernel.h"
#include "cache/tiers.h"
#include "core/io.h"
#include "model/model_files.h"
#include "plan/plan.h"
#include "tune/agent_round.h"
#include "tune/plan_cache.h"
#include "tune/tune.h"

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

static char *dup_text(const char *s)
{
    size_t n = strlen(s);
    char *d = sdi_malloc(n + 1);
    if (d != NULL)
        memcpy(d, s, n + 1);
    return d;
}

/* The plan of the winner c (built): family, configuration, the plan itself, lowering,
 * static bounds and the record the cache rebuilds it from. */
static sd_status plan_json(const sd_kernel *kern, const sdi_candidate *c, char **out)
{
    *out = NULL;
    const sdi_executable *exe = &c->exe;
    sdi_json j;
    sdi_json_init(&j, 0);
    char buf[SDI_PLAN_TEXT];
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "op");
    sdi_json_string(&j, sdi_op_name(kern->op));
    sdi_json_key(&j, "k");
    sdi_json_int(&j, kern->k);
    sdi_candidate_family(c, buf, sizeof buf);
    sdi_json_key(&j, "family");
    sdi_json_string(&j, buf);
    sdi_candidate_describe(c, buf, sizeof buf);
    sdi_json_key(&j, "config");
    sdi_json_string(&j, buf);
    sdi_json_key(&j, "vendor");
    sdi_json_bool(&j, c->kind == SDI_CAND_VENDOR);
    /* The V_o label the plan instantiates; null outside V_o (and for cuSPARSE / agent). */
    sdi_json_key(&j, "vo_label");
    if (sdi_candidate_vo_label(c, buf, sizeof buf))
        sdi_json_string(&j, buf);
    else
        sdi_json_null(&j);
    sdi_json_key(&j, "deterministic");
    sdi_json_bool(&j, !sdi_candidate_uses_atomics(c));
    /* Π itself (null for cuSPARSE and agent kernels, which are not plans of ours). */
    sdi_json_key(&j, "plan");
    if (c->kind == SDI_CAND_PLAN)
        sdi_plan_json(&c->plan, &j);
    else
        sdi_json_null(&j);
    if (exe->kind == SDI_EXE_PROGRAM) {
        sdi_json_key(&j, "lowering");
        sdi_lowered_json(&exe->low, &j);
    } else if (exe->kind == SDI_EXE_SPGEMM) {
        sdi_json_key(&j, "lowering");
        sdi_sg_schedule_json(sdi_spgemm_exec_schedule(exe->sg), &j);
    }
    if (kern->op == SD_OP_SPGEMM) {
        sdi_json_key(&j, "product");
        sdi_json_string(&j, kern->has_b ? "A*B" : c->sg_aat ? "A*At" : "A*A");
        sdi_json_key(&j, "peak_bytes");
        sdi_json_int(&j, sdi_exe_peak_bytes(exe));
    }
    int64_t value, meta, work;
    sdi_exe_bytes(exe, &value, &meta, &work);
    sdi_plan_bounds b;
    sdi_plan_bounds_compute(value, meta, work, kern->op, kern->k, kern->a.rows, kern->a.cols,
                            kern->a.nnz, &kern->ctx->props, &b);
    sdi_json_key(&j, "bounds");
    sdi_plan_bounds_json(&b, &j);
    /* What rebuilds the kernel from a cache entry (null for an agent kernel, which is
     * cached by its round). */
    sdi_json_key(&j, "record");
    if (c->kind == SDI_CAND_AGENT)
        sdi_json_null(&j);
    else
        sdi_plan_record_json(c, kern->has_b, &j);
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

/* The kernel's side of the cache tiers (cache/tiers.h): the winner is built into cand
 * (from an entry, the agent's entry or a search) and moves into the kernel at the end. */
typedef struct {
    sd_kernel *kern;
    const sd_compile_options *o;
    sdi_tune_progress_fn progress;
    void *progress_arg;
    sdi_candidate cand;
    sdi_plan_blobs blobs;
} tier_task;

/* The search (cache miss). */
static sd_status search(tier_task *t)
{
    sd_kernel *kern = t->kern;
    sdi_tune_options to;
    memset(&to, 0, sizeof to);
    to.budget = t->o->budget;
    to.allow_vendor = t->o->allow_vendor;
    to.deterministic = t->o->deterministic;
    to.measure_vendor = 1;
    to.progress = t->progress;
    to.progress_arg = t->progress_arg;
    sdi_tune_result *r = sdi_calloc(1, sizeof *r);
    if (r == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the search");
    pthread_mutex_lock(&g_search_lock);
    sd_status s = kern->op == SD_OP_SPGEMM
                      ? sdi_tune_spgemm(kern->ctx, &kern->a, kern->has_b ? &kern->b : NULL, -1, &to, r)
                      : sdi_tune(kern->ctx, &kern->a, kern->op, kern->k, &to, r);
    pthread_mutex_unlock(&g_search_lock);
    if (s == SD_OK) {
        /* The record first: it names the winner, which then moves out of the result. */
        sdi_json j;
        sdi_json_init(&j, 0);
        sdi_tune_result_json(r, &j);
        s = sdi_json_finish(&j);
        if (s == SD_OK) {
            kern->record_json = j.buf;
            j.buf = NULL;
            t->cand = r->best; /* the built winner, with its executable */
            memset(&r->best, 0, sizeof r->best);
        }
        sdi_json_free(&j);
    }
    sdi_tune_result_free(r);
    sdi_free(r);
    return s;
}

static sd_status tier_load(void *arg, const sdi_cache_entry *e, bool *used)
{
    tier_task *t = arg;
    sd_kernel *kern = t->kern;
    sd_status s = sdi_plan_from_entry(kern->ctx, &kern->a, kern->has_b ? &kern->b : NULL, kern->op, e,
                                      &t->cand, used);
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
    return sdi_tune_agent_cached(kern->ctx, &kern->a, kern->op, kern->k, &to, &t->cand, &kern->record_json,
                                 used);
}

static sd_status tier_compile(void *arg)
{
    return search(arg);
}

static sd_status tier_entry(void *arg, sdi_cache_entry *e, bool *store)
{
    tier_task *t = arg;
    sd_kernel *kern = t->kern;
    /* An agent winner was cached by its round, under the agent key, with its provenance. */
    *store = t->cand.kind != SDI_CAND_AGENT;
    if (!*store)
        return SD_OK;
    sd_status s = plan_json(kern, &t->cand, &kern->plan_json);
    if (s != SD_OK)
        return s;
    sdi_plan_entry_blobs(kern->ctx, &t->cand, &t->blobs);
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
    tier_task task;
    memset(&task, 0, sizeof task);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_candidate_release(&task.cand);                                                 \
        sdi_kernel_free(kern);                                                             \
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
    task.kern = kern;
    task.o = &o;
    task.progress = progress;
    task.progress_arg = progress_arg;
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
        SD_TRY(plan_json(kern, &task.cand, &kern->plan_json));
    /* The winner's executable is the kernel's from here; the candidate keeps nothing. */
    kern->exe = task.cand.exe;
    memset(&task.cand, 0, sizeof task.cand);
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
