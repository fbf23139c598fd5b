/* src/tune/agent_round.c: the search side of the agent lowering backend, in the tuner's
 * process: the agent round (prompt → code → worker (compile, validate, time, and
 * optionally ncu) → feedback → … within the budgets; the winner, if it beat every other
 * candidate, is cached with its provenance and the transcript beside it) and the agent
 * cache path of sd_compile. Isolated runs and the task's cache key: agent_isolate.c. The
 * worker's side is src/isolate/worker_handler.c. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/io.h"
#include "../isolate/worker_handler.h"
#include "../plan/plan.h"
#include "agent_round.h"

/* ------------------------------------------------------------------ the agent round */

typedef struct {
    sd_context *ctx;
    const sd_csr *a;
    const sdi_tune_options *opt;
    sdi_tune_result *r;
    char dir[PATH_MAX];
    char matrix[PATH_MAX + 16];
    sdi_worker *w;
    double timeout_s;
} round_env;

static void note(sdi_tune_result *r, const char *fmt, ...) SDI_PRINTF(2, 3);
static void note(sdi_tune_result *r, const char *fmt, ...)
{
    size_t len = strlen(r->diagnosis), cap = sizeof r->diagnosis;
    if (len + 3 >= cap)
        return;
    if (len > 0) {
        memcpy(r->diagnosis + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->diagnosis + len, cap - len, fmt, ap);
    va_end(ap);
}

/* Removes the round's scratch directory (flat: only files we wrote). */
static void remove_dir(const char *dir)
{
    if (dir[0] == '\0')
        return;
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        char path[PATH_MAX * 2];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static void env_free(round_env *e)
{
    sdi_worker_destroy(e->w);
    e->w = NULL;
    if (!sdi_config_get()->agent_keep)
        remove_dir(e->dir);
    else if (e->dir[0])
        sdi_log(1, "agent: scratch files kept in %s", e->dir);
    e->dir[0] = '\0';
}

/* Scratch directory, the matrix as .sdm for the worker, the worker handle. */
static sd_status env_open(round_env *e)
{
    int n = snprintf(e->dir, sizeof e->dir, "%s/sd-agent-XXXXXX", sdi_config_get()->tmpdir);
    const bool fits = n >= 0 && (size_t)n < sizeof e->dir;
    if (!fits || mkdtemp(e->dir) == NULL) {
        int err = fits ? errno : ENAMETOOLONG;
        e->dir[0] = '\0';
        return SDI_ERR(SD_ERR_IO, "cannot create a scratch directory (%s)", strerror(err));
    }
    snprintf(e->matrix, sizeof e->matrix, "%s/a.sdm", e->dir);
    sd_status s = sdi_sdm_write(e->matrix, e->a);
    if (s != SD_OK)
        return s;
    char log[PATH_MAX + 16];
    snprintf(log, sizeof log, "%s/worker.log", e->dir);
    e->timeout_s = sdi_config_get()->worker_timeout_s;
    return sdi_worker_create(NULL, log, &e->w);
}

static sdi_trial *new_trial(sdi_tune_result *r, const char *family, const char *config)
{
    if (r->ntrials >= SDI_TUNE_MAX_TRIALS)
        return NULL;
    sdi_trial *tr = &r->trials[r->ntrials++];
    memset(tr, 0, sizeof *tr);
    tr->round = 4;
    snprintf(tr->family, sizeof tr->family, "%s", family);
    snprintf(tr->config, sizeof tr->config, "%s", config);
    return tr;
}

static void count_trial(const round_env *e, const sdi_trial *tr, double best_us)
{
    sdi_tune_result *r = e->r;
    if (tr->status == SD_OK)
        r->n_valid++;
    else if (tr->status == SD_ERR_VALIDATION)
        r->n_invalid++;
    else if (tr->status == SD_ERR_UNSUPPORTED)
        r->n_refused++;
    else
        r->n_failed++;
    if (e->opt != NULL && e->opt->progress != NULL)
        e->opt->progress(e->opt->progress_arg, "agent", tr, best_us);
}

/* SPARSEDITTO_ISOLATE=1: the built-in winner once more, in a worker. */
static sd_status isolated_recheck(round_env *e)
{
    sdi_tune_result *r = e->r;
    if (r->ours_trial < 0 || r->best.kind != SDI_CAND_PLAN)
        return SD_OK;
    char cfg[SDI_PLAN_TEXT];
    sdi_candidate_describe(&r->best, cfg, sizeof cfg);
    sdi_trial *tr = new_trial(r, "isolated", cfg);
    if (tr == NULL)
        return SD_OK;
    sd_status s = sdi_tune_run_isolated(e->w, &r->best, e->matrix, e->timeout_s, tr);
    if (s != SD_OK)
        return s;
    count_trial(e, tr, r->best_t.mean_us);
    if (tr->status == SD_OK)
        note(r, "isolated re-check of the built-in winner: %.2f us in a worker", tr->t.mean_us);
    else
        note(r, "isolated re-check of the built-in winner FAILED: %.200s", tr->detail);
    return SD_OK;
}

/* The plan Π handed to the model: the best built-in plan with its lowering and bounds
 * (or the top-ranked template when nothing validated). */
static sd_status plan_for_prompt(const round_env *e, char **out)
{
    *out = NULL;
    const sdi_tune_result *r = e->r;
    const sdi_candidate *im = &r->best;
    sdi_json j;
    sdi_json_init(&j, 2);
    char buf[SDI_PLAN_TEXT];
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "op");
    sdi_json_string(&j, r->op == SD_OP_SPMV ? "spmv" : "spmm");
    sdi_json_key(&j, "k");
    sdi_json_int(&j, r->k);
    if (r->ours_trial >= 0 && im->kind == SDI_CAND_PLAN && im->built) {
        sdi_candidate_family(im, buf, sizeof buf);
        sdi_json_key(&j, "family");
        sdi_json_string(&j, buf);
        sdi_candidate_describe(im, buf, sizeof buf);
        sdi_json_key(&j, "config");
        sdi_json_string(&j, buf);
        sdi_json_key(&j, "plan");
        sdi_plan_json(&im->plan, &j);
        sdi_json_key(&j, "lowering");
        sdi_lowered_json(&im->exe.low, &j);
        int64_t value, meta, work;
        sdi_exe_bytes(&im->exe, &value, &meta, &work);
        sdi_plan_bounds b;
        sdi_plan_bounds_compute(value, meta, work, r->op, r->k, e->a->rows, e->a->cols, e->a->nnz, &e->ctx->props,
                                &b);
        sdi_json_key(&j, "bounds");
        sdi_plan_bounds_json(&b, &j);
    } else if (r->ranking.n > 0) {
        sdi_json_key(&j, "template");
        sdi_json_string(&j, r->ranking.e[0].label);
    }
    sdi_json_end_object(&j);
    return sdi_json_take(&j, out);
}

static sd_status write_text(const char *path, const char *a, const char *b)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return SDI_ERR(SD_ERR_IO, "cannot write '%s' (%s)", path, strerror(errno));
    int bad = fputs(a, f) < 0 || (b != NULL && fputs(b, f) < 0);
    bad |= fclose(f) != 0;
    return bad ? SDI_ERR(SD_ERR_IO, "cannot write '%s'", path) : SD_OK;
}

static sd_status read_file(const char *path, char **out, size_t *size)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return SDI_ERR(SD_ERR_IO, "cannot read '%s' (%s)", path, strerror(errno));
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return SDI_ERR(SD_ERR_IO, "cannot size '%s'", path);
    }
    *out = sdi_malloc((size_t)n + 1);
    if (*out == NULL) {
        fclose(f);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory reading '%s'", path);
    }
    size_t got = fread(*out, 1, (size_t)n, f);
    fclose(f);
    (*out)[got] = '\0';
    *size = got;
    return got == (size_t)n ? SD_OK : SDI_ERR(SD_ERR_IO, "short read of '%s'", path);
}

/* The request for one agent candidate (source to compile, or a prebuilt .so). */
static sd_status agent_request(const round_env *e, const char *name, const char *src, const char *so,
                               bool profile_only, char **out)
{
    *out = NULL;
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "name");
    sdi_json_string(&j, name);
    sdi_json_key(&j, "kind");
    sdi_json_string(&j, "agent");
    sdi_json_key(&j, "op");
    sdi_json_int(&j, e->r->op);
    sdi_json_key(&j, "k");
    sdi_json_int(&j, e->r->k);
    sdi_json_key(&j, "matrix");
    sdi_json_string(&j, e->matrix);
    if (src != NULL) {
        sdi_json_key(&j, "source");
        sdi_json_string(&j, src);
    }
    sdi_json_key(&j, "so");
    sdi_json_string(&j, so);
    sdi_json_key(&j, "arch");
    sdi_json_string(&j, e->ctx->arch[0] ? e->ctx->arch : SD_NVRTC_ARCH_DEFAULT);
    if (profile_only) {
        sdi_json_key(&j, "profile_only");
        sdi_json_bool(&j, true);
    }
    sdi_json_end_object(&j);
    return sdi_json_take(&j, out);
}

/* What the re-check of a cached agent kernel found. */
typedef struct {
    bool used; /* re-validated: the model is not asked again */
    sdi_timing t;
    char so[PATH_MAX + 16];
    char model[96];
} cached_check;

/* A cached agent kernel: never trusted, re-validated and re-timed in a worker. */
static sd_status run_cached(round_env *e, const sdi_cache_entry *entry, cached_check *cc)
{
    memset(cc, 0, sizeof *cc);
    const sdi_cache_blob *so = NULL;
    for (int i = 0; i < entry->nblobs; i++)
        if (strcmp(entry->blobs[i].name, "agent_so") == 0)
            so = &entry->blobs[i];
    if (so == NULL)
        return SD_OK;
    char *path = cc->so;
    snprintf(path, sizeof cc->so, "%s/cached.so", e->dir);
    FILE *f = fopen(path, "wb");
    bool ok = f != NULL && fwrite(so->data, 1, so->size, f) == so->size;
    if (f != NULL)
        ok &= fclose(f) == 0;
    if (!ok)
        return SDI_ERR(SD_ERR_IO, "cannot write '%s'", path);
    char *req = NULL;
    sd_status s = agent_request(e, "agent (cached)", NULL, path, false, &req);
    if (s != SD_OK)
        return s;
    sdi_worker_reply rep;
    s = sdi_worker_call(e->w, req, e->timeout_s, &rep);
    sdi_free(req);
    if (s != SD_OK)
        return s;
    sdi_jvalue rec;
    const char *model = "?";
    bool have_rec = sdi_json_parse(entry->record_json ? entry->record_json : "{}", -1, &rec) == SD_OK;
    if (have_rec)
        model = sdi_jget_string(&rec, "model", "?");
    char cfg[200];
    snprintf(cfg, sizeof cfg, "cached agent kernel (model %s)", model);
    sdi_trial *tr = new_trial(e->r, "agent", cfg);
    if (tr != NULL) {
        sdi_tune_trial_from_reply(&rep, tr);
        count_trial(e, tr, tr->t.mean_us);
        if (tr->status == SD_OK) {
            note(e->r, "agent: cached kernel (model %s) re-validated in a worker: %.2f us", model, tr->t.mean_us);
            cc->used = true;
            cc->t = tr->t;
            snprintf(cc->model, sizeof cc->model, "%s", model);
        } else {
            note(e->r, "agent: the cached kernel failed its re-check (%.150s): asking the model again", tr->detail);
        }
    }
    if (have_rec)
        sdi_jvalue_free(&rec);
    else
        sdi_error_clear();
    sdi_worker_reply_free(&rep);
    return SD_OK;
}

/* Makes an agent kernel that compiled, validated and won in a worker the search's
 * winner: the same .so is loaded into this process (the worker ran it on the same
 * operand, so a fault would have shown there) and replaces r->best. A kernel that
 * cannot be loaded here leaves the built-in winner in place with a note. */
static sd_status adopt(round_env *e, const char *so, const char *model, const sdi_timing *t)
{
    sdi_tune_result *r = e->r;
    sdi_candidate im;
    memset(&im, 0, sizeof im);
    im.kind = SDI_CAND_AGENT;
    im.op = r->op;
    im.k = r->op == SD_OP_SPMM ? r->k : 1;
    snprintf(im.agent_so, sizeof im.agent_so, "%s", so);
    snprintf(im.agent_model, sizeof im.agent_model, "%s", model);
    const sdi_task task = {.op = r->op, .k = im.k, .a = e->a, .gpu = &e->ctx->props};
    sd_status s = sdi_candidate_build(e->ctx, &task, &im, NULL, 0);
    if (s != SD_OK) {
        if (s == SD_ERR_OUT_OF_MEMORY || e->ctx->broken)
            return s;
        note(r, "agent kernel validated in the worker but not loadable here (%.200s): the built-in "
             "winner stays", sd_last_error());
        sdi_error_clear();
        return SD_OK;
    }
    sdi_candidate_release(&r->best);
    r->best = im;
    r->best_t = *t;
    r->best_roofline = r->roofline_us > 0 && t->mean_us > 0 ? r->roofline_us / t->mean_us : 0;
    r->winner_is_agent = 1;
    r->winner_is_vendor = 0;
    r->winner_vendor_graph = 0;
    return SD_OK;
}

typedef struct {
    double us;
    int attempt;
    char src[PATH_MAX + 32], so[PATH_MAX + 32];
    sdi_timing t;
} agent_best;

/* Stores the winner: plan + provenance record + source and .so blobs. */
static sd_status store_winner(round_env *e, sdi_cache *cache, const sdi_cache_key *key, const char *plan,
                              const agent_best *best, const sdi_agent_config *cfg, const char *transcript_path,
                              double target_us)
{
    char *src = NULL, *so = NULL, *record = NULL;
    size_t src_n = 0, so_n = 0;
    sdi_json j;
    sdi_json_init(&j, 0);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(src);                                                                     \
        sdi_free(so);                                                                      \
        sdi_json_free(&j);                                                                 \
    } while (0)
    SD_TRY(read_file(best->src, &src, &src_n));
    SD_TRY(read_file(best->so, &so, &so_n));
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "backend");
    sdi_json_string(&j, "agent");
    sdi_json_key(&j, "model");
    sdi_json_string(&j, cfg->model);
    sdi_json_key(&j, "endpoint");
    sdi_json_string(&j, cfg->url);
    sdi_json_key(&j, "transcript");
    sdi_json_string(&j, transcript_path ? transcript_path : "");
    sdi_json_key(&j, "attempt");
    sdi_json_int(&j, best->attempt);
    sdi_json_key(&j, "time");
    sdi_timing_json(&j, &best->t);
    sdi_json_key(&j, "beat_us");
    sdi_json_number(&j, target_us);
    sdi_json_key(&j, "validated");
    sdi_json_bool(&j, true);
    sdi_json_key(&j, "nvcc");
    sdi_json_string(&j, sdi_config_get()->nvcc);
    sdi_json_key(&j, "arch");
    sdi_json_string(&j, e->ctx->arch);
    sdi_json_end_object(&j);
    SD_TRY(sdi_json_finish(&j));
    record = j.buf;
    sdi_cache_blob blobs[2];
    memset(blobs, 0, sizeof blobs);
    snprintf(blobs[0].name, sizeof blobs[0].name, "agent_source");
    blobs[0].data = src;
    blobs[0].size = src_n;
    snprintf(blobs[1].name, sizeof blobs[1].name, "agent_so");
    blobs[1].data = so;
    blobs[1].size = so_n;
    sdi_cache_entry entry = {(char *)plan, record, 2, blobs};
    SD_TRY(sdi_cache_store(cache, key, &entry));
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

static void attempt_event(sdi_agent_conversation *sess, int attempt, const sdi_trial *tr, const char *profile)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "type");
    sdi_json_string(&j, "attempt");
    sdi_json_key(&j, "attempt");
    sdi_json_int(&j, attempt);
    sdi_json_key(&j, "status");
    sdi_json_string(&j, sd_status_string(tr->status));
    sdi_json_key(&j, "detail");
    sdi_json_string(&j, tr->detail);
    if (tr->status == SD_OK) {
        sdi_json_key(&j, "mean_us");
        sdi_json_number(&j, tr->t.mean_us);
    }
    if (profile != NULL) {
        sdi_json_key(&j, "profile");
        sdi_json_string(&j, profile);
    }
    sdi_json_end_object(&j);
    if (sdi_json_finish(&j) == SD_OK)
        sdi_agent_log_event(sess, j.buf);
    sdi_json_free(&j);
}

/* The conversation: attempts until a budget is spent. */
static sd_status agent_loop(round_env *e, sdi_agent_conversation *sess, const char *plan, double target_us,
                            agent_best *best, char *why_stop, size_t cap)
{
    sdi_tune_result *r = e->r;
    char *msg = NULL, *code = NULL, *req = NULL;
    sdi_worker_reply rep;
    memset(&rep, 0, sizeof rep);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(msg);                                                                     \
        sdi_free(code);                                                                    \
        sdi_free(req);                                                                     \
        sdi_worker_reply_free(&rep);                                                       \
    } while (0)
    SD_TRY(sdi_agent_system_prompt(&msg));
    SD_TRY(sdi_agent_add(sess, "system", msg));
    SDI_FREE(msg);
    sdi_agent_task task;
    memset(&task, 0, sizeof task);
    task.op = r->op;
    task.k = r->k;
    task.rows = e->a->rows;
    task.cols = e->a->cols;
    task.nnz = e->a->nnz;
    task.plan_json = plan;
    task.features = &r->features;
    task.ranking = &r->ranking;
    task.gpu = &e->ctx->props;
    task.arch = e->ctx->arch[0] ? e->ctx->arch : SD_NVRTC_ARCH_DEFAULT;
    task.builtin_us = r->ours_trial >= 0 ? r->trials[r->ours_trial].t.mean_us : 0;
    if (e->opt != NULL && e->opt->allow_vendor && r->baseline != NULL && r->vendor_best >= 0) {
        task.vendor_us = r->baseline->v[r->vendor_best].timing.mean_us;
        task.vendor_name = r->baseline->v[r->vendor_best].name;
    }
    SD_TRY(sdi_agent_task_prompt(&task, &msg));
    SD_TRY(sdi_agent_add(sess, "user", msg));
    SDI_FREE(msg);
    char header[PATH_MAX + 32];
    snprintf(header, sizeof header, "%s/" SDI_AGENT_ABI_HEADER, e->dir);
    SD_TRY(write_text(header, SDI_AGENT_ABI, NULL));

    for (int attempt = 1;; attempt++) {
        if (sdi_agent_budget_spent(sess, why_stop, cap))
            break;
        const char *reply = NULL;
        char name[48];
        snprintf(name, sizeof name, "agent-%d", attempt);
        char cfg[200];
        snprintf(cfg, sizeof cfg, "attempt %d (model %s)", attempt, sess->cfg.model);
        sd_status s = sdi_agent_chat(sess, &reply);
        if (s == SD_ERR_OUT_OF_MEMORY) {
            SD_FREE_ALL;
            return s;
        }
        sdi_trial *tr = new_trial(r, "agent", cfg);
        if (tr == NULL) {
            snprintf(why_stop, cap, "the trial table is full");
            break;
        }
        if (s != SD_OK) {
            /* The conversation is unchanged: the next call asks the same question. */
            tr->status = s;
            snprintf(tr->detail, sizeof tr->detail, "model call failed: %.170s", sd_last_error());
            sdi_log(1, "agent: attempt %d: %s", attempt, tr->detail);
            sdi_error_clear();
            attempt_event(sess, attempt, tr, NULL);
            count_trial(e, tr, best->us);
            continue;
        }
        sdi_agent_feedback fb;
        memset(&fb, 0, sizeof fb);
        fb.attempt = attempt;
        fb.target_us = best->us > 0 && (target_us == 0 || best->us < target_us) ? best->us : target_us;
        char profile_text[1024] = "";
        const char *compile_log = NULL;
        s = sdi_agent_extract_code(reply, &code);
        if (s != SD_OK) {
            tr->status = SD_ERR_PARSE;
            snprintf(tr->detail, sizeof tr->detail, "no code: %.180s", sd_last_error());
            sdi_error_clear();
            fb.status = "no_code";
            fb.detail = "your reply held no fenced code block";
        } else {
            char src[PATH_MAX + 32], so[PATH_MAX + 32];
            snprintf(src, sizeof src, "%s/cand_%d.cu", e->dir, attempt);
            snprintf(so, sizeof so, "%s/cand_%d.so", e->dir, attempt);
            SD_TRY(write_text(src, "#include \"" SDI_AGENT_ABI_HEADER "\"\n", code));
            SDI_FREE(code);
            SD_TRY(agent_request(e, name, src, so, false, &req));
            SD_TRY(sdi_worker_call(e->w, req, e->timeout_s, &rep));
            SDI_FREE(req);
            sdi_tune_trial_from_reply(&rep, tr);
            if (rep.outcome == SDI_WORKER_REPLIED) {
                fb.status = sdi_jget_string(&rep.reply, "status", "error");
                fb.detail = sdi_jget_string(&rep.reply, "detail", "");
                compile_log = sdi_jget_string(&rep.reply, "compile_log", NULL);
            } else {
                fb.status = rep.outcome == SDI_WORKER_TIMEOUT ? "timeout (the worker was killed)" : "crash";
                fb.detail = rep.cause;
            }
            fb.compile_log = compile_log;
            if (tr->status == SD_OK) {
                fb.mean_us = tr->t.mean_us;
                if (sess->cfg.profile) {
                    /* Profile-guided refinement: the validated candidate once under ncu. */
                    char reqpath[PATH_MAX + 32], exe[PATH_MAX];
                    snprintf(reqpath, sizeof reqpath, "%s/profile_%d.json", e->dir, attempt);
                    SD_TRY(agent_request(e, name, NULL, so, true, &req));
                    SD_TRY(write_text(reqpath, req, NULL));
                    SDI_FREE(req);
                    sdi_worker_exe(exe, sizeof exe);
                    sdi_profile_diag d;
                    sdi_ncu_profile(exe, reqpath, e->dir, e->timeout_s, &d);
                    sdi_profile_diag_text(&d, profile_text, sizeof profile_text);
                    fb.profile = profile_text;
                    sdi_log(1, "agent: attempt %d profile: %s", attempt, profile_text);
                }
                if (best->us == 0 || tr->t.mean_us < best->us) {
                    best->us = tr->t.mean_us;
                    best->t = tr->t;
                    best->attempt = attempt;
                    snprintf(best->src, sizeof best->src, "%s", src);
                    snprintf(best->so, sizeof best->so, "%s", so);
                }
            }
        }
        sdi_log(1, "agent: attempt %d: %s %s", attempt, sd_status_string(tr->status), tr->detail);
        attempt_event(sess, attempt, tr, profile_text[0] ? profile_text : NULL);
        count_trial(e, tr, best->us);
        SD_TRY(sdi_agent_feedback_prompt(&fb, &msg));
        sdi_worker_reply_free(&rep);
        SD_TRY(sdi_agent_add(sess, "user", msg));
        SDI_FREE(msg);
    }
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_tune_agent(sd_context *ctx, const sd_csr *a, const sdi_tune_options *opt, sdi_tune_result *r)
{
    bool isolate = sdi_config_get()->isolate;
    bool agent = sdi_config_get()->lowering == SDI_LOWERING_AGENT;
    if (!isolate && !agent)
        return SD_OK;
    if (r->op != SD_OP_SPMV && r->op != SD_OP_SPMM) {
        note(r, "agent lowering and isolated runs cover SpMV and SpMM");
        return SD_OK;
    }
    if (agent && opt != NULL && opt->deterministic) {
        /* Whether foreign code uses floating-point atomics cannot be checked. */
        note(r, "agent lowering skipped in deterministic mode");
        agent = false;
        if (!isolate)
            return SD_OK;
    }
    round_env e;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.a = a;
    e.opt = opt;
    e.r = r;
    sdi_agent_config cfg;
    sdi_agent_conversation sess;
    memset(&sess, 0, sizeof sess);
    sdi_cache *cache = NULL;
    sdi_cache_entry entry;
    memset(&entry, 0, sizeof entry);
    char *plan = NULL, *transcript = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        env_free(&e);                                                                      \
        sdi_agent_conversation_free(&sess);                                                \
        sdi_cache_entry_free(&entry);                                                      \
        sdi_cache_close(cache);                                                            \
        sdi_free(plan);                                                                    \
        sdi_free(transcript);                                                              \
    } while (0)
    sd_status cs = agent ? sdi_agent_config_from_env(&cfg) : SD_OK;
    if (cs != SD_OK) {
        note(r, "agent lowering skipped (%.300s): the built-in backend's kernel is used", sd_last_error());
        sdi_log(1, "%s", r->diagnosis);
        sdi_error_clear();
        agent = false;
        if (!isolate)
            return SD_OK;
    }
    sd_status s = env_open(&e);
    if (s != SD_OK) {
        if (s == SD_ERR_OUT_OF_MEMORY) {
            SD_FREE_ALL;
            return s;
        }
        note(r, "agent round skipped: %.300s", sd_last_error());
        sdi_error_clear();
        SD_FREE_ALL;
        return SD_OK;
    }
    if (isolate)
        SD_TRY(isolated_recheck(&e));
    if (!agent) {
        SD_FREE_ALL;
        return SD_OK;
    }

    /* A cached agent kernel for this task: re-check it instead of asking the model. */
    sdi_cache_key key;
    sdi_tune_agent_key(ctx, a, r->op, r->k, opt, &key);
    if (sdi_cache_open(ctx->cache_dir && ctx->cache_dir[0] ? ctx->cache_dir : NULL, &cache) != SD_OK) {
        sdi_log(1, "agent: kernel cache unusable (%s): nothing will be cached", sd_last_error());
        sdi_error_clear();
        cache = NULL;
    }
    double builtin_us = r->ours_trial >= 0 ? r->trials[r->ours_trial].t.mean_us : 0;
    double vendor_us = opt != NULL && opt->allow_vendor && r->baseline != NULL && r->vendor_best >= 0
                           ? r->baseline->v[r->vendor_best].timing.mean_us
                           : 0;
    double target_us = builtin_us > 0 && (vendor_us == 0 || builtin_us < vendor_us) ? builtin_us : vendor_us;
    if (cache != NULL) {
        bool hit = false;
        cached_check cc;
        memset(&cc, 0, sizeof cc);
        if (sdi_cache_lookup(cache, &key, &entry, &hit) != SD_OK)
            sdi_error_clear();
        if (hit)
            SD_TRY(run_cached(&e, &entry, &cc));
        sdi_cache_entry_free(&entry);
        if (cc.used) {
            /* It won when it was cached; it is the winner again only if it still wins. */
            if (target_us == 0 || cc.t.mean_us < target_us)
                SD_TRY(adopt(&e, cc.so, cc.model, &cc.t));
            else
                note(r, "agent: the cached kernel (%.2f us) no longer beats %.2f us: not used", cc.t.mean_us,
                     target_us);
            SD_FREE_ALL;
            return SD_OK;
        }
    }

    SD_TRY(plan_for_prompt(&e, &plan));
    SD_TRY(sdi_agent_conversation_init(&sess, &cfg));
    agent_best best;
    memset(&best, 0, sizeof best);
    char why_stop[160] = "";
    SD_TRY(agent_loop(&e, &sess, plan, target_us, &best, why_stop, sizeof why_stop));
    bool won = best.us > 0 && (target_us == 0 || best.us < target_us);
    char outcome[400];
    if (best.us == 0)
        snprintf(outcome, sizeof outcome, "no candidate validated in %d call(s) (%s)", sess.calls, why_stop);
    else if (!won)
        snprintf(outcome, sizeof outcome, "best agent kernel %.2f us (attempt %d) did not beat %.2f us: not cached",
                 best.us, best.attempt, target_us);
    else
        snprintf(outcome, sizeof outcome, "agent kernel %.2f us (attempt %d) beat %.2f us: cached", best.us,
                 best.attempt, target_us);
    SD_TRY(sdi_agent_transcript(&sess, outcome, &transcript));
    char tpath[1300] = "";
    if (cache != NULL && sdi_cache_write_sidecar(cache, &key, ".transcript.json", transcript, tpath, sizeof tpath) != SD_OK) {
        sdi_log(1, "agent: could not save the transcript: %s", sd_last_error());
        sdi_error_clear();
        tpath[0] = '\0';
    }
    if (won && cache != NULL) {
        s = store_winner(&e, cache, &key, plan, &best, &cfg, tpath, target_us);
        if (s == SD_ERR_OUT_OF_MEMORY) {
            SD_FREE_ALL;
            return s;
        }
        if (s != SD_OK) {
            snprintf(outcome + strlen(outcome), sizeof outcome - strlen(outcome), " (store failed: %.150s)",
                     sd_last_error());
            sdi_error_clear();
        }
    }
    note(r, "agent (%s, %d call(s), %ld tokens): %s%s%s", cfg.model, sess.calls, sess.total_tokens, outcome,
         tpath[0] ? "; transcript " : "", tpath);
    if (won)
        SD_TRY(adopt(&e, best.so, cfg.model, &best.t));
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_tune_agent_cached(sd_context *ctx, const sd_csr *a, sd_op op, int k, const sdi_tune_options *opt,
                                sdi_candidate *out, char **record_json, bool *used)
{
    memset(out, 0, sizeof *out);
    *record_json = NULL;
    *used = false;
    if (sdi_config_get()->lowering != SDI_LOWERING_AGENT || (op != SD_OP_SPMV && op != SD_OP_SPMM) ||
        (opt != NULL && opt->deterministic))
        return SD_OK;
    round_env e;
    memset(&e, 0, sizeof e);
    sdi_cache *cache = NULL;
    sdi_cache_entry entry;
    memset(&entry, 0, sizeof entry);
    sdi_tune_result *r = NULL;
    sdi_json j;
    sdi_json_init(&j, 0);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        env_free(&e);                                                                      \
        sdi_cache_entry_free(&entry);                                                      \
        sdi_cache_close(cache);                                                            \
        if (r != NULL)                                                                     \
            sdi_tune_result_free(r);                                                       \
        sdi_free(r);                                                                       \
        sdi_json_free(&j);                                                                 \
    } while (0)
    sdi_cache_key key;
    sdi_tune_agent_key(ctx, a, op, k, opt, &key);
    if (sdi_cache_open(ctx->cache_dir && ctx->cache_dir[0] ? ctx->cache_dir : NULL, &cache) != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    bool hit = false;
    if (sdi_cache_lookup(cache, &key, &entry, &hit) != SD_OK)
        sdi_error_clear();
    if (!hit) {
        SD_FREE_ALL;
        return SD_OK;
    }
    r = sdi_calloc(1, sizeof *r);
    SD_CHECK_ALLOC(r, "the agent cache check");
    r->op = op;
    r->k = op == SD_OP_SPMM ? k : 1;
    r->ours_trial = -1;
    r->vendor_best = -1;
    e.ctx = ctx;
    e.a = a;
    e.opt = opt;
    e.r = r;
    sd_status s = env_open(&e);
    if (s != SD_OK) {
        if (s == SD_ERR_OUT_OF_MEMORY) {
            SD_FREE_ALL;
            return s;
        }
        sdi_log(1, "agent: the cached kernel cannot be re-checked (%s): searching", sd_last_error());
        sdi_error_clear();
        SD_FREE_ALL;
        return SD_OK;
    }
    cached_check cc;
    SD_TRY(run_cached(&e, &entry, &cc));
    if (cc.used)
        SD_TRY(adopt(&e, cc.so, cc.model, &cc.t));
    if (!r->winner_is_agent) {
        sdi_log(1, "agent: cached kernel not used (%s): searching", r->diagnosis);
        SD_FREE_ALL;
        return SD_OK;
    }
    /* The record: the winner as a search record names it, the provenance, the re-check. */
    char buf[SDI_PLAN_TEXT];
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "winner");
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "family");
    sdi_json_string(&j, "agent");
    sdi_candidate_describe(&r->best, buf, sizeof buf);
    sdi_json_key(&j, "config");
    sdi_json_string(&j, buf);
    sdi_json_key(&j, "vendor");
    sdi_json_bool(&j, false);
    sdi_json_key(&j, "agent");
    sdi_json_bool(&j, true);
    sdi_json_key(&j, "time");
    sdi_timing_json(&j, &cc.t);
    sdi_json_end_object(&j);
    sdi_json_key(&j, "provenance");
    sdi_json_raw(&j, entry.record_json != NULL && entry.record_json[0] ? entry.record_json : "null");
    sdi_json_key(&j, "diagnosis");
    sdi_json_string(&j, r->diagnosis);
    sdi_json_end_object(&j);
    SD_TRY(sdi_json_finish(&j));
    *out = r->best;
    memset(&r->best, 0, sizeof r->best);
    *record_json = j.buf;
    j.buf = NULL;
    *used = true;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}
