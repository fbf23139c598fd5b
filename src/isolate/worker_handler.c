/* src/isolate/worker_handler.c: what `sparseditto worker` runs for each request: a
 * candidate .so written by the model (nvcc, load, preprocess, validate, time; or two
 * executions under ncu) or a built-in candidate by configuration (build, validate, time),
 * and the encoding of built-in requests that the tuner sends. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tune/plan_cache.h"
#include "worker_handler.h"

#define NVCC_TIMEOUT_S 240

/* ------------------------------------------------------------------ built-in requests */

sd_status sdi_worker_builtin_request(const sdi_candidate *cand, const char *name, const char *matrix_path,
                                     char **out)
{
    *out = NULL;
    if (cand->kind != SDI_CAND_PLAN || (cand->op != SD_OP_SPMV && cand->op != SD_OP_SPMM))
        return SDI_ERR(SD_ERR_UNSUPPORTED, "isolated runs cover our SpMV and SpMM candidates");
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "name");
    sdi_json_string(&j, name);
    sdi_json_key(&j, "kind");
    sdi_json_string(&j, "builtin");
    sdi_json_key(&j, "op");
    sdi_json_int(&j, cand->op);
    sdi_json_key(&j, "k");
    sdi_json_int(&j, cand->op == SD_OP_SPMM ? cand->k : 1);
    sdi_json_key(&j, "matrix");
    sdi_json_string(&j, matrix_path);
    /* The record the kernel cache stores (tune/plan_cache.h). */
    sdi_json_key(&j, "config");
    sdi_plan_record_json(cand, 0, &j);
    sdi_json_end_object(&j);
    return sdi_json_take(&j, out);
}

/* ------------------------------------------------------------------ the worker's handler */

typedef struct {
    sd_context *ctx;
    bool ctx_tried;
    char ctx_why[300];
    char matrix_path[PATH_MAX];
    sd_csr a;
} worker_state;

static void ensure_ctx(worker_state *ws)
{
    if (ws->ctx_tried)
        return;
    ws->ctx_tried = true;
    sd_status s = sd_context_create(NULL, &ws->ctx);
    if (s != SD_OK) {
        snprintf(ws->ctx_why, sizeof ws->ctx_why, "%s", sd_last_error());
        sdi_error_clear();
        ws->ctx = NULL;
    }
}

static sd_status ensure_matrix(worker_state *ws, const char *path)
{
    if (path == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "the request names no matrix");
    if (ws->matrix_path[0] && strcmp(ws->matrix_path, path) == 0)
        return SD_OK;
    sd_csr_free(&ws->a);
    ws->matrix_path[0] = '\0';
    sd_status s = sd_csr_read(path, &ws->a);
    if (s == SD_OK)
        snprintf(ws->matrix_path, sizeof ws->matrix_path, "%s", path);
    return s;
}

static void put_status(sdi_json *reply, const char *status, const char *detail)
{
    sdi_json_key(reply, "status");
    sdi_json_string(reply, status);
    if (detail != NULL) {
        sdi_json_key(reply, "detail");
        sdi_json_string(reply, detail);
    }
}

static sd_status harness_run(void *arg, const float *x, float *y, cudaStream_t stream)
{
    sdi_harness *h = arg;
    int rc = h->compute(h->state, x, y, stream);
    if (rc != 0)
        return SDI_ERR(SD_ERR_CUDA, "sd_agent_compute returned %d (%s)", rc, cudaGetErrorString((cudaError_t)rc));
    return SD_OK;
}

typedef struct {
    sd_context *ctx;
    sdi_candidate *c;
} builtin_exec;

static sd_status builtin_run(void *arg, const float *x, float *y, cudaStream_t stream)
{
    builtin_exec *b = arg;
    return sdi_exe_run(b->ctx, &b->c->exe, x, y, stream);
}

/* An LLM-written candidate: nvcc (unless prebuilt), dlopen, preprocess, validate, time. */
static sd_status handle_agent(worker_state *ws, const sdi_jvalue *req, sdi_json *reply, bool *fatal)
{
    const char *name = sdi_jget_string(req, "name", "?");
    const char *src = sdi_jget_string(req, "source", NULL), *so = sdi_jget_string(req, "so", NULL);
    sd_op op = (sd_op)sdi_jget_number(req, "op", 0);
    int k = (int)sdi_jget_number(req, "k", 1);
    if (so == NULL || (op != SD_OP_SPMV && op != SD_OP_SPMM) || k < 1) {
        put_status(reply, "error", "the request needs \"so\", op 0 or 1 and k >= 1");
        return SD_OK;
    }
    if (src != NULL) {
        char log[PATH_MAX + 8];
        snprintf(log, sizeof log, "%s.log", so);
        double ms = 0;
        sd_status s = sdi_nvcc_shared(src, so, sdi_jget_string(req, "arch", NULL), log,
                                      sdi_jget_number(req, "compile_timeout_s", NVCC_TIMEOUT_S), &ms);
        sdi_json_key(reply, "compile_ms");
        sdi_json_number(reply, ms);
        if (s != SD_OK) {
            put_status(reply, "compile_error", sd_last_error());
            char tail[2100];
            sdi_file_tail(log, 2000, tail, sizeof tail);
            sdi_json_key(reply, "compile_log");
            sdi_json_string(reply, tail);
            return SD_OK;
        }
    }
    sdi_harness h;
    sd_status s = sdi_harness_load(so, &h);
    if (s != SD_OK) {
        put_status(reply, "load_error", sd_last_error());
        return SD_OK;
    }
    s = ensure_matrix(ws, sdi_jget_string(req, "matrix", NULL));
    if (s != SD_OK) {
        put_status(reply, "error", sd_last_error());
        sdi_harness_unload(&h);
        return SD_OK;
    }
    ensure_ctx(ws);
    /* preprocess runs even without a device: its host part is the candidate's too, and a
     * crash there must end only this process. */
    s = sdi_harness_prepare(&h, &ws->a, op, k);
    if (ws->ctx == NULL) {
        char why[700];
        snprintf(why, sizeof why, "compiled and loaded; preprocess %s; validation and timing need a GPU (%s)",
                 s == SD_OK ? "succeeded" : sd_last_error(), ws->ctx_why);
        put_status(reply, "no_device", why);
        sdi_harness_unload(&h);
        return SD_OK;
    }
    if (s != SD_OK) {
        char why[400];
        snprintf(why, sizeof why, "%s", sd_last_error());
        /* A fault inside preprocess surfaces at the next synchronisation. */
        sdi_stream_sync(ws->ctx, "after sd_agent_preprocess", name);
        *fatal = ws->ctx->broken != 0;
        put_status(reply, *fatal ? "fault" : "error", *fatal ? ws->ctx->broken_reason : why);
        if (!*fatal)
            sdi_harness_unload(&h);
        return SD_OK;
    }
    sdi_candidate_exec ex = {harness_run, &h};
    if (sdi_jget(req, "profile_only") != NULL) {
        /* Under ncu: two executions on zeroed operands and nothing else (no calibration,
         * no timing loops: every kernel launch is replayed for its counters). */
        int kk = op == SD_OP_SPMM ? k : 1;
        float *d_in = NULL, *d_out = NULL;
        s = sdi_device_malloc(ws->ctx, (void **)&d_in, (size_t)ws->a.cols * (size_t)kk * sizeof(float), "x");
        if (s == SD_OK)
            s = sdi_device_malloc(ws->ctx, (void **)&d_out, (size_t)ws->a.rows * (size_t)kk * sizeof(float), "y");
        for (int i = 0; i < 2 && s == SD_OK; i++)
            s = harness_run(&h, d_in, d_out, ws->ctx->stream);
        if (s == SD_OK)
            s = sdi_stream_sync(ws->ctx, "profiled executions", name);
        *fatal = ws->ctx->broken != 0;
        put_status(reply, s == SD_OK ? "ok" : *fatal ? "fault" : "error", s == SD_OK ? NULL : sd_last_error());
        sdi_device_free(d_in);
        sdi_device_free(d_out);
    } else {
        if (sdi_device_calibrate(ws->ctx) != SD_OK)
            sdi_error_clear(); /* only the roofline fraction needs it */
        sdi_candidate_measure(ws->ctx, &ws->a, op, k, name, &ex, reply, fatal);
    }
    /* After a sticky fault the candidate's cleanup would only meet the same error; the
     * process leaves right after the reply. */
    if (!*fatal)
        sdi_harness_unload(&h);
    return SD_OK;
}

static sd_status handle_builtin(worker_state *ws, const sdi_jvalue *req, sdi_json *reply, bool *fatal)
{
    sdi_candidate c;
    int general_b = 0;
    sd_status s = sdi_plan_record_read(sdi_jget(req, "config"), &c, &general_b);
    if (s != SD_OK || c.kind != SDI_CAND_PLAN || (c.op != SD_OP_SPMV && c.op != SD_OP_SPMM)) {
        char why[400];
        snprintf(why, sizeof why, "the built-in configuration does not read: %s",
                 s != SD_OK ? sd_last_error() : "not a SpMV or SpMM plan");
        sdi_error_clear();
        put_status(reply, "error", why);
        return SD_OK;
    }
    s = ensure_matrix(ws, sdi_jget_string(req, "matrix", NULL));
    if (s != SD_OK) {
        put_status(reply, "error", sd_last_error());
        return SD_OK;
    }
    ensure_ctx(ws);
    if (ws->ctx == NULL) {
        char why[400];
        snprintf(why, sizeof why, "validation and timing need a GPU (%s)", ws->ctx_why);
        put_status(reply, "no_device", why);
        return SD_OK;
    }
    /* The build computes the statistics the plan's family reads. */
    const sdi_task task = {.op = c.op, .k = c.op == SD_OP_SPMM ? c.k : 1, .a = &ws->a,
                           .gpu = &ws->ctx->props};
    s = sdi_candidate_build(ws->ctx, &task, &c, NULL, 0);
    sdi_json_key(reply, "compile_ms");
    sdi_json_number(reply, c.compile_ms);
    if (s != SD_OK) {
        *fatal = ws->ctx->broken != 0;
        put_status(reply, *fatal ? "fault" : s == SD_ERR_COMPILE ? "compile_error" : "error", sd_last_error());
        return SD_OK;
    }
    if (sdi_device_calibrate(ws->ctx) != SD_OK)
        sdi_error_clear();
    builtin_exec b = {ws->ctx, &c};
    sdi_candidate_exec ex = {builtin_run, &b};
    sdi_candidate_measure(ws->ctx, &ws->a, (sd_op)c.op, c.k, sdi_jget_string(req, "name", "?"), &ex, reply,
                          fatal);
    sdi_candidate_release(&c);
    return SD_OK;
}

static sd_status worker_handler(void *arg, const sdi_jvalue *req, sdi_json *reply, bool *fatal)
{
    worker_state *ws = arg;
    const char *kind = sdi_jget_string(req, "kind", "");
    if (strcmp(kind, "agent") == 0)
        return handle_agent(ws, req, reply, fatal);
    if (strcmp(kind, "builtin") == 0)
        return handle_builtin(ws, req, reply, fatal);
    if (strcmp(kind, "ping") == 0) {
        put_status(reply, "ok", NULL);
        return SD_OK;
    }
    put_status(reply, "error", "unknown request kind");
    return SD_OK;
}

static void worker_state_free(worker_state *ws)
{
    /* A broken context is left to the process exit (its teardown meets the same fault). */
    if (ws->ctx != NULL && !ws->ctx->broken)
        sd_context_destroy(ws->ctx);
    sd_csr_free(&ws->a);
}

int sdi_worker_main(int fd_in, int fd_out)
{
    worker_state ws;
    memset(&ws, 0, sizeof ws);
    int rc = sdi_worker_serve(fd_in, fd_out, worker_handler, &ws);
    worker_state_free(&ws);
    return rc;
}

int sdi_worker_once(const char *request_path, const char *reply_path)
{
    worker_state ws;
    memset(&ws, 0, sizeof ws);
    int rc = sdi_worker_serve_once(request_path, reply_path, worker_handler, &ws);
    worker_state_free(&ws);
    return rc;
}
