/* src/runtime/timing.h: the measurement protocol (docs/ARCHITECTURE.md "Measurement"),
 * the context's calibration and the roofline bytes. */
#ifndef SDI_TIMING_H
#define SDI_TIMING_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "../core/core.h"

#define SDI_WARMUPS 5
#define SDI_TIMED_RUNS 10
#define SDI_PIPELINED_RUNS 10

typedef struct {
    double mean_us, min_us, median_us;
    double pipelined_us; /* SDI_PIPELINED_RUNS back-to-back executions / SDI_PIPELINED_RUNS */
    double runs_us[SDI_TIMED_RUNS];
} sdi_timing;

/* One execution enqueued on `stream` (it may block on the host, as SpGEMM does). */
typedef sd_status (*sdi_exec_fn)(sd_context *ctx, void *arg, cudaStream_t stream);
/* Validates the output left by the first warm-up run (SD_ERR_VALIDATION on mismatch). */
typedef sd_status (*sdi_check_fn)(sd_context *ctx, void *arg);

/* The measurement protocol (docs/ARCHITECTURE.md "Measurement") on ctx->stream: warm-up 1,
 * check (if given: check-then-time),
 * warm-ups 2..SDI_WARMUPS, then SDI_TIMED_RUNS executions each between two events
 * (mean / min / median), then SDI_PIPELINED_RUNS back-to-back executions between two
 * events. Errors name `name`. */
SDI_HIDDEN sd_status sdi_measure(sd_context *ctx, const char *name, sdi_exec_fn run,
                                 void *run_arg, sdi_check_fn check, void *check_arg,
                                 sdi_timing *out);
/* How a search measures a candidate (sdi_measure_screened); zero fields: the full protocol
 * (docs/ARCHITECTURE.md "Measurement").
 *   screen_us > 0: when the second warm-up (the first after the validated one, event-timed)
 *     takes longer, the protocol stops there: every field of the timing holds that one time
 *     (SDI_MEASURED_SCREENED). A candidate that slow (the tuner passes 8x its best so far)
 *     cannot win, and its full protocol would cost seconds on a skewed matrix.
 *   brief_us > 0: when that warm-up takes at least this long, SDI_BRIEF_RUNS executions are
 *     timed after it, each between two events, and nothing else (SDI_MEASURED_BRIEF;
 *     pipelined = mean). An execution that long is its own warm-up and is timed within a
 *     fraction of a per cent; the 25 executions of the full protocol cost 25 products
 *     (a 290 ms product: 7 s a candidate). Enough to rank candidates, never a reported time:
 *     the search measures its winner again with the full protocol (src/tune/search_measure.c).
 *   brief_long_us > 0: from this long, the brief protocol times one execution after the
 *     warm-up and the two are the timing (the tuner: SDI_BRIEF_LONG_US; the Belcastro
 *     twins' products of 0.3-0.9 s, whose trials' means and medians differ by under 0.1 %
 *     in the search records of `sparseditto compile --gen twin:name=Belcastro_human_gene1
 *     --op spgemm --json`: two products a candidate fewer).
 * The full protocol still times every winner and every cuSPARSE variant in full;
 * screened times are marked as such wherever reported. */
typedef struct {
    double screen_us;
    double brief_us;
    double brief_long_us;
} sdi_screen;
typedef enum { SDI_MEASURED_FULL = 0, SDI_MEASURED_SCREENED, SDI_MEASURED_BRIEF } sdi_measured;
#define SDI_BRIEF_RUNS 3
/* sdi_measure with a search's shortcuts (sc may be NULL: none); *how (may be NULL) says
 * which protocol ran. */
SDI_HIDDEN sd_status sdi_measure_screened(sd_context *ctx, const char *name, sdi_exec_fn run, void *run_arg,
                                          sdi_check_fn check, void *check_arg, const sdi_screen *sc,
                                          sdi_timing *out, sdi_measured *how);
/* {"mean_us", "min_us", "median_us", "pipelined_us"}: a timing in reports and records. */
SDI_HIDDEN void sdi_timing_json(sdi_json *j, const sdi_timing *t);
/* Measures (once per context) the device-to-device copy bandwidth and the event-timed
 * empty-launch latency. Thread-safe. */
SDI_HIDDEN sd_status sdi_device_calibrate(sd_context *ctx);
/* The CSR streaming-limit bytes (docs/ARCHITECTURE.md "Benchmarks, roofline and
 * aggregates"): SpMV nnz·8 + (rows+1)·4 + cols·4 + rows·4;
 * SpMM adds cols·K·4 + rows·K·4 − cols·4 − rows·4. 0 for SpGEMM (no roofline). */
SDI_HIDDEN double sdi_roofline_bytes(sd_op op, int64_t rows, int64_t cols, int64_t nnz, int k);

#endif /* SDI_TIMING_H */
