/* src/lower/agent/agent.h: the optional LLM lowering backend (docs/ARCHITECTURE.md
 * "Agent lowering and worker isolation"):
 * configuration from the environment, an OpenAI-compatible chat-completions client
 * (libcurl), prompts built from the plan Π, the 36 features, the ranking's per-feature
 * reasons, the harness interface and the previous attempt's outcome, extraction of the
 * code block from a reply, budgets (calls, tokens, wall time) and the transcript.
 * Nothing here runs a candidate: tune/agent_round.c sends the code through the worker's
 * compile → validate → measure gate (isolate/worker.h). */
#ifndef SDI_AGENT_H
#define SDI_AGENT_H

#include <stdbool.h>

#include "../../analysis/gpu.h"
#include "../../core/core.h"
#include "../../model/rank.h"

/* The harness interface: the header a candidate file is compiled with, quoted in the
 * prompt. One source of truth for the host (worker_exec.c mirrors the struct). */
#define SDI_AGENT_ABI                                                                      \
    "#pragma once\n"                                                                       \
    "#include <cuda_runtime.h>\n"                                                          \
    "#include <stdint.h>\n"                                                                \
    "/* The task, valid during sd_agent_preprocess only (copy what you need). */\n"     \
    "typedef struct {\n"                                                                   \
    "    int op;          /* 0 = SpMV y = A*x, 1 = SpMM C = A*B (row-major, K columns) */\n" \
    "    int k;           /* dense width K (1 for SpMV) */\n"                              \
    "    int32_t rows, cols;\n"                                                            \
    "    int64_t nnz;\n"                                                                   \
    "    const int64_t *rowptr; /* host CSR: rows + 1 entries */\n"                       \
    "    const int32_t *colind; /* nnz entries, sorted within each row */\n"              \
    "    const float *vals;     /* nnz entries */\n"                                      \
    "} sd_agent_problem;\n"                                                                \
    "/* Builds the device representation (cudaMalloc + copies); returns 0 on success. */\n" \
    "extern \"C\" int sd_agent_preprocess(const sd_agent_problem *p, void **state);\n"  \
    "/* One execution on `stream`: x (cols*K floats) and y (rows*K floats) are device\n"  \
    "   pointers; asynchronous, allocates nothing, writes every entry of y; 0 = ok. */\n" \
    "extern \"C\" int sd_agent_compute(void *state, const float *x, float *y,\n"          \
    "                                  cudaStream_t stream);\n"                            \
    "/* Frees everything preprocess allocated. */\n"                                      \
    "extern \"C\" void sd_agent_cleanup(void *state);\n"
#define SDI_AGENT_ABI_HEADER "sd_agent_abi.h"

/* ------------------------------------------------------------------ configuration */
typedef struct {
    char url[512];   /* the chat-completions endpoint (…/chat/completions) */
    char model[128];
    char key[512];   /* never logged, never written to a transcript */
    int max_calls;   /* model calls per task */
    long max_tokens; /* total tokens per task (from the responses' usage) */
    double max_wall_s;        /* wall time of the whole agent round */
    double request_timeout_s; /* one HTTP request */
    int profile;     /* run ncu on validated candidates (profile-guided refinement) */
} sdi_agent_config;

/* True when the library was built with libcurl. */
SDI_HIDDEN bool sdi_agent_built(void);
/* Reads SPARSEDITTO_AGENT_URL (a base such as https://host/v1, or the full
 * …/chat/completions URL), _MODEL, _KEY (or OPENAI_API_KEY), _BUDGET (calls), _TOKENS,
 * _WALL_S, _TIMEOUT_S, _PROFILE. SD_ERR_UNSUPPORTED with a message naming what is
 * missing (no endpoint, no model, built without libcurl); a key may be empty only for
 * a local endpoint (127.0.0.1 / localhost). */
SDI_HIDDEN sd_status sdi_agent_config_from_env(sdi_agent_config *c);

/* ------------------------------------------------------------------ the conversation */
typedef struct {
    char *role;
    char *content;
} sdi_agent_msg;

typedef struct {
    sdi_agent_config cfg;
    int nmsgs, cap;
    sdi_agent_msg *msgs;
    int calls;                /* requests sent (successful or not) */
    long prompt_tokens, completion_tokens, total_tokens;
    double t_start;
    int logged_msgs;          /* messages already in the transcript */
    sdi_json events;          /* the transcript's events (an open array) */
} sdi_agent_conversation;

SDI_HIDDEN sd_status sdi_agent_conversation_init(sdi_agent_conversation *s, const sdi_agent_config *cfg);
SDI_HIDDEN void sdi_agent_conversation_free(sdi_agent_conversation *s);
/* Appends a message (copied) to the conversation. */
SDI_HIDDEN sd_status sdi_agent_add(sdi_agent_conversation *s, const char *role, const char *content);
/* True (and why) when no further call is allowed: calls, tokens or wall time spent. */
SDI_HIDDEN bool sdi_agent_budget_spent(const sdi_agent_conversation *s, char *why, size_t cap);
/* One chat-completions request with the whole conversation. On success the assistant's
 * reply is appended to the conversation and *reply points at it (owned by s). Every
 * call, failed or not, is counted and logged in the transcript. SD_ERR_IO for transport
 * failures and timeouts, SD_ERR_PARSE for a response without a message. */
SDI_HIDDEN sd_status sdi_agent_chat(sdi_agent_conversation *s, const char **reply);
/* Adds a raw JSON object (an attempt's outcome) to the transcript's events. */
SDI_HIDDEN void sdi_agent_log_event(sdi_agent_conversation *s, const char *json_object);
/* The transcript: {"backend":"agent","model","endpoint","calls","tokens","wall_s",
 * "events":[messages, replies, attempts]}; *out owned by the caller (sdi_free). */
SDI_HIDDEN sd_status sdi_agent_transcript(sdi_agent_conversation *s, const char *outcome, char **out);

/* ------------------------------------------------------------------ protocol pieces */
/* The request body: {"model", "messages":[{"role","content"}…], "temperature"}. */
SDI_HIDDEN sd_status sdi_agent_request_json(const char *model, const sdi_agent_msg *msgs, int n,
                                            char **out);
/* choices[0].message.content and usage.{prompt,completion,total}_tokens (0 when absent). */
SDI_HIDDEN sd_status sdi_agent_parse_response(const char *body, char **content, long *prompt_tokens,
                                              long *completion_tokens, long *total_tokens);
/* The code of a reply: the fenced block that defines sd_agent_compute (else the longest
 * fenced block). SD_ERR_PARSE when the reply holds none. */
SDI_HIDDEN sd_status sdi_agent_extract_code(const char *reply, char **code);

/* ------------------------------------------------------------------ prompts */
typedef struct {
    sd_op op;
    int k;
    int32_t rows, cols;
    int64_t nnz;
    const char *plan_json;      /* the plan Π to lower (the best built-in plan) */
    const sd_features *features;
    const sdi_ranking *ranking; /* per-feature reasons */
    const sdi_gpu_props *gpu;
    const char *arch;           /* "sm_90" */
    double builtin_us;          /* the best built-in kernel's mean time (0 = none) */
    double vendor_us;           /* cuSPARSE's best (0 = not measured) */
    const char *vendor_name;
} sdi_agent_task;

/* The outcome of the previous attempt, for the next prompt. */
typedef struct {
    int attempt;
    const char *status;      /* "ok", "compile_error", "invalid", "fault", "crash", "timeout", "no_code", ... */
    const char *detail;      /* cause / validation reason */
    const char *compile_log; /* may be NULL */
    double mean_us;          /* validated time (0 = none) */
    double target_us;        /* the time to beat */
    const char *profile;     /* diagnosis text (may be NULL) */
} sdi_agent_feedback;

SDI_HIDDEN sd_status sdi_agent_system_prompt(char **out);
SDI_HIDDEN sd_status sdi_agent_task_prompt(const sdi_agent_task *t, char **out);
SDI_HIDDEN sd_status sdi_agent_feedback_prompt(const sdi_agent_feedback *f, char **out);

#endif /* SDI_AGENT_H */
