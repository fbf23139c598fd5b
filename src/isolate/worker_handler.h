/* src/isolate/worker_handler.h: the requests a worker serves (docs/ARCHITECTURE.md "Agent
 * lowering and worker isolation"): an LLM-written candidate ("agent": its source or .so)
 * or one of our SpMV/SpMM candidates ("builtin": its configuration), and "ping". The
 * protocol and the process handling are worker.h; the tuner's use of them is
 * src/tune/agent_round.h. */
#ifndef SDI_WORKER_HANDLER_H
#define SDI_WORKER_HANDLER_H

#include "../tune/candidate.h"
#include "worker.h"

/* The worker process's main loops (cmd_worker.c calls them): requests on fd_in,
 * replies on fd_out; or one request file → one reply file (under ncu). */
SDI_HIDDEN int sdi_worker_main(int fd_in, int fd_out);
SDI_HIDDEN int sdi_worker_once(const char *request_path, const char *reply_path);

/* Builds a worker request for one built-in candidate, a plan of a SpMV or SpMM family (it
 * travels as the record the kernel cache stores: tune/plan_cache.h). */
SDI_HIDDEN sd_status sdi_worker_builtin_request(const sdi_candidate *cand, const char *name,
                                                const char *matrix_path, char **out);

#endif /* SDI_WORKER_HANDLER_H */
