/* include/sparseditto.h: the public C API of SparseDitto (one header).
 *
 * SparseDitto builds a specialised GPU kernel for one sparse matrix, one operator
 * (SpMV, SpMM, SpGEMM) and one GPU, validates it against a CPU reference, times it
 * against the best cuSPARSE configuration and caches the winner.
 *
 * Conventions (all functions):
 *   - every function returns an sd_status; none aborts the process;
 *   - after a failure, handle outputs are NULL and struct outputs zeroed, and
 *     sd_last_error() holds a one-line cause (thread-local; "" when none);
 *   - row and entry numbers in messages are 0-based;
 *   - every *_free / *_destroy accepts NULL or zeroed input and leaves it zeroed;
 *   - the caller owns what it passes in; outputs returned through *out are owned by
 *     the caller and released with the matching *_free / *_destroy.
 * Thread safety: functions on distinct objects may be called concurrently; the
 * last-error text is per thread.
 *
 * The names and semantics below are a contract (an external benchmark links against
 * them): they change only by addition.
 */
#ifndef SPARSEDITTO_H
#define SPARSEDITTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define SD_API
#else
#define SD_API __attribute__((visibility("default")))
#endif

#define SD_VERSION_MAJOR 0
#define SD_VERSION_MINOR 1
#define SD_VERSION_PATCH 0

/* ---------------------------------------------------------------- statuses */

typedef enum {
    SD_OK = 0,
    SD_ERR_INVALID_ARG,   /* an argument is NULL, out of range or inconsistent */
    SD_ERR_IO,            /* a file could not be opened, read or written */
    SD_ERR_PARSE,         /* a file's contents are malformed */
    SD_ERR_UNSUPPORTED,   /* valid request that this build or stage cannot serve */
    SD_ERR_OUT_OF_MEMORY, /* host or device allocation failed */
    SD_ERR_NO_DEVICE,     /* no usable CUDA device */
    SD_ERR_CUDA,          /* a CUDA call or a kernel failed */
    SD_ERR_COMPILE,       /* NVRTC rejected generated code */
    SD_ERR_VALIDATION,    /* a result disagreed with the CPU reference */
    SD_ERR_CACHE,         /* the kernel cache is unusable */
    SD_ERR_INTERNAL       /* a bug: please report it with sd_last_error() */
} sd_status;

/* A static string naming s; "unknown status" for values out of range. */
SD_API const char *sd_status_string(sd_status s);
/* Thread-local detail of the last failure on this thread; never NULL ("" if none). */
SD_API const char *sd_last_error(void);
/* "MAJOR.MINOR.PATCH" of the library actually linked. */
SD_API const char *sd_version_string(void);

/* ---------------------------------------------------------------- operators */

typedef enum { SD_OP_SPMV = 0, SD_OP_SPMM = 1, SD_OP_SPGEMM = 2 } sd_op;

/* ---------------------------------------------------------------- host CSR */

/* Host CSR, owned by whoever filled it. FP32 values, int32 column indices, int64 row
 * pointers; columns sorted per row, no duplicates. */
typedef struct {
    int32_t rows, cols;
    int64_t nnz;
    int64_t *rowptr; /* rows + 1 entries */
    int32_t *colind; /* nnz entries; columns sorted per row */
    float *vals;     /* nnz entries */
} sd_csr;

/* Reads a matrix: Matrix Market (.mtx, gzip recognised by its magic bytes) or the
 * binary .sdm format. Symmetric files are expanded, duplicates summed, columns sorted.
 * Pattern files get value 1. Statuses: SD_ERR_IO (cannot open/read), SD_ERR_PARSE
 * (malformed; the message names the 1-based line), SD_ERR_UNSUPPORTED (complex, array),
 * SD_ERR_OUT_OF_MEMORY. On failure *out is zeroed. Thread-safe. */
SD_API sd_status sd_csr_read(const char *path, /* input: file path */
                             sd_csr *out);     /* output: owned by the caller */
/* Writes a as Matrix Market coordinate real general — gzip-compressed when path ends
 * in ".gz" — or as the binary .sdm format when path ends in ".sdm". The file appears
 * atomically: written to a temporary and renamed; a failure leaves no partial file. */
SD_API sd_status sd_csr_write(const char *path, /* input: file path */
                              const sd_csr *a); /* input */
/* Checks the invariants (sizes, monotone rowptr, sorted unique in-range columns,
 * finite values); the message names the first offending row. */
SD_API sd_status sd_csr_check(const sd_csr *a);
/* Frees the arrays of a and zeroes it; accepts NULL and zeroed input. */
SD_API void sd_csr_free(sd_csr *a);
/* out = aᵀ (columns sorted per row by construction), owned by the caller (sd_csr_free).
 * a must satisfy the structural invariants (values are not checked). Thread-safe. */
SD_API sd_status sd_csr_transpose(const sd_csr *a, /* input */
                                  sd_csr *out);    /* output: owned by the caller */
/* 32 lowercase hex digits + NUL: the XXH3-128 hash of a's pattern (rows, cols, rowptr,
 * colind) that keys the kernel cache, or, when with_values is nonzero, of the pattern
 * and the values (two matrices with equal hashes run the same kernel). Thread-safe. */
SD_API sd_status sd_csr_hash(const sd_csr *a,  /* input */
                             int with_values,  /* input: 0 pattern only, 1 pattern + values */
                             char hex[33]);    /* output */

/* ---------------------------------------------------------------- analysis */

#define SD_NUM_FEATURES 36

typedef enum {
    SD_SHAPE_UNIFORM = 0,
    SD_SHAPE_MODERATE,
    SD_SHAPE_SKEWED,
    SD_SHAPE_POWER_LAW,
    SD_SHAPE_BIMODAL
} sd_shape_class;

/* The 36 structural features of DESIGN.md in their canonical order (raw values, not
 * log-scaled), plus the shape class of the row-length distribution. */
typedef struct {
    double values[SD_NUM_FEATURES];
    sd_shape_class shape_class;
    sd_op op;
} sd_features;

/* Computes the 36 features of a for operator op (the ten operator-induced features are
 * 0 except for SD_OP_SPGEMM, where the product is A·A for square A, A·Aᵀ otherwise).
 * a must satisfy sd_csr_check. Thread-safe; uses OpenMP threads. */
SD_API sd_status sd_analyze(const sd_csr *a,      /* input */
                            sd_op op,             /* input */
                            sd_features *out);    /* output */
/* Name of feature i (0 ≤ i < SD_NUM_FEATURES), e.g. "row_cv"; NULL when out of range. */
SD_API const char *sd_feature_name(int i);
/* One-line definition of feature i; NULL when out of range. */
SD_API const char *sd_feature_description(int i);
/* "uniform", "moderate", "skewed", "power-law", "bimodal"; "unknown" out of range. */
SD_API const char *sd_shape_class_name(sd_shape_class c);

/* ---------------------------------------------------------------- inspection */

/* The ranking of op's template vocabulary for a, as `sparseditto rank --json` prints it
 * (less "file"): {"op", "k", "shape_class", "model_path", "ranking": {"model",
 * "templates": [{"label", "energy", "reasons": [...]}]}}. model_path: weights from
 * `sparseditto train`, or NULL for the rule-based ranking. k is K for SD_OP_SPMM
 * (1 ≤ k ≤ 65536) and ignored otherwise. Needs no GPU. *json_out is NUL-terminated
 * text owned by the caller (sd_json_free); NULL after a failure. Thread-safe. */
SD_API sd_status sd_rank(const sd_csr *a,          /* input */
                         sd_op op,                 /* input */
                         int k,                    /* input */
                         const char *model_path,   /* input: NULL = rules */
                         char **json_out);         /* output: owned by the caller */
/* The first-round candidate plans for a (the ranked families' default θ_H), lowered on
 * the host with their static bounds, as `sparseditto plan --json`: {"gpu": {"name",
 * "from_device"}, "plans": [...], "record": {ranking, trials, times by stage}}. gpu: a
 * built-in profile name ("H200", ...), or NULL for device 0 when usable, else the H200
 * profile. branches: families of the first round, 0 = 3. SD_OP_SPGEMM plans C = A·A for
 * square A and A·Aᵀ otherwise. Nothing is compiled or timed. Ownership as sd_rank. */
SD_API sd_status sd_plan(const sd_csr *a,     /* input */
                         sd_op op,            /* input */
                         int k,               /* input */
                         const char *gpu,     /* input: profile name or NULL */
                         int branches,        /* input: 0 = 3 */
                         char **json_out);    /* output: owned by the caller */
/* Frees text returned by sd_rank / sd_plan; accepts NULL. */
SD_API void sd_json_free(char *json);

/* ---------------------------------------------------------------- context */

typedef struct sd_context sd_context;
typedef struct {
    int device;            /* CUDA device ordinal (≥ 0) */
    const char *cache_dir; /* NULL: $SPARSEDITTO_CACHE or $XDG_CACHE_HOME/sparseditto */
    int verbose;           /* 0 quiet, 1 stages, 2 candidates */
} sd_context_options;
SD_API sd_status sd_context_create(const sd_context_options *opts, /* NULL = defaults */
                                   sd_context **out);              /* output */
SD_API void sd_context_destroy(sd_context *ctx);

/* ---------------------------------------------------------------- compile */

typedef struct sd_kernel sd_kernel;
typedef struct {
    int budget;            /* 0 = default budget */
    int use_cache;         /* 1 = read and write the kernel cache */
    int allow_vendor;      /* 1 = cuSPARSE's best variant is a candidate */
    int deterministic;     /* 1 = no floating-point atomics (bitwise reproducible) */
    const char *report_path; /* NULL or a path for a JSON report of the search */
} sd_compile_options;

/* The defaults: default budget, use_cache = 1, allow_vendor = 1, deterministic = 0,
 * report_path = NULL. */
SD_API sd_compile_options sd_compile_options_default(void);
/* Analysis → ranking → synthesis → lowering → validation → measurement → refinement,
 * or a cache hit. k is the dense width for SpMM (1 ≤ k ≤ 65536) and ignored otherwise.
 * SD_OP_SPGEMM compiles C = A·A for square A and C = A·Aᵀ otherwise (as
 * sd_compile_spgemm with b = NULL); run it with sd_spgemm.
 * NULL options mean the defaults; a given struct is taken literally (0 = off) except
 * budget 0, which means the default budget (25 candidates).
 * Statuses: SD_ERR_INVALID_ARG (arguments; a matrix that breaks the CSR invariants,
 * naming the first offending row), SD_ERR_NO_DEVICE / SD_ERR_CUDA (the context),
 * SD_ERR_VALIDATION (no candidate validated and cuSPARSE not allowed),
 * SD_ERR_UNSUPPORTED (K > 65536).
 * Thread-safe: searches are serialised per process (they time the GPU); cache hits
 * run concurrently. The cache is read and written unless use_cache = 0; an unusable
 * cache directory degrades to compiling without it. */
SD_API sd_status sd_compile(sd_context *ctx, const sd_csr *a, sd_op op, int k,
                            const sd_compile_options *opts, sd_kernel **out);
/* General C = A·B: a kernel for the patterns of both operands; run with sd_spgemm.
 * b = NULL or b == a means C = A·A for square A and C = A·Aᵀ otherwise. The kernel
 * keeps copies of both operands; the cache key covers both patterns. Statuses as
 * sd_compile, plus SD_ERR_INVALID_ARG when a->cols != b->rows or B breaks the CSR
 * invariants, and SD_ERR_OUT_OF_MEMORY before any work when C cannot fit the device's
 * memory even at the fewest entries the patterns allow (the message gives the products,
 * C's bounds and the memory); also for sd_compile with SD_OP_SPGEMM. deterministic = 1 admits only plans without floating-point atomics: our
 * thread-per-row plan (rows of at most 32 products) and cuSPARSE's algorithms. */
SD_API sd_status sd_compile_spgemm(sd_context *ctx, const sd_csr *a, const sd_csr *b,
                                   const sd_compile_options *opts, sd_kernel **out);
/* Replaces the values (same pattern, host memory); rejects NaN/Inf. vals_host holds
 * nnz(A) values — for a SpGEMM kernel of a general A·B, nnz(A) values of A followed by
 * nnz(B) values of B. Waits (host) for the kernel's last call, which reads the old values. */
SD_API sd_status sd_kernel_update_values(sd_kernel *kern, const float *vals_host);

/* ---------------------------------------------------------------- execute */

/* Execution on device pointers, asynchronous on the stream (NULL = default stream).
 * sd_spmv and sd_spmm allocate nothing and synchronise nothing (safe in graph capture).
 * Operands must be 16-byte aligned (cudaMalloc's are): SD_ERR_INVALID_ARG otherwise.
 * Calls on one kernel are serialised (the kernel binds the pointers of each call) and run
 * on the device in call order, whatever their streams: a call on a stream other than the
 * previous call's waits there for it (cudaStreamWaitEvent, no host wait), and
 * sd_kernel_update_values and sd_kernel_destroy wait on the host for the last call. A call
 * into a stream being captured neither waits nor is waited for: order the graph's
 * launches with the kernel's other calls yourself. */
SD_API sd_status sd_spmv(sd_kernel *kern, const float *x, float *y, void *stream);
SD_API sd_status sd_spmm(sd_kernel *kern, const float *b, float *c, void *stream); /* row-major */

typedef struct {
    int32_t rows, cols;
    int64_t nnz;
    int64_t *rowptr; /* device memory */
    int32_t *colind; /* device memory */
    float *vals;     /* device memory */
} sd_device_csr;
/* C = A·A or A·Aᵀ (or A·B for sd_compile_spgemm kernels); columns strictly increasing
 * per row, 64-bit row pointers. Allocates c_out's device arrays (stream-ordered, from
 * the device's default memory pool; an empty C has no column or value arrays; the column
 * and value arrays may be allocated at an upper bound of nnz(C), of which the first nnz(C)
 * entries are C's) and waits
 * once on `stream` for nnz(C); the last kernels may still run on `stream` when it
 * returns. c_out is owned by the caller: free it with sd_device_csr_free. Not for graph
 * capture. Statuses: SD_ERR_INVALID_ARG (NULL, a kernel of another operator),
 * SD_ERR_OUT_OF_MEMORY, SD_ERR_CUDA; on failure c_out is zeroed. */
SD_API sd_status sd_spgemm(sd_kernel *kern, sd_device_csr *c_out, void *stream);
/* Waits for the device (cudaDeviceSynchronize: work still queued on C's stream ends
 * first), frees the device arrays and zeroes c. */
SD_API void sd_device_csr_free(sd_device_csr *c);

/* Writes the kernel's plan and timings as JSON into json[cap]; a NULL or too small
 * buffer is SD_ERR_INVALID_ARG and the message names the size needed. */
SD_API sd_status sd_kernel_describe(const sd_kernel *kern, char *json, size_t cap);
SD_API void sd_kernel_destroy(sd_kernel *kern);

#ifdef __cplusplus
}
#endif
#endif /* SPARSEDITTO_H */
