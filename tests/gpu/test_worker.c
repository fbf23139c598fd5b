/* tests/gpu/test_worker.c: process isolation on a GPU and the agent backend end to end.
 * A kernel writing out of bounds (illegal address: a sticky CUDA error) and a kernel
 * that never ends (killed after the timeout) each end only their worker; a correct
 * candidate afterwards still validates and is timed in a fresh worker; a wrong one
 * fails validation; a built-in candidate runs isolated; an ncu profile when ncu is
 * usable; then `--lowering agent` against the replay server: a validated agent kernel
 * cached with its provenance and transcript and adopted as the winner (loaded into this
 * process, checked against the reference), re-validated (no model call) on the next
 * search, returned by sd_compile from the cache with no search (sd_spmv runs it), and
 * the CLI's `compile --lowering agent`. About 30-60 s on an H200. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_replay.h"
#include "core/io.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "ref/ref.h"
#include "sdt.h"
#include "tune/agent_round.h"

static char g_tmp[256];
static char g_matrix[400];
static sd_csr g_a;
static sd_context *g_ctx;

static const char *FAULT_SRC =
    "__global__ void sd_agent_wild(float *y) { y[(long long)threadIdx.x << 36] = 1.f; }\n"
    "extern \"C\" int sd_agent_preprocess(const sd_agent_problem *p, void **state) { *state = 0; return 0; }\n"
    "extern \"C\" int sd_agent_compute(void *s, const float *x, float *y, cudaStream_t st) {\n"
    "  sd_agent_wild<<<1, 32, 0, st>>>(y); return (int)cudaGetLastError(); }\n"
    "extern \"C\" void sd_agent_cleanup(void *s) {}\n";
static const char *HANG_SRC =
    "__global__ void sd_agent_spin(float *y) { while (clock64() >= 0) { } y[0] = 0.f; }\n"
    "extern \"C\" int sd_agent_preprocess(const sd_agent_problem *p, void **state) { *state = 0; return 0; }\n"
    "extern \"C\" int sd_agent_compute(void *s, const float *x, float *y, cudaStream_t st) {\n"
    "  sd_agent_spin<<<1, 1, 0, st>>>(y); return (int)cudaGetLastError(); }\n"
    "extern \"C\" void sd_agent_cleanup(void *s) {}\n";
static const char *CORRECT_SRC = REPLAY_KERNEL_BODY("s");
static const char *WRONG_SRC = REPLAY_KERNEL_BODY("2.f * s + 1.f");

static void write_file(const char *path, const char *a, const char *b)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(a, f);
        if (b)
            fputs(b, f);
        fclose(f);
    }
}

/* Writes NAME.cu (the harness header first) and returns its path; builds NAME.so when so != NULL. */
static void candidate(const char *name, const char *code, char *src, char *so, size_t cap)
{
    snprintf(src, cap, "%s/%s.cu", g_tmp, name);
    write_file(src, "#include \"" SDI_AGENT_ABI_HEADER "\"\n", code);
    if (so != NULL) {
        snprintf(so, cap, "%s/%s.so", g_tmp, name);
        char log[400];
        snprintf(log, sizeof log, "%s/%s.log", g_tmp, name);
        SDT_OK(sdi_nvcc_shared(src, so, g_ctx->arch, log, 240, NULL));
    }
}

static char *req(const char *name, const char *src, const char *so, int profile)
{
    static char buf[2000];
    snprintf(buf, sizeof buf,
             "{\"name\":\"%s\",\"kind\":\"agent\",\"op\":0,\"k\":1,\"matrix\":\"%s\",%s%s%s\"so\":\"%s\",\"arch\":\"%s\"%s}",
             name, g_matrix, src ? "\"source\":\"" : "", src ? src : "", src ? "\"," : "", so, g_ctx->arch,
             profile ? ",\"profile_only\":true" : "");
    return buf;
}

static const char *status_of(const sdi_worker_reply *r)
{
    return r->outcome == SDI_WORKER_REPLIED ? sdi_jget_string(&r->reply, "status", "?") : "(no reply)";
}

static void expect_ok(sdi_worker *w, const char *name, const char *src, const char *so)
{
    sdi_worker_reply rep;
    SDT_OK(sdi_worker_call(w, req(name, src, so, 0), 120, &rep));
    SDT_CHECK(rep.outcome == SDI_WORKER_REPLIED && strcmp(status_of(&rep), "ok") == 0, "%s: %s %s %s", name,
              status_of(&rep), rep.cause, rep.outcome == SDI_WORKER_REPLIED ? sdi_jget_string(&rep.reply, "detail", "") : "");
    double us = sdi_jget_number(sdi_jget(&rep.reply, "timing"), "mean_us", 0);
    SDT_CHECK(us > 0, "%s timed: %.2f us", name, us);
    printf("  %s: %.2f us (worker start %d)\n", name, us, sdi_worker_starts(w));
    sdi_worker_reply_free(&rep);
}

static void test_faults_kill_only_the_worker(void)
{
    char hdr[400];
    snprintf(hdr, sizeof hdr, "%s/" SDI_AGENT_ABI_HEADER, g_tmp);
    write_file(hdr, SDI_AGENT_ABI, NULL);
    char src_ok[400], so_ok[400], src[400], so_fault[400], so_hang[400], so_wrong[400], so_in_worker[400];
    candidate("correct", CORRECT_SRC, src_ok, so_ok, sizeof src_ok);
    candidate("fault", FAULT_SRC, src, so_fault, sizeof src);
    candidate("hang", HANG_SRC, src, so_hang, sizeof src);
    candidate("wrong", WRONG_SRC, src, so_wrong, sizeof src);
    snprintf(so_in_worker, sizeof so_in_worker, "%s/compiled_in_worker.so", g_tmp);
    char log[400];
    snprintf(log, sizeof log, "%s/worker.log", g_tmp);
    sdi_worker *w = NULL;
    SDT_OK(sdi_worker_create(NULL, log, &w));
    /* nvcc inside the worker, then validation and timing. */
    expect_ok(w, "correct (compiled in the worker)", src_ok, so_in_worker);

    sdi_worker_reply rep;
    SDT_OK(sdi_worker_call(w, req("wrong", NULL, so_wrong, 0), 120, &rep));
    SDT_CHECK(strcmp(status_of(&rep), "invalid") == 0, "wrong answer: %s %s", status_of(&rep), rep.cause);
    sdi_worker_reply_free(&rep);

    pid_t before = sdi_worker_pid(w);
    SDT_OK(sdi_worker_call(w, req("fault", NULL, so_fault, 0), 120, &rep));
    /* Either the worker saw the sticky error and left (reply + fatal), or it died. */
    bool fault_seen = (rep.outcome == SDI_WORKER_REPLIED && strcmp(status_of(&rep), "fault") == 0) ||
                      rep.outcome == SDI_WORKER_CRASHED;
    SDT_CHECK(fault_seen, "illegal address: outcome %d status %s cause %s", rep.outcome, status_of(&rep), rep.cause);
    sdi_trial tr;
    memset(&tr, 0, sizeof tr);
    sdi_tune_trial_from_reply(&rep, &tr);
    printf("  fault: %s\n", tr.detail);
    SDT_CHECK(tr.status == SD_ERR_CUDA, "recorded as a CUDA fault: %s", sd_status_string(tr.status));
    SDT_CHECK(sdi_worker_pid(w) == -1 && kill(before, 0) != 0, "the faulting worker is gone and reaped");
    sdi_worker_reply_free(&rep);
    expect_ok(w, "correct after the fault", NULL, so_ok);

    double t0 = sdi_now();
    SDT_OK(sdi_worker_call(w, req("hang", NULL, so_hang, 0), 8, &rep));
    SDT_CHECK(rep.outcome == SDI_WORKER_TIMEOUT && strstr(rep.cause, "'hang'"), "hang: %s", rep.cause);
    SDT_CHECK(sdi_now() - t0 < 20, "killed after the timeout (%.1f s)", sdi_now() - t0);
    sdi_worker_reply_free(&rep);
    expect_ok(w, "correct after the hang", NULL, so_ok);
    SDT_CHECK(sdi_worker_starts(w) == 3, "three workers (start, after fault, after hang): %d", sdi_worker_starts(w));

    /* A built-in candidate through the worker (SPARSEDITTO_ISOLATE's mechanism). */
    sdi_spmv_stats st;
    SDT_OK(sdi_spmv_stats_compute(&g_a, &st));
    sdi_task task;
    memset(&task, 0, sizeof task);
    task.op = SD_OP_SPMV;
    task.k = 1;
    task.a = &g_a;
    task.gpu = &g_ctx->props;
    task.spmv = &st;
    sdi_candidate cand;
    memset(&cand, 0, sizeof cand);
    cand.kind = SDI_CAND_PLAN;
    cand.op = SD_OP_SPMV;
    cand.k = 1;
    SDT_OK(sdi_plan_default(&task, sdi_family_find(SD_OP_SPMV, "csr_vec"), &cand.plan));
    memset(&tr, 0, sizeof tr);
    SDT_OK(sdi_tune_run_isolated(w, &cand, g_matrix, 120, &tr));
    SDT_CHECK(tr.status == SD_OK && tr.t.mean_us > 0, "isolated built-in: %s %s", sd_status_string(tr.status),
              tr.detail);
    printf("  isolated %s: %.2f us\n", tr.config, tr.t.mean_us);
    sdi_worker_destroy(w);
    int stw;
    SDT_CHECK(waitpid(-1, &stw, WNOHANG) == -1 && errno == ECHILD, "no zombies");

    /* Profile-guided refinement: one candidate under ncu, when ncu can read counters. */
    char rp[400];
    snprintf(rp, sizeof rp, "%s/profile.json", g_tmp);
    write_file(rp, req("correct", NULL, so_ok, 1), NULL);
    sdi_profile_diag d;
    char exe[4096];
    sdi_worker_exe(exe, sizeof exe);
    sdi_ncu_profile(exe, rp, g_tmp, 180, &d);
    char text[800];
    sdi_profile_diag_text(&d, text, sizeof text);
    printf("  profile: %s\n", text);
    if (d.available)
        SDT_CHECK(d.dram_bytes_read > 0 && d.nkernels >= 1, "counters read");
}

/* ------------------------------------------------------------------ the agent, end to end */

/* y = A·x on the device through fn, checked against the double reference. */
static void check_spmv_with(sd_context *ctx, sd_status (*fn)(void *arg, const float *dx, float *dy), void *arg)
{
    float *x = malloc(sizeof(float) * (size_t)g_a.cols), *y = malloc(sizeof(float) * (size_t)g_a.rows);
    double *want = malloc(sizeof(double) * (size_t)g_a.rows), *absum = malloc(sizeof(double) * (size_t)g_a.rows);
    int64_t *count = malloc(sizeof(int64_t) * (size_t)g_a.rows);
    float *dx = NULL, *dy = NULL;
    SDT_CHECK(x && y && want && absum && count, "host memory");
    for (int32_t j = 0; j < g_a.cols; j++)
        x[j] = (float)((j * 7919 % 23) - 11) / 16.0f;
    SDT_CHECK(cudaMalloc((void **)&dx, sizeof(float) * (size_t)g_a.cols) == cudaSuccess &&
                  cudaMalloc((void **)&dy, sizeof(float) * (size_t)g_a.rows) == cudaSuccess,
              "device memory");
    cudaMemcpy(dx, x, sizeof(float) * (size_t)g_a.cols, cudaMemcpyHostToDevice);
    cudaMemset(dy, 0xff, sizeof(float) * (size_t)g_a.rows);
    SDT_OK(fn(arg, dx, dy));
    SDT_CHECK(cudaDeviceSynchronize() == cudaSuccess, "run");
    cudaMemcpy(y, dy, sizeof(float) * (size_t)g_a.rows, cudaMemcpyDeviceToHost);
    SDT_OK(sdi_ref_spmv(&g_a, x, want, count, absum));
    sdi_validation val;
    SDT_OK(sdi_validate_dense(y, want, count, absum, g_a.rows, 1, &val));
    (void)ctx;
    cudaFree(dx);
    cudaFree(dy);
    free(x);
    free(y);
    free(want);
    free(absum);
    free(count);
}

typedef struct {
    sd_context *ctx;
    sdi_candidate *c;
    sd_kernel *kern;
} run_target;

static sd_status run_candidate(void *arg, const float *dx, float *dy)
{
    run_target *t = arg;
    return sdi_exe_run(t->ctx, &t->c->exe, dx, dy, t->ctx->stream);
}

static sd_status run_kernel(void *arg, const float *dx, float *dy)
{
    run_target *t = arg;
    return sd_spmv(t->kern, dx, dy, NULL);
}

static void check_in_process(sd_context *ctx, sdi_candidate *c)
{
    run_target t = {ctx, c, NULL};
    check_spmv_with(ctx, run_candidate, &t);
}

static void check_public(sd_context *ctx, sd_kernel *kern)
{
    run_target t = {ctx, NULL, kern};
    check_spmv_with(ctx, run_kernel, &t);
}

static void test_agent_end_to_end(void)
{
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", g_tmp);
    replay_server srv;
    memset(&srv, 0, sizeof srv);
    srv.answers[0] = REPLAY_CORRECT; /* the direct round */
    srv.answers[1] = REPLAY_CORRECT; /* the CLI run */
    srv.nanswers = 2;
    srv.usage_total = 500;
    SDT_CHECK(replay_start(&srv) == 0, "server");
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", srv.port);
    setenv("SPARSEDITTO_AGENT_URL", url, 1);
    setenv("SPARSEDITTO_AGENT_MODEL", "replay-model", 1);
    setenv("SPARSEDITTO_AGENT_KEY", "test-key", 1);
    setenv("SPARSEDITTO_AGENT_BUDGET", "1", 1);
    setenv("SPARSEDITTO_LOWERING", "agent", 1);
    setenv("SPARSEDITTO_CACHE", cache, 1);
    sdi_config_reload();

    /* The round with no built-in competitor (nothing else validated): the agent kernel
     * wins when it validates, and is cached. */
    sd_context_options co = {0, cache, 0};
    sd_context *ctx = NULL;
    SDT_OK(sd_context_create(&co, &ctx));
    sdi_tune_result *r = calloc(1, sizeof *r);
    r->op = SD_OP_SPMV;
    r->k = 1;
    r->ours_trial = -1;
    r->vendor_best = -1;
    SDT_OK(sd_analyze(&g_a, SD_OP_SPMV, &r->features));
    SDT_OK(sdi_rank(&r->features, SD_OP_SPMV, 1, &r->ranking));
    sdi_tune_options opt = {0};
    SDT_OK(sdi_tune_agent(ctx, &g_a, &opt, r));
    printf("  %s\n", r->diagnosis);
    SDT_CHECK(r->ntrials == 1 && r->trials[0].status == SD_OK, "the agent kernel validated: %s",
              r->ntrials ? r->trials[0].detail : "no trial");
    /* The winner is adopted: loaded into this process and runnable as the result's best. */
    SDT_CHECK(r->winner_is_agent && r->best.kind == SDI_CAND_AGENT && r->best.built, "adopted: %s", r->diagnosis);
    if (r->best.built)
        check_in_process(ctx, &r->best);
    sdi_cache *c = NULL;
    SDT_OK(sdi_cache_open(cache, &c));
    sdi_cache_key key;
    sdi_tune_agent_key(ctx, &g_a, SD_OP_SPMV, 1, &opt, &key);
    sdi_cache_entry e;
    bool hit = false;
    SDT_OK(sdi_cache_lookup(c, &key, &e, &hit));
    SDT_CHECK(hit, "cached");
    if (hit) {
        sdi_jvalue v;
        SDT_OK(sdi_json_parse(e.record_json, -1, &v));
        SDT_CHECK(strcmp(sdi_jget_string(&v, "backend", ""), "agent") == 0 &&
                      strcmp(sdi_jget_string(&v, "model", ""), "replay-model") == 0,
                  "provenance: %s", e.record_json);
        const char *tp = sdi_jget_string(&v, "transcript", "");
        SDT_CHECK(tp[0] && access(tp, R_OK) == 0, "transcript beside the entry: '%s'", tp);
        SDT_CHECK(e.nblobs == 2, "source and .so stored");
        sdi_jvalue_free(&v);
    }
    sdi_cache_entry_free(&e);
    sdi_cache_close(c);
    /* Again: the cached kernel is re-validated in a worker, the model is not called. */
    memset(r->trials, 0, sizeof r->trials);
    r->ntrials = 0;
    r->diagnosis[0] = '\0';
    SDT_OK(sdi_tune_agent(ctx, &g_a, &opt, r));
    printf("  %s\n", r->diagnosis);
    SDT_CHECK(replay_requests(&srv) == 1, "no model call on a cache hit: %d", replay_requests(&srv));
    SDT_CHECK(r->ntrials == 1 && r->trials[0].status == SD_OK && strstr(r->trials[0].config, "cached"),
              "cached kernel re-validated");
    SDT_CHECK(r->winner_is_agent && r->best.kind == SDI_CAND_AGENT && r->best.built, "cached kernel adopted");
    sdi_tune_result_free(r);
    free(r);

    /* The public path: sd_compile finds the agent entry (no built-in entry exists for this
     * task with the agent round), re-checks it in a worker and returns it — no search, no
     * model call; sd_spmv runs the agent's code. */
    sd_compile_options o = sd_compile_options_default();
    o.allow_vendor = 0; /* the entry above was made with allow_vendor off */
    sd_kernel *kern = NULL;
    SDT_OK(sd_compile(ctx, &g_a, SD_OP_SPMV, 1, &o, &kern));
    static char desc[1 << 16];
    if (kern != NULL)
        SDT_OK(sd_kernel_describe(kern, desc, sizeof desc));
    printf("  %.300s\n", desc);
    SDT_CHECK(strstr(desc, "\"family\":\"agent\"") && strstr(desc, "\"from_cache\":true"), "sd_compile returns the "
              "cached agent kernel: %.300s", desc);
    SDT_CHECK(replay_requests(&srv) == 1, "no model call from sd_compile: %d", replay_requests(&srv));
    if (kern != NULL)
        check_public(ctx, kern);
    sd_kernel_destroy(kern);
    sd_context_destroy(ctx);

    /* The command: a built-in search, then the agent round (it may or may not beat the
     * built-in winner; either way the run succeeds and reports the agent). */
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "'%s' compile --gen 'uniform:rows=20000,deg=8' --op spmv --budget 3 --lowering agent "
             "--agent-budget 1 2>&1",
             SD_CLI_PATH);
    unsetenv("SPARSEDITTO_LOWERING"); /* the CLI sets it from --lowering */
    sdi_config_reload();
    FILE *p = popen(cmd, "r");
    char out[8192] = "";
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    int rc = p ? pclose(p) : -1;
    printf("%s", out);
    SDT_CHECK(rc == 0, "compile --lowering agent exit %d", rc);
    SDT_CHECK(strstr(out, "agent (replay-model, 1 call(s)") != NULL, "the agent round is reported");
    SDT_CHECK(replay_requests(&srv) == 2, "the CLI called the model once: %d", replay_requests(&srv));
    replay_stop(&srv);
    unsetenv("SPARSEDITTO_AGENT_BUDGET");
    sdi_config_reload();
}

int main(void)
{
    sdt_init("test_worker");
    sd_status s = sd_context_create(NULL, &g_ctx);
    if (s == SD_ERR_NO_DEVICE)
        return sdt_skip(sd_last_error());
    if (s != SD_OK) {
        printf("context: %s\n", sd_last_error());
        return 1;
    }
    if (access(sdi_config_get()->nvcc, X_OK) != 0 && strchr(sdi_config_get()->nvcc, '/') != NULL)
        return sdt_skip("nvcc not found (SPARSEDITTO_NVCC)");
    setenv("SPARSEDITTO_WORKER", SD_CLI_PATH, 1);
    sdi_config_reload();
    snprintf(g_tmp, sizeof g_tmp, "%s/sd-test-worker-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(g_tmp) == NULL)
        return sdt_skip("cannot create a temporary directory");
    SDT_OK(sdi_gen("uniform:rows=20000,deg=8", 7, &g_a));
    snprintf(g_matrix, sizeof g_matrix, "%s/a.sdm", g_tmp);
    SDT_OK(sdi_sdm_write(g_matrix, &g_a));
    SDT_RUN(test_faults_kill_only_the_worker);
    SDT_RUN(test_agent_end_to_end);
    sd_csr_free(&g_a);
    sd_context_destroy(g_ctx);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        printf("  (could not remove %s)\n", g_tmp);
    return sdt_finish();
}
