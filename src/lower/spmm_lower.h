/* src/lower/spmm_lower.h: lowering of an SpMM plan (sdi_spmm_config) for one matrix into a
 * launch description (template + macros, host format arrays, launches), and its
 * instantiation as a runtime launch program (compile, load, upload) and execution. */
#ifndef SDI_SPMM_LOWER_H
#define SDI_SPMM_LOWER_H

#include "../plan/spmm.h"
#include "../runtime/runtime.h"

#define SDI_SPMM_MAX_ARRAYS 10
#define SDI_SPMM_MAX_MACROS 24
#define SDI_SPMM_MAX_LAUNCHES 2
#define SDI_SPMM_MAX_ARGS 20
#define SDI_SPMM_KNAME 64

typedef enum {
    SDI_SPMM_ARR_META = 0,  /* indices, descriptors */
    SDI_SPMM_ARR_VALUE = 1, /* matrix values: a gather of the CSR values (src) */
    SDI_SPMM_ARR_WORK = 2   /* device workspace, zero when loaded (no host data) */
} sdi_spmm_arr_role;

typedef struct {
    char name[24];
    void *host;      /* NULL for workspace */
    size_t bytes;    /* device bytes */
    int32_t role;    /* sdi_spmm_arr_role */
    int32_t owned;   /* host belongs to the lowering (else borrowed from the CSR) */
    int64_t *src;    /* VALUE: CSR entry of each slot (-1: zero); NULL = identity */
    int64_t nslots;  /* VALUE: slots (floats) */
} sdi_spmm_array;

typedef enum {
    SDI_SPMM_ARG_ARRAY = 0, /* device pointer of array `index` */
    SDI_SPMM_ARG_B,         /* the dense input B (cols × K) */
    SDI_SPMM_ARG_C,         /* the dense output C (rows × K) */
    SDI_SPMM_ARG_NULL,      /* a null pointer (unused operand) */
    SDI_SPMM_ARG_I32,
    SDI_SPMM_ARG_I64
} sdi_spmm_arg_kind;

typedef struct {
    int32_t kind;
    int32_t index;
    int64_t value;
} sdi_spmm_arg;

typedef struct {
    int kernel; /* 0 or 1: which of the program's kernels */
    unsigned grid[3], block[3];
    int nargs;
    sdi_spmm_arg args[SDI_SPMM_MAX_ARGS];
} sdi_spmm_launch;

typedef struct {
    sdi_spmm_config cfg;
    int32_t rows, cols;
    int64_t nnz;
    const char *template_name; /* an embedded template, e.g. "spmm_csr_row.cuh" */
    int nkernels;
    char kname[2][SDI_SPMM_KNAME];
    int nmacros;
    char macro_name[SDI_SPMM_MAX_MACROS][16];
    char macro_value[SDI_SPMM_MAX_MACROS][SDI_SPMM_KNAME];
    int narrays;
    sdi_spmm_array arr[SDI_SPMM_MAX_ARRAYS];
    int nlaunches;
    sdi_spmm_launch launch[SDI_SPMM_MAX_LAUNCHES];
    /* what the plan costs and how it behaves */
    double build_ms;     /* host format building */
    int64_t bytes_value, bytes_meta, bytes_work;
    int64_t slots;       /* value slots (padding included) */
    int deterministic;   /* no floating-point atomics */
    int32_t long_rows;   /* split rows (split / PCSR with S) */
    int64_t chunks;      /* chunks (split) or PCSR rows */
} sdi_spmm_lowered;

/* Builds the formats and the launch description of cfg for a (a canonical CSR that must
 * outlive out: unpadded arrays are borrowed). SD_ERR_INVALID_ARG: illegal cfg (named);
 * SD_ERR_UNSUPPORTED: a format would exceed its limits (padding, workspace, index
 * widths). On failure *out is zeroed. */
SDI_HIDDEN sd_status sdi_spmm_lower(const sd_csr *a, const sdi_spmm_config *cfg,
                                    sdi_spmm_lowered *out);
SDI_HIDDEN void sdi_spmm_lowered_free(sdi_spmm_lowered *l);
/* Regathers the host value arrays from vals (nnz floats, same pattern). */
SDI_HIDDEN void sdi_spmm_lowered_refresh(sdi_spmm_lowered *l, const float *vals);
/* The NVRTC request of l (macros point into l and into macros[], which must hold
 * SDI_SPMM_MAX_MACROS entries and outlive the request). */
SDI_HIDDEN void sdi_spmm_jit_request(const sdi_spmm_lowered *l, sdi_macro *macros,
                                     sdi_jit_request *req);
/* JSON: config, kernel names, arrays and launches. */
SDI_HIDDEN void sdi_spmm_lowered_json(const sdi_spmm_lowered *l, sdi_json *j);

/* ------------------------------------------------------------------ on the device */
typedef struct {
    sdi_module mod;
    sdi_program prog;
    int ib, ic;           /* program buffers bound to B and C */
    size_t b_bytes, c_bytes;
    double compile_ms;    /* NVRTC (0 on a memo hit) */
    double load_ms;       /* module load + uploads */
    int num_regs[2];
    size_t local_bytes[2]; /* spills/stack per kernel (0 for a clean kernel) */
} sdi_spmm_loaded;

/* Compiles (memoised in ctx), loads the kernels, uploads the arrays and records the
 * launches (B and C are bound at each run). use_graph replays the launches as a CUDA
 * graph (sdi_program). On failure *out is zeroed and nothing stays allocated. */
SDI_HIDDEN sd_status sdi_spmm_load(sd_context *ctx, const sdi_spmm_lowered *l, bool use_graph,
                                   sdi_spmm_loaded *out);
/* C = A·B on `stream` (device pointers, row-major). Asynchronous. */
SDI_HIDDEN sd_status sdi_spmm_run(sd_context *ctx, sdi_spmm_loaded *ld, const float *d_b,
                                  float *d_c, cudaStream_t stream);
/* Uploads l's value arrays again (after sdi_spmm_lowered_refresh). */
SDI_HIDDEN sd_status sdi_spmm_upload_values(sd_context *ctx, const sdi_spmm_lowered *l,
                                            sdi_spmm_loaded *ld);
SDI_HIDDEN void sdi_spmm_unload(sdi_spmm_loaded *ld);
/* Compiles the kernels of list[0..n) into ctx's memo in parallel (OpenMP threads), so
 * that the loads that follow are memo hits. A kernel that fails to compile is counted in
 * *nfailed (its load will report the NVRTC log); *wall_s receives the wall time. */
SDI_HIDDEN sd_status sdi_spmm_precompile(sd_context *ctx, const sdi_spmm_lowered *const *list,
                                         int n, int *nfailed, double *wall_s);
/* The measurement protocol (sdi_measure; docs/ARCHITECTURE.md "Measurement") on the
 * loaded program: the first warm-up's output
 * is checked against ref (when given; val receives the details) before timing. The
 * caller poisons C beforehand if unwritten outputs must be caught. */
SDI_HIDDEN sd_status sdi_spmm_measure(sd_context *ctx, sdi_spmm_loaded *ld, const float *d_b,
                                      float *d_c, const sdi_reference *ref, sdi_validation *val,
                                      const char *name, sdi_timing *out);

#endif /* SDI_SPMM_LOWER_H */
