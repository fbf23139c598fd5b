/* src/lower/agent/agent_prompt.c: the chat-completions protocol pieces (request body,
 * response parsing, code extraction) and the prompts: the task (plan Π, features,
 * ranking reasons, harness interface, the times to beat) and the feedback on the
 * previous attempt (compile log, validation, timing, profile diagnosis). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../core/json_parse.h"
#include "agent.h"

/* ------------------------------------------------------------------ a growing string */
typedef struct {
    char *p;
    size_t len, cap;
    bool failed;
} text;

static void addf(text *t, const char *fmt, ...) SDI_PRINTF(2, 3);
static void addf(text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->p != NULL && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 4096;
        while (cap <= t->len + (size_t)n)
            cap *= 2;
        char *q = sdi_realloc_array(t->p, cap, 1);
        if (q == NULL) {
            t->failed = true;
            return;
        }
        t->p = q;
        t->cap = cap;
    }
}

static sd_status text_done(text *t, char **out)
{
    *out = NULL;
    if (t->failed || t->p == NULL) {
        sdi_free(t->p);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory building a prompt");
    }
    *out = t->p;
    return SD_OK;
}

/* ------------------------------------------------------------------ protocol */

sd_status sdi_agent_request_json(const char *model, const sdi_agent_msg *msgs, int n, char **out)
{
    *out = NULL;
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "model");
    sdi_json_string(&j, model);
    sdi_json_key(&j, "messages");
    sdi_json_begin_array(&j);
    for (int i = 0; i < n; i++) {
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "role");
        sdi_json_string(&j, msgs[i].role);
        sdi_json_key(&j, "content");
        sdi_json_string(&j, msgs[i].content);
        sdi_json_end_object(&j);
    }
    sdi_json_end_array(&j);
    /* Low temperature: refinement should follow the feedback, not wander. */
    sdi_json_key(&j, "temperature");
    sdi_json_number(&j, 0.2);
    sdi_json_end_object(&j);
    return sdi_json_take(&j, out);
}

sd_status sdi_agent_parse_response(const char *body, char **content, long *prompt_tokens,
                                   long *completion_tokens, long *total_tokens)
{
    *content = NULL;
    *prompt_tokens = *completion_tokens = *total_tokens = 0;
    sdi_jvalue v;
    sd_status s = sdi_json_parse(body, -1, &v);
    if (s != SD_OK) {
        sdi_error_prefix("agent: the endpoint's response is not JSON");
        return SD_ERR_PARSE;
    }
    const sdi_jvalue *usage = sdi_jget(&v, "usage");
    *prompt_tokens = (long)sdi_jget_number(usage, "prompt_tokens", 0);
    *completion_tokens = (long)sdi_jget_number(usage, "completion_tokens", 0);
    *total_tokens = (long)sdi_jget_number(usage, "total_tokens", 0);
    const sdi_jvalue *choices = sdi_jget(&v, "choices");
    const sdi_jvalue *msg = NULL;
    if (choices != NULL && choices->type == SDI_JARRAY && choices->n > 0)
        msg = sdi_jget(&choices->items[0], "message");
    const sdi_jvalue *c = sdi_jget(msg, "content");
    if (c == NULL || c->type != SDI_JSTRING) {
        const sdi_jvalue *err = sdi_jget(&v, "error");
        char why[300];
        snprintf(why, sizeof why, "%s", err ? sdi_jget_string(err, "message", "an error object") : "no choices[0].message.content");
        sdi_jvalue_free(&v);
        return SDI_ERR(SD_ERR_PARSE, "agent: the response holds no message (%s)", why);
    }
    size_t n = strlen(c->string);
    *content = sdi_malloc(n + 1);
    if (*content == NULL) {
        sdi_jvalue_free(&v);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a reply");
    }
    memcpy(*content, c->string, n + 1);
    sdi_jvalue_free(&v);
    return SD_OK;
}

sd_status sdi_agent_extract_code(const char *reply, char **code)
{
    *code = NULL;
    const char *best = NULL;
    size_t best_len = 0;
    bool best_defines = false;
    const char *p = reply;
    for (;;) {
        const char *open = strstr(p, "```");
        if (open == NULL)
            break;
        const char *body = strchr(open + 3, '\n'); /* skip the info string (cuda, cpp, ...) */
        if (body == NULL)
            break;
        body++;
        const char *close = strstr(body, "```");
        if (close == NULL)
            close = body + strlen(body); /* an unterminated last block (a cut-off reply) */
        size_t len = (size_t)(close - body);
        bool defines = false;
        for (const char *q = body; q && q < close; q++) {
            q = strstr(q, "sd_agent_compute");
            if (q == NULL || q >= close)
                break;
            defines = true;
            break;
        }
        /* Prefer a block defining the entry point; among equals, the longest. */
        if (best == NULL || (defines && !best_defines) || (defines == best_defines && len > best_len)) {
            best = body;
            best_len = len;
            best_defines = defines;
        }
        if (*close == '\0')
            break;
        p = close + 3;
    }
    if (best == NULL || best_len == 0)
        return SDI_ERR(SD_ERR_PARSE, "the reply holds no fenced code block");
    *code = sdi_malloc(best_len + 1);
    if (*code == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the code");
    memcpy(*code, best, best_len);
    (*code)[best_len] = '\0';
    return SD_OK;
}

/* ------------------------------------------------------------------ prompts */

sd_status sdi_agent_system_prompt(char **out)
{
    text t = {0};
    addf(&t, "You are a CUDA performance engineer inside SparseDitto, a compiler of sparse GPU kernels "
             "specialised to one matrix. You write one kernel program for the task you are given; it is "
             "compiled with nvcc, validated against a CPU reference and timed, and you get the outcome back.\n"
             "Rules:\n"
             "- Reply with exactly one fenced code block (```cuda ... ```) holding the complete .cu file. "
             "The harness header \"" SDI_AGENT_ABI_HEADER "\" is included before your code: do not "
             "redefine sd_agent_problem; define the three extern \"C\" entry points.\n"
             "- FP32 values and accumulation (no TF32, half or bfloat16). Every output entry must satisfy "
             "|got - want| <= 1e-5 + 1e-3*|want| + gamma(n+1)*sum|a*x| against a double reference; NaN/Inf fail.\n"
             "- Specialise on the sparsity pattern (sizes, row lengths, structure), never on the values: the "
             "values may change later with the same pattern.\n"
             "- sd_agent_compute is asynchronous on the given stream: no cudaMalloc, no synchronisation, no "
             "printf; it writes every entry of y (y is poisoned with NaN before the check).\n"
             "- Check CUDA errors in sd_agent_preprocess and return the cudaError_t as int (0 = success).\n");
    return text_done(&t, out);
}

static const char *op_name(sd_op op) { return op == SD_OP_SPMV ? "SpMV" : op == SD_OP_SPMM ? "SpMM" : "SpGEMM"; }

sd_status sdi_agent_task_prompt(const sdi_agent_task *tk, char **out)
{
    text t = {0};
    addf(&t, "Task: %s", op_name(tk->op));
    if (tk->op == SD_OP_SPMM)
        addf(&t, " C = A*B with K = %d (B is cols x K, C is rows x K, row-major)", tk->k);
    else
        addf(&t, " y = A*x");
    addf(&t, " for one matrix A: %d x %d, %lld nonzeros (CSR, int64 row pointers, int32 column indices, "
             "FP32 values).\n",
         tk->rows, tk->cols, (long long)tk->nnz);
    if (tk->gpu != NULL)
        addf(&t, "Target GPU: %s (%s), %d SMs, L2 %.0f MB, %.0f GB/s, shared memory per CTA %d bytes "
                 "(opt-in %d), %d threads per CTA at most.\n",
             tk->gpu->name, tk->arch ? tk->arch : "?", tk->gpu->sm_count, tk->gpu->l2_bytes / 1e6,
             tk->gpu->mem_bandwidth / 1e9, tk->gpu->smem_per_cta_default, tk->gpu->smem_per_cta_optin,
             tk->gpu->max_threads_per_cta);
    if (tk->builtin_us > 0 || tk->vendor_us > 0) {
        addf(&t, "Times to beat (mean of 10 event-timed executions after 5 warm-ups):");
        if (tk->builtin_us > 0)
            addf(&t, " SparseDitto's best built-in kernel %.2f us;", tk->builtin_us);
        if (tk->vendor_us > 0)
            addf(&t, " cuSPARSE %s %.2f us;", tk->vendor_name ? tk->vendor_name : "", tk->vendor_us);
        addf(&t, " yours must be faster to be kept.\n");
    }
    addf(&t, "\nThe compilation plan to lower (Pi = <representation, schedule, hardware mapping> chosen by "
             "the search):\n%s\n",
         tk->plan_json ? tk->plan_json : "{}");
    if (tk->features != NULL) {
        addf(&t, "\nStructural features of A (raw values; rows/cols/nnz are counts, ratios are fractions):\n");
        for (int i = 0; i < SD_NUM_FEATURES; i++) {
            /* The ten operator features are 0 for SpMV and SpMM: leave them out. */
            if (i >= 26 && tk->op != SD_OP_SPGEMM)
                break;
            addf(&t, "%s=%.6g%s", sd_feature_name(i), tk->features->values[i], (i % 6 == 5) ? "\n" : "  ");
        }
        addf(&t, "\nshape class of the row lengths: %s\n", sd_shape_class_name(tk->features->shape_class));
    }
    if (tk->ranking != NULL && tk->ranking->n > 0) {
        addf(&t, "\nThe energy model's ranking of templates (%s; lower energy ranks higher) with its "
                 "per-feature reasons:\n",
             tk->ranking->model);
        for (int i = 0; i < tk->ranking->n && i < 4; i++) {
            const sdi_rank_entry *e = &tk->ranking->e[i];
            addf(&t, "%d. %s (energy %.3f):", i + 1, e->label, e->energy);
            for (int r = 0; r < e->nreasons && r < 3; r++)
                addf(&t, " %s=%.4g contributes %+.3f (%s);", e->reasons[r].feature, e->reasons[r].value,
                     e->reasons[r].contribution, e->reasons[r].why);
            addf(&t, "\n");
        }
    }
    addf(&t, "\nHarness interface (" SDI_AGENT_ABI_HEADER ", included before your file):\n```cuda\n%s```\n",
         SDI_AGENT_ABI);
    addf(&t, "Your file is built with: nvcc -shared -Xcompiler -fPIC -O3 -std=c++17 -arch=%s cand.cu -o cand.so\n"
             "Write the complete file now.\n",
         tk->arch ? tk->arch : "sm_90");
    return text_done(&t, out);
}

sd_status sdi_agent_feedback_prompt(const sdi_agent_feedback *f, char **out)
{
    text t = {0};
    addf(&t, "Outcome of attempt %d: %s.\n", f->attempt, f->status ? f->status : "?");
    if (f->detail != NULL && f->detail[0])
        addf(&t, "Detail: %s\n", f->detail);
    if (f->compile_log != NULL && f->compile_log[0])
        addf(&t, "Compiler output (last lines):\n```\n%s\n```\n", f->compile_log);
    if (f->mean_us > 0) {
        addf(&t, "It validated. Time: %.2f us per execution", f->mean_us);
        if (f->target_us > 0)
            addf(&t, " (to beat: %.2f us; %s)", f->target_us,
                 f->mean_us < f->target_us ? "it is faster: try to widen the margin" : "it is slower");
        addf(&t, ".\n");
    }
    if (f->profile != NULL && f->profile[0])
        addf(&t, "Profile: %s\n", f->profile);
    addf(&t, "Reply with the complete improved file in one fenced code block.\n");
    return text_done(&t, out);
}
