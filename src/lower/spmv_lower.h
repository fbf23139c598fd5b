/* src/lower/spmv_lower.h: SpMV lowering: an sdi_spmv_config → the template, its macros,
 * the launch list (kernels, grids, arguments bound to format arrays by name) and the
 * built format (host side, no GPU); then, with a context, the compiled, loaded and
 * uploaded launch program that runs y = A·x on device pointers. */
#ifndef SDI_SPMV_LOWER_H
#define SDI_SPMV_LOWER_H

#include "../formats/formats.h"
#include "../plan/spmv.h"
#include "../runtime/runtime.h"

#define SDI_SPMV_MAX_MACROS 16
#define SDI_SPMV_MAX_LAUNCHES 2
#define SDI_SPMV_MAX_ARGS 16

typedef enum {
    SDI_SPMV_ARG_ARRAY = 0, /* the device copy of a format array (by name) */
    SDI_SPMV_ARG_X,         /* the input vector */
    SDI_SPMV_ARG_Y,         /* the output vector */
    SDI_SPMV_ARG_NULL,      /* a null pointer (an optional array that is absent) */
    SDI_SPMV_ARG_I32,
    SDI_SPMV_ARG_I64
} sdi_spmv_arg_kind;

typedef struct {
    int32_t kind;
    char name[SDI_FMT_NAME];
    int64_t v;
} sdi_spmv_arg;

typedef struct {
    char kernel[48];
    unsigned grid, block;
    unsigned dyn_smem; /* dynamic shared memory per CTA (bytes; 0 = none) */
    int grid_stride;   /* 1: the kernel loops over its work, any grid is correct (the
                          instance clamps it to the CTAs the device keeps resident) */
    int nargs;
    sdi_spmv_arg args[SDI_SPMV_MAX_ARGS];
} sdi_spmv_launch;

/* A lowered plan: everything needed to compile and run it, nothing on the device. */
typedef struct {
    sdi_spmv_config cfg;
    char template_name[48]; /* e.g. "spmv_csr_vec.cuh" */
    int nmacros;
    char macro_name[SDI_SPMV_MAX_MACROS][24];
    char macro_value[SDI_SPMV_MAX_MACROS][24];
    int nlaunches; /* 0 for a matrix without rows (nothing to compute) */
    sdi_spmv_launch launch[SDI_SPMV_MAX_LAUNCHES];
    sdi_devfmt fmt;
    int64_t m_value, m_meta, workspace; /* device bytes (M_rep = m_value + m_meta) */
    int64_t smem;                       /* static shared memory per CTA */
    double build_ms;                    /* host format build time */
} sdi_spmv_plan;

/* Lowers c for a (which must outlive the plan: CSR arrays are borrowed). st may be NULL
 * (computed here; pass it when lowering many configs of one matrix); gpu may be NULL
 * (H200 defaults). The config is checked first (SD_ERR_UNSUPPORTED names the bound);
 * format builders may refuse with SD_ERR_UNSUPPORTED (padding). On failure *out is
 * zeroed. Needs no GPU. */
SDI_HIDDEN sd_status sdi_spmv_lower(const sdi_spmv_config *c, const sd_csr *a,
                                    const sdi_spmv_stats *st, const sdi_gpu_props *gpu,
                                    sdi_spmv_plan *out);
SDI_HIDDEN void sdi_spmv_plan_free(sdi_spmv_plan *p);
/* Fills only template_name and the macros of out from c (no format, no launches): they
 * depend on the config alone, so one cubin serves every matrix (sizes are arguments). */
SDI_HIDDEN sd_status sdi_spmv_config_source(const sdi_spmv_config *c, sdi_spmv_plan *out);
/* Fills a JIT request for the plan's template (macros point into p and into the caller's
 * array of SDI_SPMV_MAX_MACROS entries). arch NULL = the runtime's default. */
SDI_HIDDEN void sdi_spmv_plan_jit_request(const sdi_spmv_plan *p, const char *arch,
                                          sdi_macro macros[SDI_SPMV_MAX_MACROS],
                                          sdi_jit_request *req);
/* Writes {"config":…, "template":…, "macros":{…}, "launches":[…], "format":{…}}. */
SDI_HIDDEN void sdi_spmv_plan_json(const sdi_spmv_plan *p, sdi_json *j);

/* ------------------------------------------------------------------ on a device */
typedef struct {
    sdi_module mod;
    sdi_program prog;
    int x_buf, y_buf;
    double compile_ms, upload_ms;
    int cubin_hit; /* the cubin came from the context's memo */
} sdi_spmv_exec;

/* Compiles (memoised per context), loads, uploads the format and records the launches,
 * replayed as a CUDA graph unless SPARSEDITTO_GRAPHS=0 (sdi_program); x and y are bound
 * later. On failure *out is zeroed and nothing is left allocated. */
SDI_HIDDEN sd_status sdi_spmv_exec_create(sd_context *ctx, const sdi_spmv_plan *p,
                                          sdi_spmv_exec *out);
/* Binds the device vectors (x: cols floats, y: rows floats). */
SDI_HIDDEN sd_status sdi_spmv_exec_bind(sdi_spmv_exec *e, const sdi_spmv_plan *p,
                                        const float *d_x, float *d_y);
/* Enqueues y = A·x on stream (asynchronous; allocates nothing). */
SDI_HIDDEN sd_status sdi_spmv_exec_run(sd_context *ctx, sdi_spmv_exec *e, cudaStream_t stream);
SDI_HIDDEN void sdi_spmv_exec_free(sdi_spmv_exec *e);

#endif /* SDI_SPMV_LOWER_H */
