/* src/runtime/cs_format.h: A on the device in a cuSPARSE format and its sparse descriptor,
 * the table of SpMV / SpMM variants, and cuSPARSE's SpGEMM call sequence with its
 * algorithms: one builder per format (the host layouts are src/formats' builders,
 * formats/cs_layout.h), used by the baseline (src/vendor) and by the executors
 * (vendor_exec.c, vendor_spgemm.c), so that an executor runs exactly what the baseline
 * timed. */
#ifndef SDI_CS_FORMAT_H
#define SDI_CS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cusparse.h>

#include <cuda_runtime_api.h>

#include "../core/sdi.h"

typedef enum { SDI_CS_CSR, SDI_CS_COO, SDI_CS_SELL, SDI_CS_BELL } sdi_cs_format;

#define SDI_CS_SELL_SLICE 32 /* the Sliced-ELL slice height of variant sell32 */

/* One SpMV / SpMM variant: its name (in cache entries, reports and benchmarks), format,
 * Blocked-ELL block size, cuSPARSE algorithm and whether it is preprocessed. */
typedef struct {
    const char *name;
    sdi_cs_format fmt;
    int bs;
    int alg;
    bool preprocess;
} sdi_cs_variant;

/* The variants of op (SD_OP_SPMV or SD_OP_SPMM) in the baseline's order; *n = 0 and NULL
 * for another op. */
SDI_HIDDEN const sdi_cs_variant *sdi_cs_variants(sd_op op, int *n);
/* The variant of op named `name`, or NULL. */
SDI_HIDDEN const sdi_cs_variant *sdi_cs_variant_find(sd_op op, const char *name);

/* What every builder's caller checks first: the context (sdi_ctx_enter), A's structure, and
 * nnz within 32-bit indices (SD_ERR_UNSUPPORTED, naming `who`). */
SDI_HIDDEN sd_status sdi_cs_check_input(sd_context *ctx, const sd_csr *a, const char *who);

/* A on the device with 32-bit indices. An empty A still gets one-element arrays (cuSPARSE
 * rejects NULL arrays). */
typedef struct {
    int64_t rows, cols, nnz;   /* A's */
    int64_t rows_eff, cols_eff; /* the descriptor's shape (Blocked-ELL: padded to the block) */
    int64_t ell_cols;           /* Blocked-ELL: value columns per row */
    int bs;                     /* Blocked-ELL block size */
    int32_t *d_rowptr;          /* CSR row offsets; SELL slice offsets */
    int32_t *d_rowind;          /* COO row indices */
    int32_t *d_colind;          /* columns; SELL padded columns; Blocked-ELL block columns */
    float *d_vals;              /* nvals floats in the format's layout */
    int64_t nvals;
    int64_t *slot;              /* host, nnz: where entry e lives in d_vals (NULL: at e) */
    size_t bytes;               /* device bytes held */
} sdi_cs_matrix;

/* CSR (row offsets) and / or COO (row indices) arrays of a, sharing columns and values
 * (values in CSR order). `what` names a in messages ("A", "B"). */
SDI_HIDDEN sd_status sdi_cs_build_csr(sd_context *ctx, const sd_csr *a, bool csr, bool coo,
                                      const char *what, sdi_cs_matrix *out);
/* Sliced ELL (slices of SDI_CS_SELL_SLICE rows, layout.h) within 32-bit offsets and half of
 * the free device memory, and Blocked-ELL with bs×bs blocks (layout.h) within 40 % of it,
 * the slot limit and, when max_padding_ratio > 0, that many value slots per entry of A.
 * Beyond a limit nothing is built, the status is SD_OK and skip (cap bytes) says why;
 * otherwise skip is "". want_slot keeps each entry's slot (value updates). */
SDI_HIDDEN sd_status sdi_cs_build_sell(sd_context *ctx, const sd_csr *a, bool want_slot,
                                       sdi_cs_matrix *out, char *skip, size_t cap);
SDI_HIDDEN sd_status sdi_cs_build_bell(sd_context *ctx, const sd_csr *a, int bs,
                                       int max_padding_ratio, bool want_slot, sdi_cs_matrix *out,
                                       char *skip, size_t cap);
/* The format of variant def (fmt, bs): one of the three builders above. */
SDI_HIDDEN sd_status sdi_cs_build(sd_context *ctx, const sd_csr *a, const sdi_cs_variant *def,
                                  int max_padding_ratio, bool want_slot, sdi_cs_matrix *out,
                                  char *skip, size_t cap);
/* The sparse descriptor of m in format fmt (CSR or COO over sdi_cs_build_csr's arrays,
 * SELL or Blocked-ELL over their builders'); *call names the cuSPARSE call for messages.
 * On failure *A is NULL. */
SDI_HIDDEN cusparseStatus_t sdi_cs_descr(const sdi_cs_matrix *m, sdi_cs_format fmt,
                                         cusparseSpMatDescr_t *A, const char **call);
/* Frees the device arrays and the slots; accepts a zeroed matrix and leaves one. */
SDI_HIDDEN void sdi_cs_matrix_free(sdi_cs_matrix *m);

/* The context's cuSPARSE handle (created on first use), bound to ctx->stream; released
 * when the context closes (sdi_cusparse_release). */
SDI_HIDDEN sd_status sdi_cusparse_handle(sd_context *ctx, cusparseHandle_t *out);
SDI_HIDDEN void sdi_cusparse_release(sd_context *ctx);

/* A cuSPARSE call failed: remember it for classification and return a status naming it. */
typedef struct {
    cusparseStatus_t status;
    char call[64];
} sdi_cs_error;
SDI_HIDDEN sd_status sdi_cs_fail(sdi_cs_error *e, const char *call, cusparseStatus_t st);

/* ------------------------------------------------------------------ SpGEMM
 * One algorithm: its name (spgemm_alg1, …), cuSPARSE's enum and, for ALG2 / ALG3, the
 * chunk_fraction of cusparseSpGEMM_estimateMemory. */
typedef struct {
    const char *name;
    cusparseSpGEMMAlg_t alg;
    float chunk;
} sdi_cs_spgemm_def;
/* The algorithms in the baseline's order. */
SDI_HIDDEN const sdi_cs_spgemm_def *sdi_cs_spgemm_defs(int *n);

/* One product's state: the handle, the operands' descriptors, C's 32-bit arrays and the
 * buffers (grown, never shrunk, kept between calls). */
typedef struct {
    cusparseHandle_t h;
    cusparseSpGEMMAlg_t alg;
    float chunk;
    cusparseSpMatDescr_t A, B;
    int32_t rows, cols_b;
    int32_t *d_crow; /* rows + 1, allocated by the caller once */
    int32_t *d_ccol;
    float *d_cval;
    int64_t c_cap; /* entries allocated in d_ccol / d_cval */
    void *buf[4];  /* buffers 1..3 (index 0 unused) */
    size_t cap[4];
    int64_t nnz_c;
    sdi_cs_error err;
} sdi_cs_spgemm;

/* One SpGEMM from scratch (an sdi_exec_fn over p = sdi_cs_spgemm *): C's structure and
 * values from A and B on the device; the handle is bound to its stream by the caller. */
SDI_HIDDEN sd_status sdi_cs_spgemm_exec(sd_context *ctx, void *p, cudaStream_t stream);
/* Frees C's arrays and the buffers (not the handle or the descriptors). */
SDI_HIDDEN void sdi_cs_spgemm_free(sdi_cs_spgemm *g);

#endif /* SDI_CS_FORMAT_H */
