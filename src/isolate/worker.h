/* src/isolate/worker.h: candidate execution in a separate worker process. The tuner
 * (parent) sends one JSON request per line to a worker and reads one JSON reply per
 * line back; the worker compiles, loads, validates and times the candidate. A fault
 * (sticky CUDA error, a hang past the timeout, a crash or signal) kills only the worker:
 * the parent gets a status naming the candidate and the cause and the next call starts
 * a fresh worker.
 *
 * Why a separate process image (exec of `sparseditto worker`) and not a bare fork():
 * CUDA does not survive fork() once the parent has initialised it (the tuner has), so
 * the worker must start from exec. The hidden subcommand reuses the installed command
 * (no second executable to install or find); the library locates it through
 * $SPARSEDITTO_WORKER, the running executable when that is the command, its sibling
 * `sparseditto`, or PATH (sdi_worker_exe).
 *
 * Parent side (worker.c): sdi_worker_start / sdi_worker_call / sdi_worker_stop and a
 * subprocess runner with a timeout (nvcc, ncu). Child side: sdi_worker_serve (the
 * request loop, worker.c), the shared validate-and-time routine (worker_exec.c; the .so
 * harness of LLM-written candidates is the runtime's, runtime/harness.h), ncu profiling
 * (worker_ncu.c). */
#ifndef SDI_WORKER_H
#define SDI_WORKER_H

#include <stdbool.h>
#include <sys/types.h>

#include "../core/json_parse.h"
#include "../lower/agent/agent.h"
#include "../runtime/harness.h"
#include "../runtime/runtime.h"

/* ------------------------------------------------------------------ parent side */
typedef enum {
    SDI_WORKER_REPLIED = 0, /* a reply record came back (its "status" says how it went) */
    SDI_WORKER_CRASHED,     /* the worker exited or was killed by a signal mid-request */
    SDI_WORKER_TIMEOUT,     /* no reply within the timeout: the worker was killed */
    SDI_WORKER_PROTOCOL,    /* a reply that is not JSON, or a broken pipe */
    SDI_WORKER_NOT_STARTED  /* the worker could not be started */
} sdi_worker_outcome;

typedef struct {
    sdi_worker_outcome outcome;
    char cause[640];   /* for anything but REPLIED: "candidate 'x': killed by signal 11 ..." */
    char *reply_json;  /* REPLIED: the reply line (owned; sdi_worker_reply_free) */
    sdi_jvalue reply;  /* REPLIED: parsed reply */
    double wall_s;     /* request sent → reply (or death) */
    int term_signal;   /* CRASHED: the signal, 0 when it exited */
    int exit_code;     /* CRASHED: the exit code when it exited */
} sdi_worker_reply;

typedef struct sdi_worker sdi_worker;

/* The worker executable: $SPARSEDITTO_WORKER, else /proc/self/exe when it is named
 * `sparseditto`, else `sparseditto` beside it when that exists, else "sparseditto"
 * (looked up in PATH at exec). */
SDI_HIDDEN void sdi_worker_exe(char *out, size_t cap);

/* Prepares a worker handle (the process itself starts on the first call). log_path
 * (may be NULL = /dev/null) receives the worker's stdout and stderr (appended), whose
 * tail is quoted in crash causes. exe NULL = sdi_worker_exe. */
SDI_HIDDEN sd_status sdi_worker_create(const char *exe, const char *log_path, sdi_worker **out);
/* Sends request_json (one JSON object; "name" names the candidate in causes) and waits
 * at most timeout_s for the reply. Returns SD_OK whenever an outcome was obtained (see
 * out->outcome; a dead worker is reaped and replaced on the next call); an error only
 * for host failures (memory, pipes). A reply with "fatal": true (the worker's CUDA
 * context is poisoned) also retires the worker. */
SDI_HIDDEN sd_status sdi_worker_call(sdi_worker *w, const char *request_json, double timeout_s,
                                     sdi_worker_reply *out);
SDI_HIDDEN void sdi_worker_reply_free(sdi_worker_reply *r);
/* Workers started so far (1 + restarts after faults). */
SDI_HIDDEN int sdi_worker_starts(const sdi_worker *w);
/* Process id of the live worker, or -1. */
SDI_HIDDEN pid_t sdi_worker_pid(const sdi_worker *w);
/* Ends the worker (EOF, then SIGKILL after a grace period), reaps it, frees w. NULL ok. */
SDI_HIDDEN void sdi_worker_destroy(sdi_worker *w);

/* Runs argv[0] (PATH lookup) with stdout+stderr into log_path (truncated), in its own
 * process group, killed with the group after timeout_s. *exit_code: the exit status,
 * 128 + signal when killed by one, -1 on timeout. SD_ERR_IO when it cannot start. */
SDI_HIDDEN sd_status sdi_subprocess_run(char *const argv[], const char *log_path, double timeout_s,
                                        int *exit_code);
/* The last `max` bytes of a text file into out (NUL-terminated; "" when unreadable). */
SDI_HIDDEN void sdi_file_tail(const char *path, size_t max, char *out, size_t cap);

/* ------------------------------------------------------------------ child side */
/* Handles one request, writing the reply object's members into `reply` (the loop adds
 * "id" and "name"). *fatal = true makes the worker exit after replying (a poisoned CUDA
 * context). The return status becomes "status"/"detail" when not SD_OK. */
typedef sd_status (*sdi_worker_handler)(void *arg, const sdi_jvalue *request, sdi_json *reply,
                                        bool *fatal);
/* The request loop on fd_in / fd_out until EOF. Returns the process exit code. */
SDI_HIDDEN int sdi_worker_serve(int fd_in, int fd_out, sdi_worker_handler handler, void *arg);
/* One request from a file, the reply into a file (ncu runs the worker this way). */
SDI_HIDDEN int sdi_worker_serve_once(const char *request_path, const char *reply_path,
                                     sdi_worker_handler handler, void *arg);

/* ------------------------------------------------------------------ the candidate harness
 * An LLM-written candidate is one CUDA file exporting the extern "C" entry points of
 * SDI_AGENT_ABI (src/lower/agent/agent.h: the text the model is given and the header
 * its file is compiled with). */
/* nvcc -shared -Xcompiler -fPIC -O3 -arch=<arch> src -o so, log into log_path;
 * SD_ERR_COMPILE with the log's first lines on failure. */
SDI_HIDDEN sd_status sdi_nvcc_shared(const char *src, const char *so, const char *arch,
                                     const char *log_path, double timeout_s, double *compile_ms);

/* Execution of one candidate: run() enqueues one execution of y = A·x. */
typedef struct {
    sd_status (*run)(void *arg, const float *d_in, float *d_out, cudaStream_t stream);
    void *arg;
} sdi_candidate_exec;

/* The measurement of a candidate (docs/ARCHITECTURE.md "Measurement") on ctx: seeded
 * operand (the tuner's seed),
 * CPU reference, output poisoned, check-then-time (sdi_measure). Writes "status"
 * ("ok", "invalid", "fault", "error"), "detail", "validation" and "timing" into reply;
 * *fatal when the CUDA context broke. Returns the measurement's status. */
SDI_HIDDEN sd_status sdi_candidate_measure(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                                           const char *name, const sdi_candidate_exec *ex,
                                           sdi_json *reply, bool *fatal);

/* ------------------------------------------------------------------ profiling (ncu) */
#define SDI_PROFILE_MAX_STALLS 6

typedef struct {
    bool available;          /* false: ncu absent or failed (why says so) */
    char why[256];
    int nkernels;            /* kernels profiled (values are summed / averaged over them) */
    double dram_bytes_read;  /* dram__bytes_read.sum */
    double l2_hit_pct;       /* lts__t_sector_hit_rate.pct */
    double l1_hit_pct;       /* l1tex__t_sector_hit_rate.pct */
    double warps_active_pct; /* sm__warps_active.avg.pct_of_peak_sustained_active */
    int nstalls;             /* the largest warp-stall reasons, largest first */
    char stall_name[SDI_PROFILE_MAX_STALLS][40];
    double stall_value[SDI_PROFILE_MAX_STALLS]; /* cycles per issued instruction */
} sdi_profile_diag;

/* The metrics requested from ncu (comma-separated). */
SDI_HIDDEN const char *sdi_ncu_metrics(void);
/* Parses `ncu --csv` output (long form: "Metric Name","Metric Unit","Metric Value";
 * or the raw page: one column per metric) into d. SD_ERR_PARSE when no metric is found. */
SDI_HIDDEN sd_status sdi_ncu_parse_csv(const char *text, sdi_profile_diag *d);
/* The general parser under it (either form): for each names[i], the sum of its values
 * over every kernel row (sums[i], scaled to bytes or seconds by the metric's unit:
 * Kbyte.., nsecond..) and how many rows had it (counts[i]); *kernels = launches seen.
 * SD_ERR_PARSE when none of the names appear (e.g. ncu could not read the counters). */
SDI_HIDDEN sd_status sdi_ncu_parse_metrics(const char *text, const char *const *names, int nnames,
                                           double *sums, int *counts, int *kernels);
#define SDI_NCU_NSTALLS 8
/* The memory-hierarchy counters of `sparseditto profile` (the paper's Table 1), per
 * execution of an implementation whose launches ncu profiled `runs` times. */
typedef struct {
    int launches;          /* kernel launches per execution */
    double gpu_us;         /* gpu__time_duration, summed over an execution's launches */
    double l1_hit_pct;     /* pooled: L1 sector hits / sectors over every launch */
    double l1_requests;    /* l1tex__t_requests.sum */
    double l2_hit_pct;     /* pooled: L2 sector hits / sectors */
    double l2_requests;    /* lts__t_requests.sum */
    double dram_read;      /* bytes */
    double dram_write;     /* bytes */
    double occupancy_pct;  /* achieved: warps active, % of peak, mean over launches */
    double dram_bw;        /* bytes/s: (read + written) / kernel time */
    double inst_executed;  /* warp instructions executed (smsp__inst_executed.sum) */
    /* Cycles a warp stood stalled per issued instruction, by reason (sdi_ncu_stall_reason),
     * weighted over launches by their instructions. */
    double stall[SDI_NCU_NSTALLS];
} sdi_ncu_memory;           /* NaN where ncu gave no value */
/* The metrics to request for sdi_ncu_parse_memory (comma-separated). */
SDI_HIDDEN const char *sdi_ncu_memory_metrics(void);
/* The stall reasons of sdi_ncu_memory.stall (and of the search's diagnosis): their count
 * (SDI_NCU_NSTALLS) and names ("long_scoreboard", ...; NULL out of range). */
SDI_HIDDEN int sdi_ncu_stall_count(void);
SDI_HIDDEN const char *sdi_ncu_stall_reason(int i);
/* Pools `ncu --csv` output of `runs` executions into per-execution figures. SD_ERR_PARSE
 * when none of the metrics appear; SD_ERR_INVALID_ARG when runs < 1. */
SDI_HIDDEN sd_status sdi_ncu_parse_memory(const char *text, int runs, sdi_ncu_memory *m);
/* Runs `ncu --csv --clock-control none --metrics ... <worker> worker --once req out`
 * on the request file and parses the result. Never fails the search: without ncu, or
 * when it fails (permissions), d->available = false and d->why says why. */
SDI_HIDDEN void sdi_ncu_profile(const char *worker_exe, const char *request_path,
                                const char *dir, double timeout_s, sdi_profile_diag *d);
/* A few lines of text for a prompt or a log: the counters and what they suggest. */
SDI_HIDDEN void sdi_profile_diag_text(const sdi_profile_diag *d, char *out, size_t cap);

#endif /* SDI_WORKER_H */
