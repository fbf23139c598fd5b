/* tests/cpu/test_agent.c: the agent lowering backend and the worker process without a
 * GPU: request/response JSON and escaping, code extraction, prompts (plan, features,
 * reasons, harness), configuration messages, the chat client against a replay server
 * (answers, a hang → client timeout, call and token budgets, transcript without the
 * key), the worker surviving crashing and hanging host code (SIGABRT, SIGSEGV, timeout;
 * a fresh worker each time, no zombies), and a whole agent round: a correct kernel, one
 * that does not compile, a wrong one, a reply without code and one that never comes —
 * each handled, fed back to the model and written to the transcript beside the cache
 * entry. With a GPU present the worker validates instead of reporting no device; the
 * checks accept both. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_replay.h"
#include "core/io.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "lower/agent/agent.h"
#include "ref/ref.h"
#include "sdt.h"
#include "tune/agent_round.h"

static char g_tmp[256];

static void set_env_common(int port)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    setenv("SPARSEDITTO_AGENT_URL", url, 1);
    setenv("SPARSEDITTO_AGENT_MODEL", "replay-model", 1);
    setenv("SPARSEDITTO_AGENT_KEY", "test-key-123", 1);
    setenv("SPARSEDITTO_AGENT_TIMEOUT_S", "1.5", 1);
    setenv("SPARSEDITTO_WORKER", SD_CLI_PATH, 1);
    sdi_config_reload();
}

static bool have_nvcc(void) { return access(sdi_config_get()->nvcc, X_OK) == 0; }

/* ------------------------------------------------------------------ protocol pieces */

static void test_request_json_escapes(void)
{
    sdi_agent_msg m[2] = {{"system", "line 1\nline \"2\" \\ tab\t"}, {"user", "plan {\"a\": [1, 2]} \xce\xa0"}};
    char *body = NULL;
    SDT_OK(sdi_agent_request_json("m-1", m, 2, &body));
    sdi_jvalue v;
    SDT_OK(sdi_json_parse(body, -1, &v));
    SDT_CHECK(strcmp(sdi_jget_string(&v, "model", ""), "m-1") == 0, "model");
    const sdi_jvalue *msgs = sdi_jget(&v, "messages");
    SDT_CHECK(msgs && msgs->type == SDI_JARRAY && msgs->n == 2, "two messages");
    if (msgs && msgs->n == 2) {
        SDT_CHECK(strcmp(sdi_jget_string(&msgs->items[0], "content", ""), m[0].content) == 0, "escapes round-trip");
        SDT_CHECK(strcmp(sdi_jget_string(&msgs->items[1], "content", ""), m[1].content) == 0, "UTF-8 round-trip");
        SDT_CHECK(strcmp(sdi_jget_string(&msgs->items[1], "role", ""), "user") == 0, "role");
    }
    sdi_jvalue_free(&v);
    sdi_free(body);
}

static void test_parse_response(void)
{
    char *c = NULL;
    long pt, ct, tt;
    SDT_OK(sdi_agent_parse_response("{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\\n```x```\"}}],"
                                    "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10}}",
                                    &c, &pt, &ct, &tt));
    SDT_CHECK(c && strcmp(c, "hi\n```x```") == 0, "content '%s'", c ? c : "(null)");
    SDT_CHECK(pt == 7 && ct == 3 && tt == 10, "usage %ld %ld %ld", pt, ct, tt);
    sdi_free(c);
    SDT_STATUS(sdi_agent_parse_response("{\"error\":{\"message\":\"rate limited\"}}", &c, &pt, &ct, &tt), SD_ERR_PARSE);
    SDT_CHECK(strstr(sd_last_error(), "rate limited") != NULL, "error message quoted: %s", sd_last_error());
    SDT_STATUS(sdi_agent_parse_response("not json", &c, &pt, &ct, &tt), SD_ERR_PARSE);
    SDT_CHECK(c == NULL, "no content on failure");
}

static void test_extract_code(void)
{
    char *code = NULL;
    const char *two = "text\n```cpp\nint helper;\nint a_much_longer_block_without_the_entry_point;\n```\n"
                      "more\n```cuda\nextern \"C\" int sd_agent_compute();\n```\nend";
    SDT_OK(sdi_agent_extract_code(two, &code));
    SDT_CHECK(code && strcmp(code, "extern \"C\" int sd_agent_compute();\n") == 0, "block with the entry: '%s'",
              code ? code : "(null)");
    sdi_free(code);
    SDT_OK(sdi_agent_extract_code("```\nshort\n```\n```c\nlonger block\n```", &code));
    SDT_CHECK(code && strcmp(code, "longer block\n") == 0, "longest without entry: '%s'", code ? code : "");
    sdi_free(code);
    SDT_OK(sdi_agent_extract_code("cut off:\n```cuda\nsd_agent_compute partial", &code));
    SDT_CHECK(code && strstr(code, "partial") != NULL, "unterminated last block");
    sdi_free(code);
    code = NULL;
    SDT_STATUS(sdi_agent_extract_code(REPLAY_NO_CODE, &code), SD_ERR_PARSE);
    SDT_CHECK(code == NULL, "no code");
}

static void test_prompts(void)
{
    sd_csr a;
    memset(&a, 0, sizeof a);
    SDT_OK(sdi_gen("uniform:rows=500,deg=6", 3, &a));
    sd_features f;
    SDT_OK(sd_analyze(&a, SD_OP_SPMV, &f));
    sdi_ranking rk;
    SDT_OK(sdi_rank(&f, SD_OP_SPMV, 1, &rk));
    sdi_gpu_props gpu;
    SDT_OK(sdi_gpu_profile("H200", &gpu));
    sdi_agent_task t = {SD_OP_SPMV, 1, a.rows, a.cols, a.nnz, "{\"family\":\"spmv.csr_vec\",\"marker\":42}", &f, &rk,
                        &gpu, "sm_90", 12.5, 20.25, "csr_alg2"};
    char *p = NULL;
    SDT_OK(sdi_agent_task_prompt(&t, &p));
    if (p != NULL) {
        SDT_CHECK(strstr(p, "\"marker\":42") != NULL, "the plan JSON is in the prompt");
        SDT_CHECK(strstr(p, "row_cv=") != NULL && strstr(p, "rho_bsr16=") != NULL, "features");
        SDT_CHECK(strstr(p, "u_total") == NULL, "SpGEMM features left out for SpMV");
        SDT_CHECK(rk.n == 0 || strstr(p, rk.e[0].label) != NULL, "ranking label");
        SDT_CHECK(rk.n == 0 || rk.e[0].nreasons == 0 || strstr(p, rk.e[0].reasons[0].why) != NULL, "a reason");
        SDT_CHECK(strstr(p, "sd_agent_preprocess") && strstr(p, "sd_agent_cleanup"), "harness interface");
        SDT_CHECK(strstr(p, "12.50 us") && strstr(p, "csr_alg2 20.25 us"), "times to beat");
        SDT_CHECK(strstr(p, "-arch=sm_90") != NULL, "compile command");
    }
    sdi_free(p);
    sdi_agent_feedback fb = {2, "compile_error", "nvcc failed", "cand.cu(3): error: expected an expression", 0, 12.5,
                             NULL};
    SDT_OK(sdi_agent_feedback_prompt(&fb, &p));
    SDT_CHECK(p && strstr(p, "attempt 2") && strstr(p, "expected an expression"), "feedback quotes the log");
    sdi_free(p);
    sdi_agent_feedback ok = {3, "ok", NULL, NULL, 10.0, 12.5, "ncu: L2 hit 40 %"};
    SDT_OK(sdi_agent_feedback_prompt(&ok, &p));
    SDT_CHECK(p && strstr(p, "10.00 us") && strstr(p, "faster") && strstr(p, "ncu: L2 hit"), "timing + profile");
    sdi_free(p);
    sd_csr_free(&a);
}

static void test_config_messages(void)
{
    unsetenv("SPARSEDITTO_AGENT_URL");
    sdi_config_reload();
    sdi_agent_config c;
    if (!sdi_agent_built()) { /* without libcurl no configuration is accepted: the message says why */
        SDT_STATUS(sdi_agent_config_from_env(&c), SD_ERR_UNSUPPORTED);
        SDT_CHECK(strstr(sd_last_error(), "without libcurl") != NULL, "names libcurl: %s", sd_last_error());
        return;
    }
    SDT_STATUS(sdi_agent_config_from_env(&c), SD_ERR_UNSUPPORTED);
    SDT_CHECK(strstr(sd_last_error(), "SPARSEDITTO_AGENT_URL") != NULL, "names the variable: %s", sd_last_error());
    setenv("SPARSEDITTO_AGENT_URL", "https://api.example.com/v1/", 1);
    setenv("SPARSEDITTO_AGENT_MODEL", "m", 1);
    unsetenv("SPARSEDITTO_AGENT_KEY");
    unsetenv("OPENAI_API_KEY");
    sdi_config_reload();
    SDT_STATUS(sdi_agent_config_from_env(&c), SD_ERR_UNSUPPORTED);
    SDT_CHECK(strstr(sd_last_error(), "SPARSEDITTO_AGENT_KEY") != NULL, "remote endpoint needs a key: %s",
              sd_last_error());
    setenv("SPARSEDITTO_AGENT_KEY", "k", 1);
    setenv("SPARSEDITTO_AGENT_BUDGET", "7", 1);
    sdi_config_reload();
    SDT_OK(sdi_agent_config_from_env(&c));
    SDT_CHECK(strcmp(c.url, "https://api.example.com/v1/chat/completions") == 0, "url %s", c.url);
    SDT_CHECK(c.max_calls == 7, "budget from the environment: %d", c.max_calls);
    unsetenv("SPARSEDITTO_AGENT_BUDGET");
    sdi_config_reload();
}

/* ------------------------------------------------------------------ the client */

static void test_client_replay(void)
{
    replay_server srv;
    memset(&srv, 0, sizeof srv);
    srv.answers[0] = "first";
    srv.answers[1] = REPLAY_HANG;
    srv.answers[2] = "third";
    srv.nanswers = 3;
    srv.usage_total = 40;
    SDT_CHECK(replay_start(&srv) == 0, "server");
    set_env_common(srv.port);
    setenv("SPARSEDITTO_AGENT_BUDGET", "3", 1);
    sdi_config_reload();
    sdi_agent_config cfg;
    SDT_OK(sdi_agent_config_from_env(&cfg));
    unsetenv("SPARSEDITTO_AGENT_BUDGET");
    sdi_config_reload();
    sdi_agent_conversation s;
    SDT_OK(sdi_agent_conversation_init(&s, &cfg));
    SDT_OK(sdi_agent_add(&s, "system", "be brief"));
    SDT_OK(sdi_agent_add(&s, "user", "say \"hi\"\n"));
    const char *reply = NULL;
    SDT_OK(sdi_agent_chat(&s, &reply));
    SDT_CHECK(reply && strcmp(reply, "first") == 0, "first reply");
    SDT_CHECK(strcmp(srv.auth[0], "Authorization: Bearer test-key-123") == 0, "auth header '%s'", srv.auth[0]);
    sdi_jvalue v;
    if (srv.bodies[0] != NULL && sdi_json_parse(srv.bodies[0], -1, &v) == SD_OK) {
        const sdi_jvalue *m = sdi_jget(&v, "messages");
        SDT_CHECK(m && m->n == 2 && strcmp(sdi_jget_string(&m->items[1], "content", ""), "say \"hi\"\n") == 0,
                  "request messages");
        SDT_CHECK(strcmp(sdi_jget_string(&v, "model", ""), "replay-model") == 0, "request model");
        sdi_jvalue_free(&v);
    } else {
        SDT_CHECK(0, "request body is JSON");
    }
    /* The hang: the client's timeout fires, the call is counted, the conversation stays. */
    double t0 = sdi_now();
    SDT_STATUS(sdi_agent_chat(&s, &reply), SD_ERR_IO);
    SDT_CHECK(strstr(sd_last_error(), "request timeout") != NULL, "timeout named: %s", sd_last_error());
    SDT_CHECK(sdi_now() - t0 < 10, "timed out promptly (%.1f s)", sdi_now() - t0);
    SDT_CHECK(s.nmsgs == 3 && s.calls == 2, "no reply appended (%d messages, %d calls)", s.nmsgs, s.calls);
    SDT_OK(sdi_agent_chat(&s, &reply));
    SDT_CHECK(reply && strcmp(reply, "third") == 0, "third reply");
    SDT_CHECK(srv.bodies[2] && strstr(srv.bodies[2], "\"first\"") != NULL, "history sent again");
    char why[128];
    SDT_CHECK(sdi_agent_budget_spent(&s, why, sizeof why) && strstr(why, "call budget"), "call budget: %s", why);
    SDT_CHECK(s.total_tokens == 80, "tokens from usage: %ld", s.total_tokens);
    char *tr = NULL;
    SDT_OK(sdi_agent_transcript(&s, "test", &tr));
    SDT_CHECK(tr && strstr(tr, "test-key-123") == NULL, "the key never reaches the transcript");
    SDT_CHECK(tr && strstr(tr, "request timeout") && strstr(tr, "\"third\""), "transcript has calls and replies");
    if (tr != NULL) {
        SDT_OK(sdi_json_parse(tr, -1, &v));
        sdi_jvalue_free(&v);
    }
    sdi_free(tr);
    sdi_agent_conversation_free(&s);
    /* The token budget: one answer of 40 tokens against a budget of 30. */
    setenv("SPARSEDITTO_AGENT_TOKENS", "30", 1);
    sdi_config_reload();
    SDT_OK(sdi_agent_config_from_env(&cfg));
    unsetenv("SPARSEDITTO_AGENT_TOKENS");
    sdi_config_reload();
    SDT_OK(sdi_agent_conversation_init(&s, &cfg));
    SDT_OK(sdi_agent_add(&s, "user", "x"));
    SDT_CHECK(!sdi_agent_budget_spent(&s, why, sizeof why), "budget left before the call");
    SDT_OK(sdi_agent_chat(&s, &reply));
    SDT_CHECK(sdi_agent_budget_spent(&s, why, sizeof why) && strstr(why, "token budget"), "token budget: %s", why);
    sdi_agent_conversation_free(&s);
    replay_stop(&srv);
}

/* ------------------------------------------------------------------ the worker */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int build_so_from(const char *name, const char *text, char *so, size_t cap)
{
    char src[400], log[400];
    snprintf(src, sizeof src, "%s/%s.c", g_tmp, name);
    snprintf(so, cap, "%s/%s.so", g_tmp, name);
    snprintf(log, sizeof log, "%s/%s.log", g_tmp, name);
    write_file(src, text);
    char *argv[] = {(char *)"cc", (char *)"-shared", (char *)"-fPIC", (char *)"-O1", (char *)"-o", so, src, NULL};
    int code = -1;
    return sdi_subprocess_run(argv, log, 60, &code) == SD_OK ? code : -1;
}

/* A candidate .so from plain C (host code only: these crash before touching CUDA). */
static int build_host_so(const char *name, const char *body, char *so, size_t cap)
{
    char text[2048];
    snprintf(text, sizeof text,
             "#include <stdlib.h>\n#include <signal.h>\n"
             "int sd_agent_preprocess(const void *p, void **state) { (void)p; (void)state; %s return 0; }\n"
             "int sd_agent_compute(void *s, const float *x, float *y, void *st) { (void)s; (void)x; (void)y; (void)st; return 0; }\n"
             "void sd_agent_cleanup(void *s) { (void)s; }\n",
             body);
    return build_so_from(name, text, so, cap);
}

/* A host-only harness .so that really computes y = A·x (or C = A·B) on host pointers:
 * the in-process agent implementation's plumbing (load, problem mirror, compute,
 * value refresh, cleanup) is exercised without a GPU. */
static const char *const HOST_SPMM_SO =
    "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "typedef struct { int op, k; int32_t rows, cols; int64_t nnz; const int64_t *rp; const int32_t *ci; const float *v; } prob;\n"
    "typedef struct { int k; int32_t rows; int64_t *rp; int32_t *ci; float *v; } st;\n"
    "int sd_agent_preprocess(const void *pp, void **out) {\n"
    "  const prob *p = pp; st *s = calloc(1, sizeof *s); if (!s) return 2;\n"
    "  s->k = p->k; s->rows = p->rows;\n"
    "  s->rp = malloc(sizeof(int64_t) * (p->rows + 1)); s->ci = malloc(4 * (p->nnz + 1)); s->v = malloc(4 * (p->nnz + 1));\n"
    "  memcpy(s->rp, p->rp, sizeof(int64_t) * (p->rows + 1)); memcpy(s->ci, p->ci, 4 * p->nnz); memcpy(s->v, p->v, 4 * p->nnz);\n"
    "  *out = s; return 0; }\n"
    "int sd_agent_compute(void *ss, const float *x, float *y, void *stream) { (void)stream; st *s = ss;\n"
    "  for (int32_t i = 0; i < s->rows; i++) for (int c = 0; c < s->k; c++) { double acc = 0;\n"
    "    for (int64_t q = s->rp[i]; q < s->rp[i + 1]; q++) acc += (double)s->v[q] * x[(int64_t)s->ci[q] * s->k + c];\n"
    "    y[(int64_t)i * s->k + c] = (float)acc; }\n"
    "  return 0; }\n"
    "void sd_agent_cleanup(void *ss) { st *s = ss; if (!s) return; free(s->rp); free(s->ci); free(s->v); free(s); }\n";

static void test_agent_impl_in_process(void)
{
    char so[400];
    SDT_CHECK(build_so_from("host_spmm", HOST_SPMM_SO, so, sizeof so) == 0, "cc host_spmm");
    sd_csr a;
    memset(&a, 0, sizeof a);
    SDT_OK(sdi_gen("powerlaw:rows=400,deg=6", 11, &a));
    const int k = 3;
    float *x = calloc((size_t)a.cols * k, sizeof *x), *y = calloc((size_t)a.rows * k, sizeof *y);
    double *want = calloc((size_t)a.rows * k, sizeof *want);
    int64_t *count = calloc((size_t)a.rows, sizeof *count);
    double *absum = calloc((size_t)a.rows * k, sizeof *absum);
    SDT_CHECK(x && y && want && count && absum, "host memory");
    for (int64_t i = 0; i < (int64_t)a.cols * k; i++)
        x[i] = (float)((i * 37 % 19) - 9) / 8.0f;
    long long live0 = sdi_alloc_live_bytes();
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: SpMM K = 3; pass 1: SpMV. */
        int kk = pass == 0 ? k : 1;
        sdi_candidate im;
        memset(&im, 0, sizeof im);
        im.kind = SDI_CAND_AGENT;
        im.op = pass == 0 ? SD_OP_SPMM : SD_OP_SPMV;
        im.k = kk;
        snprintf(im.agent_model, sizeof im.agent_model, "replay-model");
        /* A copy the implementation may unlink once mapped. */
        snprintf(im.agent_so, sizeof im.agent_so, "%s/owned_%d.so", g_tmp, pass);
        char cmd[2200];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", so, im.agent_so);
        SDT_CHECK(system(cmd) == 0, "copy the .so");
        im.agent_unlink = 1;
        const sdi_task task = {.op = im.op, .k = kk, .a = &a};
        SDT_OK(sdi_candidate_build(NULL, &task, &im, NULL, 0));
        SDT_CHECK(access(im.agent_so, F_OK) != 0, "the mapped .so is unlinked");
        char buf[SDI_PLAN_TEXT];
        sdi_candidate_family(&im, buf, sizeof buf);
        SDT_CHECK(strcmp(buf, "agent") == 0, "family %s", buf);
        sdi_candidate_describe(&im, buf, sizeof buf);
        SDT_CHECK(strstr(buf, "replay-model") != NULL, "describe %s", buf);
        SDT_CHECK(sdi_candidate_uses_atomics(&im), "foreign code is never called reproducible");
        SDT_OK(sdi_exe_run(NULL, &im.exe, x, y, NULL));
        if (kk == 1)
            SDT_OK(sdi_ref_spmv(&a, x, want, count, absum));
        else
            SDT_OK(sdi_ref_spmm(&a, x, kk, want, count, absum));
        sdi_validation val;
        SDT_OK(sdi_validate_dense(y, want, count, absum, a.rows, kk, &val));
        /* New values, same pattern: the harness rebuilds its representation. */
        for (int64_t q = 0; q < a.nnz; q++)
            a.vals[q] *= -2.0f;
        SDT_OK(sdi_exe_update_values(NULL, &im.exe, &a, NULL));
        SDT_OK(sdi_exe_run(NULL, &im.exe, x, y, NULL));
        if (kk == 1)
            SDT_OK(sdi_ref_spmv(&a, x, want, count, absum));
        else
            SDT_OK(sdi_ref_spmm(&a, x, kk, want, count, absum));
        SDT_OK(sdi_validate_dense(y, want, count, absum, a.rows, kk, &val));
        sdi_candidate_release(&im);
        SDT_CHECK(!im.built && im.exe.agent.dl == NULL, "released");
    }
    SDT_CHECK(sdi_alloc_live_bytes() == live0, "nothing of ours left allocated");
    /* A .so without the entry points and one whose preprocess fails: statuses, no leak. */
    char bad[400];
    SDT_CHECK(build_so_from("no_entry", "int unrelated(void) { return 1; }\n", bad, sizeof bad) == 0, "cc no_entry");
    sdi_candidate im;
    memset(&im, 0, sizeof im);
    im.kind = SDI_CAND_AGENT;
    im.op = SD_OP_SPMV;
    im.k = 1;
    snprintf(im.agent_so, sizeof im.agent_so, "%s", bad);
    const sdi_task task = {.op = SD_OP_SPMV, .k = 1, .a = &a};
    SDT_CHECK(sdi_candidate_build(NULL, &task, &im, NULL, 0) == SD_ERR_COMPILE && strstr(sd_last_error(), "sd_agent_"),
              "missing entry point: %s", sd_last_error());
    SDT_CHECK(!im.built && access(bad, F_OK) == 0, "not built; a file not owned is kept");
    char failing[400];
    SDT_CHECK(build_host_so("prep_fails", "return 7;", failing, sizeof failing) == 0, "cc prep_fails");
    snprintf(im.agent_so, sizeof im.agent_so, "%s", failing);
    SDT_CHECK(sdi_candidate_build(NULL, &task, &im, NULL, 0) == SD_ERR_CUDA && strstr(sd_last_error(), "returned 7"),
              "preprocess failure: %s", sd_last_error());
    SDT_CHECK(!im.built && im.exe.agent.dl == NULL, "nothing kept after a failed build");
    im.op = SD_OP_SPGEMM;
    SDT_CHECK(sdi_candidate_build(NULL, &task, &im, NULL, 0) == SD_ERR_UNSUPPORTED, "SpGEMM is not an agent operator");
    sdi_error_clear();
    free(x);
    free(y);
    free(want);
    free(count);
    free(absum);
    sd_csr_free(&a);
}

static char *agent_req(const char *name, const char *so, const char *matrix)
{
    static char buf[1500];
    snprintf(buf, sizeof buf, "{\"name\":\"%s\",\"kind\":\"agent\",\"op\":0,\"k\":1,\"matrix\":\"%s\",\"so\":\"%s\"}", name,
             matrix, so);
    return buf;
}

static bool no_unreaped_children(void)
{
    int st;
    return waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD;
}

static void test_worker_survives_crashes(void)
{
    setenv("SPARSEDITTO_WORKER", SD_CLI_PATH, 1);
    sdi_config_reload();
    sd_csr a;
    memset(&a, 0, sizeof a);
    SDT_OK(sdi_gen("uniform:rows=300,deg=5", 5, &a));
    char matrix[300];
    snprintf(matrix, sizeof matrix, "%s/w.sdm", g_tmp);
    SDT_OK(sdi_sdm_write(matrix, &a));
    char so_abort[400], so_segv[400], so_hang[400], log[400];
    SDT_CHECK(build_host_so("crash_abort", "abort();", so_abort, sizeof so_abort) == 0, "cc abort");
    SDT_CHECK(build_host_so("crash_segv", "raise(SIGSEGV);", so_segv, sizeof so_segv) == 0, "cc segv");
    SDT_CHECK(build_host_so("hang", "volatile unsigned long n = 0; for (;;) n++;", so_hang, sizeof so_hang) == 0,
              "cc hang");
    snprintf(log, sizeof log, "%s/worker.log", g_tmp);
    sdi_worker *w = NULL;
    SDT_OK(sdi_worker_create(NULL, log, &w));
    sdi_worker_reply rep;
    SDT_OK(sdi_worker_call(w, "{\"name\":\"ping\",\"kind\":\"ping\"}", 30, &rep));
    SDT_CHECK(rep.outcome == SDI_WORKER_REPLIED && strcmp(sdi_jget_string(&rep.reply, "status", ""), "ok") == 0,
              "ping: %s", rep.cause);
    pid_t first = sdi_worker_pid(w);
    sdi_worker_reply_free(&rep);

    SDT_OK(sdi_worker_call(w, agent_req("crash-abort", so_abort, matrix), 30, &rep));
    SDT_CHECK(rep.outcome == SDI_WORKER_CRASHED && rep.term_signal == SIGABRT, "abort: outcome %d signal %d (%s)",
              rep.outcome, rep.term_signal, rep.cause);
    SDT_CHECK(strstr(rep.cause, "crash-abort") != NULL && strstr(rep.cause, "signal 6") != NULL, "cause: %s",
              rep.cause);
    SDT_CHECK(sdi_worker_pid(w) == -1 && kill(first, 0) != 0, "the dead worker is reaped");
    sdi_worker_reply_free(&rep);

    SDT_OK(sdi_worker_call(w, agent_req("crash-segv", so_segv, matrix), 30, &rep));
    /* Under AddressSanitizer the worker's SEGV handler reports and exits(1) instead. */
    SDT_CHECK(rep.outcome == SDI_WORKER_CRASHED && (rep.term_signal == SIGSEGV || rep.exit_code != 0), "segv: %s",
              rep.cause);
    SDT_CHECK(strstr(rep.cause, "crash-segv") != NULL, "cause names the candidate: %s", rep.cause);
    sdi_worker_reply_free(&rep);

    double t0 = sdi_now();
    SDT_OK(sdi_worker_call(w, agent_req("hang", so_hang, matrix), 2.0, &rep));
    SDT_CHECK(rep.outcome == SDI_WORKER_TIMEOUT && strstr(rep.cause, "hang"), "hang: %s", rep.cause);
    SDT_CHECK(sdi_now() - t0 < 8, "killed after the timeout (%.1f s)", sdi_now() - t0);
    sdi_worker_reply_free(&rep);

    /* The worker runs untrusted code without the model's API key in its environment. */
    char so_env[400];
    SDT_CHECK(build_host_so("envcheck", "if (getenv(\"SPARSEDITTO_AGENT_KEY\") || getenv(\"OPENAI_API_KEY\")) abort();",
                            so_env, sizeof so_env) == 0, "cc envcheck");
    setenv("SPARSEDITTO_AGENT_KEY", "secret-key", 1);
    sdi_config_reload();
    SDT_OK(sdi_worker_call(w, agent_req("envcheck", so_env, matrix), 60, &rep));
    SDT_CHECK(rep.outcome == SDI_WORKER_REPLIED, "the key is not in the worker's environment: %s", rep.cause);
    sdi_worker_reply_free(&rep);
    unsetenv("SPARSEDITTO_AGENT_KEY");
    sdi_config_reload();

    /* A fresh worker after each fault, and the tuner's side goes on. */
    SDT_OK(sdi_worker_call(w, "{\"name\":\"ping2\",\"kind\":\"ping\"}", 30, &rep));
    SDT_CHECK(rep.outcome == SDI_WORKER_REPLIED, "ping after faults: %s", rep.cause);
    SDT_CHECK(sdi_worker_starts(w) == 4, "one start per fault + the first: %d", sdi_worker_starts(w));
    sdi_worker_reply_free(&rep);

    /* A trial from a fate, as the tuner records it. */
    sdi_trial tr;
    memset(&tr, 0, sizeof tr);
    sdi_worker_reply fate;
    memset(&fate, 0, sizeof fate);
    fate.outcome = SDI_WORKER_TIMEOUT;
    snprintf(fate.cause, sizeof fate.cause, "candidate 'x': no reply");
    sdi_tune_trial_from_reply(&fate, &tr);
    SDT_CHECK(tr.status == SD_ERR_CUDA && strstr(tr.detail, "candidate 'x'"), "trial from a fate");

    /* A built-in candidate through the worker: without a GPU it says so. */
    sdi_spmv_stats st;
    SDT_OK(sdi_spmv_stats_compute(&a, &st));
    sdi_gpu_props gpu;
    SDT_OK(sdi_gpu_profile("H200", &gpu));
    sdi_candidate im;
    memset(&im, 0, sizeof im);
    im.kind = SDI_CAND_PLAN;
    im.op = SD_OP_SPMV;
    im.k = 1;
    const sdi_task task = {.op = SD_OP_SPMV, .k = 1, .a = &a, .gpu = &gpu, .spmv = &st};
    SDT_OK(sdi_plan_default(&task, sdi_family_find(SD_OP_SPMV, "csr_vec"), &im.plan));
    memset(&tr, 0, sizeof tr);
    SDT_OK(sdi_tune_run_isolated(w, &im, matrix, 60, &tr));
    SDT_CHECK(tr.status == SD_ERR_NO_DEVICE || tr.status == SD_OK, "isolated built-in: %s %s",
              sd_status_string(tr.status), tr.detail);
    SDT_CHECK(strstr(tr.family, "spmv.") == tr.family, "family %s", tr.family);

    /* A request the worker cannot parse is answered, not fatal. */
    SDT_OK(sdi_worker_call(w, "{\"name\":\"odd\",\"kind\":\"nonsense\"}", 30, &rep));
    SDT_CHECK(rep.outcome == SDI_WORKER_REPLIED && strcmp(sdi_jget_string(&rep.reply, "status", ""), "error") == 0,
              "unknown kind answered");
    sdi_worker_reply_free(&rep);
    sdi_worker_destroy(w);
    SDT_CHECK(no_unreaped_children(), "no zombies after destroy");

    /* A worker that cannot be executed is a status, not a crash. */
    SDT_OK(sdi_worker_create("/nonexistent/sparseditto", NULL, &w));
    SDT_OK(sdi_worker_call(w, "{\"name\":\"n\",\"kind\":\"ping\"}", 10, &rep));
    SDT_CHECK(rep.outcome == SDI_WORKER_NOT_STARTED && strstr(rep.cause, "SPARSEDITTO_WORKER"), "not started: %s",
              rep.cause);
    sdi_worker_reply_free(&rep);
    sdi_worker_destroy(w);
    SDT_CHECK(no_unreaped_children(), "no zombies after a failed exec");
    sd_csr_free(&a);
}

static void test_ncu_parse(void)
{
    /* The long form of `ncu --csv` (two kernels) and the raw page. */
    const char *csv = "==PROF== Connected to process 1\n"
                      "\"ID\",\"Process ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
                      "\"0\",\"1\",\"k1\",\"dram__bytes_read.sum\",\"Mbyte\",\"1.50\"\n"
                      "\"0\",\"1\",\"k1\",\"lts__t_sector_hit_rate.pct\",\"%\",\"60\"\n"
                      "\"0\",\"1\",\"k1\",\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\",\"\",\"3.5\"\n"
                      "\"0\",\"1\",\"k1\",\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\",\"\",\"0.5\"\n"
                      "\"1\",\"1\",\"k2\",\"dram__bytes_read.sum\",\"Kbyte\",\"1,000\"\n"
                      "\"1\",\"1\",\"k2\",\"lts__t_sector_hit_rate.pct\",\"%\",\"80\"\n"
                      "\"1\",\"1\",\"k2\",\"sm__warps_active.avg.pct_of_peak_sustained_active\",\"%\",\"30\"\n";
    sdi_profile_diag d;
    SDT_OK(sdi_ncu_parse_csv(csv, &d));
    SDT_CHECK(d.available && d.nkernels == 2, "kernels %d", d.nkernels);
    SDT_CHECK(fabs(d.dram_bytes_read - 2.5e6) < 1, "dram bytes %g", d.dram_bytes_read);
    SDT_CHECK(fabs(d.l2_hit_pct - 70) < 1e-9 && fabs(d.warps_active_pct - 30) < 1e-9, "averages");
    SDT_CHECK(d.nstalls == 2 && strcmp(d.stall_name[0], "long_scoreboard") == 0, "stalls sorted");
    char text[600];
    sdi_profile_diag_text(&d, text, sizeof text);
    SDT_CHECK(strstr(text, "long_scoreboard 3.50") && strstr(text, "memory-latency bound"), "diagnosis: %s", text);
    const char *raw = "\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\",\"l1tex__t_sector_hit_rate.pct\"\n"
                      "\"\",\"\",\"byte\",\"%\"\n"
                      "\"0\",\"k\",\"4096\",\"12.5\"\n";
    SDT_OK(sdi_ncu_parse_csv(raw, &d));
    SDT_CHECK(d.nkernels == 1 && d.dram_bytes_read == 4096 && d.l1_hit_pct == 12.5, "raw page");
    SDT_STATUS(sdi_ncu_parse_csv("==ERROR== ERR_NVGPUCTRPERM\n", &d), SD_ERR_PARSE);
    /* ncu absent: skipped with a reason, never an error. */
    setenv("SPARSEDITTO_NCU", "/nonexistent/ncu", 1);
    sdi_config_reload();
    sdi_ncu_profile(SD_CLI_PATH, "/nonexistent/req.json", g_tmp, 10, &d);
    SDT_CHECK(!d.available && strstr(d.why, "not available"), "skipped: %s", d.why);
    unsetenv("SPARSEDITTO_NCU");
    sdi_config_reload();
}

/* ------------------------------------------------------------------ a whole agent round */

typedef struct {
    sd_csr a;
    sd_context ctx; /* a stand-in: the round reads props, arch and cache_dir only */
    sdi_tune_result *r;
} round_fixture;

static void fixture_init(round_fixture *f, const char *cache)
{
    memset(f, 0, sizeof *f);
    SDT_OK(sdi_gen("uniform:rows=400,deg=6", 11, &f->a));
    SDT_OK(sdi_gpu_profile("H200", &f->ctx.props));
    snprintf(f->ctx.arch, sizeof f->ctx.arch, "sm_90");
    f->ctx.cache_dir = (char *)cache;
    f->r = calloc(1, sizeof *f->r);
    f->r->op = SD_OP_SPMV;
    f->r->k = 1;
    f->r->ours_trial = -1;
    f->r->vendor_best = -1;
    SDT_OK(sd_analyze(&f->a, SD_OP_SPMV, &f->r->features));
    SDT_OK(sdi_rank(&f->r->features, SD_OP_SPMV, 1, &f->r->ranking));
}

static void fixture_free(round_fixture *f)
{
    free(f->r);
    sd_csr_free(&f->a);
}

static void test_agent_round_unconfigured(void)
{
    round_fixture f;
    fixture_init(&f, g_tmp);
    setenv("SPARSEDITTO_LOWERING", "agent", 1);
    unsetenv("SPARSEDITTO_AGENT_URL");
    sdi_config_reload();
    sdi_tune_options opt = {0};
    SDT_OK(sdi_tune_agent(&f.ctx, &f.a, &opt, f.r));
    SDT_CHECK(strstr(f.r->diagnosis, "agent lowering skipped") &&
                  strstr(f.r->diagnosis, sdi_agent_built() ? "SPARSEDITTO_AGENT_URL" : "without libcurl") &&
                  strstr(f.r->diagnosis, "built-in backend"),
              "clear message: %s", f.r->diagnosis);
    SDT_CHECK(f.r->ntrials == 0, "no attempts");
    unsetenv("SPARSEDITTO_LOWERING");
    sdi_config_reload();
    f.r->diagnosis[0] = '\0';
    SDT_OK(sdi_tune_agent(&f.ctx, &f.a, &opt, f.r));
    SDT_CHECK(f.r->diagnosis[0] == '\0' && f.r->ntrials == 0, "not requested: nothing happens");
    fixture_free(&f);
}

static void test_agent_round(void)
{
    if (!have_nvcc()) {
        printf("  (nvcc not found at %s: the agent round is not exercised)\n", sdi_config_get()->nvcc);
        return;
    }
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", g_tmp);
    round_fixture f;
    fixture_init(&f, cache);
    replay_server srv;
    memset(&srv, 0, sizeof srv);
    srv.answers[0] = REPLAY_CORRECT;
    srv.answers[1] = REPLAY_BROKEN;
    srv.answers[2] = REPLAY_WRONG;
    srv.answers[3] = REPLAY_NO_CODE;
    srv.answers[4] = REPLAY_HANG;
    srv.nanswers = 5;
    srv.usage_total = 1000;
    SDT_CHECK(replay_start(&srv) == 0, "server");
    set_env_common(srv.port);
    setenv("SPARSEDITTO_LOWERING", "agent", 1);
    setenv("SPARSEDITTO_AGENT_BUDGET", "5", 1);
    setenv("SPARSEDITTO_WORKER_TIMEOUT_S", "120", 1);
    sdi_config_reload();
    sdi_tune_options opt = {0};
    long long live0 = sdi_alloc_live_bytes();
    SDT_OK(sdi_tune_agent(&f.ctx, &f.a, &opt, f.r));
    SDT_CHECK(sdi_alloc_live_bytes() == live0, "everything freed (%lld bytes live)", sdi_alloc_live_bytes() - live0);
    SDT_CHECK(replay_requests(&srv) == 5, "five model calls (budget): %d", replay_requests(&srv));
    SDT_CHECK(f.r->ntrials == 5, "five attempts recorded: %d", f.r->ntrials);
    for (int i = 0; i < f.r->ntrials; i++)
        printf("  attempt %d: %s %s\n", i + 1, sd_status_string(f.r->trials[i].status), f.r->trials[i].detail);
    if (f.r->ntrials == 5) {
        sd_status s0 = f.r->trials[0].status, s2 = f.r->trials[2].status;
        SDT_CHECK(s0 == SD_ERR_NO_DEVICE || s0 == SD_OK, "correct kernel compiled: %s", f.r->trials[0].detail);
        SDT_CHECK(s0 != SD_ERR_NO_DEVICE || strstr(f.r->trials[0].detail, "compiled and loaded"), "no-device detail");
        SDT_CHECK(f.r->trials[1].status == SD_ERR_COMPILE, "broken kernel: %s", f.r->trials[1].detail);
        SDT_CHECK(s2 == SD_ERR_NO_DEVICE || s2 == SD_ERR_VALIDATION, "wrong kernel: %s", f.r->trials[2].detail);
        SDT_CHECK(f.r->trials[3].status == SD_ERR_PARSE, "no code: %s", f.r->trials[3].detail);
        SDT_CHECK(f.r->trials[4].status == SD_ERR_IO && strstr(f.r->trials[4].detail, "timeout"), "hang: %s",
                  f.r->trials[4].detail);
    }
    /* What the model was told. */
    sdi_jvalue v;
    if (srv.bodies[0] && sdi_json_parse(srv.bodies[0], -1, &v) == SD_OK) {
        const sdi_jvalue *m = sdi_jget(&v, "messages");
        const char *task = m && m->n >= 2 ? sdi_jget_string(&m->items[1], "content", "") : "";
        SDT_CHECK(strstr(task, "\"template\"") && strstr(task, f.r->ranking.e[0].label), "plan in the prompt");
        SDT_CHECK(strstr(task, "row_cv=") && strstr(task, "sd_agent_compute"), "features and harness");
        sdi_jvalue_free(&v);
    } else {
        SDT_CHECK(0, "first request is JSON");
    }
    SDT_CHECK(srv.bodies[2] && strstr(srv.bodies[2], "Compiler output") && strstr(srv.bodies[2], "error"),
              "compile log fed back");
    SDT_CHECK(srv.bodies[4] && strstr(srv.bodies[4], "no fenced code block"), "no-code outcome fed back");
    SDT_CHECK(strstr(f.r->diagnosis, "agent (replay-model, 5 call(s)"), "diagnosis: %s", f.r->diagnosis);
    /* The transcript beside the (absent, unless a GPU validated) cache entry. */
    sdi_cache *c = NULL;
    SDT_OK(sdi_cache_open(cache, &c));
    sdi_cache_key key;
    sdi_tune_agent_key(&f.ctx, &f.a, SD_OP_SPMV, 1, &opt, &key);
    /* The key names the templates the entry was generated from (another build's templates
     * give another key, so its entries are never read). */
    char gen[16];
    snprintf(gen, sizeof gen, "g2-%012llx",
             (unsigned long long)(sdi_kernel_templates_hash() & 0xffffffffffffull));
    SDT_CHECK(strcmp(key.generator, gen) == 0 && sdi_kernel_templates_hash() != 0,
              "cache key generator %s, templates %s", key.generator, gen);
    char path[1200];
    SDT_OK(sdi_cache_entry_path(c, &key, path, sizeof path));
    char tpath[1300];
    snprintf(tpath, sizeof tpath, "%.*s.transcript.json", (int)(strlen(path) - 4), path);
    FILE *tf = fopen(tpath, "r");
    SDT_CHECK(tf != NULL, "transcript at %s", tpath);
    if (tf != NULL) {
        static char text[1 << 20];
        size_t n = fread(text, 1, sizeof text - 1, tf);
        text[n] = '\0';
        fclose(tf);
        int attempts = 0;
        for (const char *p = text; (p = strstr(p, "\"type\":\"attempt\"")) != NULL; p++)
            attempts++;
        SDT_CHECK(attempts == 5, "five attempts in the transcript: %d", attempts);
        SDT_CHECK(strstr(text, "test-key-123") == NULL && strstr(text, "replay-model"), "provenance, no key");
        SDT_OK(sdi_json_parse(text, -1, &v));
        sdi_jvalue_free(&v);
    }
    sdi_cache_entry e;
    bool hit = false;
    SDT_OK(sdi_cache_lookup(c, &key, &e, &hit));
    bool validated = f.r->ntrials > 0 && f.r->trials[0].status == SD_OK;
    SDT_CHECK(hit == validated, "only a validated winner is cached (hit %d)", hit);
    sdi_cache_entry_free(&e);
    sdi_cache_close(c);
    replay_stop(&srv);
    unsetenv("SPARSEDITTO_LOWERING");
    unsetenv("SPARSEDITTO_AGENT_BUDGET");
    sdi_config_reload();
    SDT_CHECK(no_unreaped_children(), "no zombies after the round");
    fixture_free(&f);
}

int main(void)
{
    sdt_init("test_agent");
    snprintf(g_tmp, sizeof g_tmp, "%s/sd-test-agent-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(g_tmp) == NULL)
        return sdt_skip("cannot create a temporary directory");
    SDT_RUN(test_request_json_escapes);
    SDT_RUN(test_parse_response);
    SDT_RUN(test_extract_code);
    SDT_RUN(test_prompts);
    SDT_RUN(test_config_messages);
    if (!sdi_agent_built()) {
        printf("  (built without libcurl: the client tests are skipped)\n");
    } else {
        SDT_RUN(test_client_replay);
    }
    SDT_RUN(test_worker_survives_crashes);
    SDT_RUN(test_agent_impl_in_process);
    SDT_RUN(test_ncu_parse);
    SDT_RUN(test_agent_round_unconfigured);
    if (sdi_agent_built())
        SDT_RUN(test_agent_round);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        printf("  (could not remove %s)\n", g_tmp);
    return sdt_finish();
}
