/* src/tune/agent_isolate.c: the search side of process isolation: a worker's reply as a
 * trial, a built-in candidate run in a worker, and the task's kernel-cache keys (the
 * search's entry and the agent's). The agent round is agent_round.c; the worker's side
 * src/isolate/worker_handler.c. */
#include <stdio.h>
#include <string.h>

#include "../isolate/worker_handler.h"
#include "agent_round.h"

/* ------------------------------------------------------------------ replies → trials */

void sdi_tune_trial_from_reply(const sdi_worker_reply *rep, sdi_trial *tr)
{
    memset(&tr->t, 0, sizeof tr->t);
    if (rep->outcome != SDI_WORKER_REPLIED) {
        tr->status = rep->outcome == SDI_WORKER_NOT_STARTED ? SD_ERR_INTERNAL : SD_ERR_CUDA;
        snprintf(tr->detail, sizeof tr->detail, "%.190s", rep->cause);
        return;
    }
    const char *st = sdi_jget_string(&rep->reply, "status", "error");
    tr->status = strcmp(st, "ok") == 0              ? SD_OK
                 : strcmp(st, "invalid") == 0       ? SD_ERR_VALIDATION
                 : strcmp(st, "compile_error") == 0 ? SD_ERR_COMPILE
                 : strcmp(st, "load_error") == 0    ? SD_ERR_COMPILE
                 : strcmp(st, "no_device") == 0     ? SD_ERR_NO_DEVICE
                 : strcmp(st, "fault") == 0         ? SD_ERR_CUDA
                                                    : SD_ERR_INTERNAL;
    snprintf(tr->detail, sizeof tr->detail, "%s%s%.180s", st, "; ", sdi_jget_string(&rep->reply, "detail", ""));
    tr->compile_ms = sdi_jget_number(&rep->reply, "compile_ms", 0);
    if (tr->status == SD_OK) {
        const sdi_jvalue *t = sdi_jget(&rep->reply, "timing");
        tr->t.mean_us = sdi_jget_number(t, "mean_us", 0);
        tr->t.min_us = sdi_jget_number(t, "min_us", 0);
        tr->t.median_us = sdi_jget_number(t, "median_us", 0);
        tr->t.pipelined_us = sdi_jget_number(t, "pipelined_us", 0);
        tr->roofline_frac = sdi_jget_number(&rep->reply, "roofline_frac", 0);
        tr->detail[0] = '\0';
    }
}

sd_status sdi_tune_run_isolated(sdi_worker *w, const sdi_candidate *cand, const char *matrix_path, double timeout_s,
                                sdi_trial *tr)
{
    char name[SDI_PLAN_TEXT], *req = NULL;
    sdi_candidate_describe(cand, name, sizeof name);
    sd_status s = sdi_worker_builtin_request(cand, name, matrix_path, &req);
    if (s != SD_OK)
        return s;
    sdi_worker_reply rep;
    s = sdi_worker_call(w, req, timeout_s, &rep);
    sdi_free(req);
    if (s != SD_OK)
        return s;
    sdi_candidate_family(cand, tr->family, sizeof tr->family);
    snprintf(tr->config, sizeof tr->config, "%s", name);
    sdi_tune_trial_from_reply(&rep, tr);
    sdi_worker_reply_free(&rep);
    return SD_OK;
}

/* ------------------------------------------------------------------ cache key */

void sdi_tune_task_key(const sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op, int k, int32_t flags,
                       sdi_cache_key *key)
{
    sdi_cache_key_init(key);
    /* The templates the entry's cubins and formats come from: the library version does not
     * change between builds, so without this a build with other templates would read an
     * older build's entries (cache.c's fixed revision "g1" did not follow the templates). */
    snprintf(key->generator, sizeof key->generator, "g2-%012llx",
             (unsigned long long)(sdi_kernel_templates_hash() & 0xffffffffffffull));
    sdi_cache_key_pattern(key, a, b);
    key->op = op;
    key->k = op == SD_OP_SPMM ? k : 0;
    key->flags |= flags;
    snprintf(key->gpu_name, sizeof key->gpu_name, "%s", ctx->props.name);
    key->cc_major = ctx->props.cc_major;
    key->cc_minor = ctx->props.cc_minor;
    int major = 0, minor = 0;
    if (sdi_nvrtc_version(&major, &minor) == SD_OK) {
        key->nvrtc_major = major;
        key->nvrtc_minor = minor;
    }
    key->driver_version = ctx->driver_version;
}

void sdi_tune_agent_key(const sd_context *ctx, const sd_csr *a, sd_op op, int k, const sdi_tune_options *opt,
                        sdi_cache_key *key)
{
    sdi_tune_task_key(ctx, a, NULL, op, k,
                      (opt && opt->allow_vendor ? 1 : 0) | (opt && opt->deterministic ? 2 : 0) | SDI_CACHE_FLAG_AGENT,
                      key);
}
