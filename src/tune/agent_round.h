/* src/tune/agent_round.h: the search side of the agent lowering backend and of process
 * isolation: the agent round the tuner calls after its built-in rounds, isolated runs of
 * built-in candidates, and the agent kernel's cache entry with its provenance and
 * transcript. What the worker runs is src/isolate/worker_handler.h. */
#ifndef SDI_AGENT_ROUND_H
#define SDI_AGENT_ROUND_H

#include "../cache/cache.h"
#include "../isolate/worker.h"
#include "tune.h"

/* The agent round (SPARSEDITTO_LOWERING=agent; otherwise it returns at once): after the
 * built-in rounds, asks the model for a kernel lowering the best built-in plan and
 * refines it from the worker's outcomes (compile log, validation, time, ncu profile)
 * within the budgets. Agent attempts are appended to r->trials (family "agent"). A
 * candidate that validated and beat both the best built-in kernel and cuSPARSE's best
 * is cached (source + .so + provenance) under the task's key with the agent flag, the
 * transcript beside it; a cached one is re-validated in a worker instead of calling the
 * model. Never fails the search for the agent's sake: an unusable endpoint, a model
 * that writes nothing valid or a crashing candidate end the round with a note in
 * r->diagnosis. Errors only for host memory. */
SDI_HIDDEN sd_status sdi_tune_agent(sd_context *ctx, const sd_csr *a, const sdi_tune_options *opt,
                                    sdi_tune_result *r);

/* sd_compile's agent cache path (SPARSEDITTO_LOWERING=agent, SpMV/SpMM, not
 * deterministic): when the task's agent entry exists, its kernel is re-validated and
 * re-timed in a worker and, if it passes, loaded into *out (built, SDI_CAND_AGENT) with
 * *record_json (sdi_malloc'd: the winner, the cached provenance, the re-check) and
 * *used = true — no search runs. Otherwise *used = false and the caller searches.
 * Errors only for host memory or a broken CUDA context. */
SDI_HIDDEN sd_status sdi_tune_agent_cached(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                                           const sdi_tune_options *opt, sdi_candidate *out, char **record_json,
                                           bool *used);

/* (agent_isolate.c) Runs a built-in candidate in a worker: fills tr (status, detail, timing) from the
 * reply or from the worker's fate. SPARSEDITTO_ISOLATE=1 makes the agent hook
 * re-check the built-in winner this way. */
SDI_HIDDEN sd_status sdi_tune_run_isolated(sdi_worker *w, const sdi_candidate *cand, const char *matrix_path,
                                           double timeout_s, sdi_trial *tr);
/* A reply (or a worker fate) → a trial's status, detail and timing. */
SDI_HIDDEN void sdi_tune_trial_from_reply(const sdi_worker_reply *rep, sdi_trial *tr);

/* The kernel-cache key of a task on ctx (sd_compile's and the agent entry's): A's pattern
 * (and a general B's, SpGEMM A·B), op, K, flags (SDI_CACHE_FLAG_*: the options that change
 * the winner), the GPU, the NVRTC and driver versions, the library version. */
SDI_HIDDEN void sdi_tune_task_key(const sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op, int k,
                                  int32_t flags, sdi_cache_key *key);
/* The agent entry's cache key: the task's key (pattern, op, K, GPU, versions) with
 * SDI_CACHE_FLAG_AGENT set, so built-in and agent entries never collide. */
SDI_HIDDEN void sdi_tune_agent_key(const sd_context *ctx, const sd_csr *a, sd_op op, int k,
                                   const sdi_tune_options *opt, sdi_cache_key *key);

#endif /* SDI_AGENT_ROUND_H */
