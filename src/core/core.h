/* src/core/core.h: host CSR helpers, the COO staging buffer, JSON writer and pattern
 * hashing (the core room's internal interface). */
#ifndef SDI_CORE_H
#define SDI_CORE_H

#include <stdbool.h>
#include <stdio.h>

#include "sdi.h"

/* ------------------------------------------------------------------ CSR */
/* Allocates a's arrays for the given sizes (rowptr zeroed); a is zeroed on failure. */
SDI_HIDDEN sd_status sdi_csr_alloc(sd_csr *a, int32_t rows, int32_t cols, int64_t nnz);
SDI_HIDDEN sd_status sdi_csr_copy(const sd_csr *a, sd_csr *out);
/* out = aᵀ (sorted columns by construction). */
SDI_HIDDEN sd_status sdi_csr_transpose(const sd_csr *a, sd_csr *out);
/* Same sizes and pattern (rowptr, colind); values not compared. */
SDI_HIDDEN bool sdi_csr_same_pattern(const sd_csr *a, const sd_csr *b);
/* Checks only the structure (no value scan). */
SDI_HIDDEN sd_status sdi_csr_check_structure(const sd_csr *a);

/* The block census of 16-row block row br (rows 16·br … 16·br + 15, fewer at the end): the
 * occupied b×b blocks for b = 2, 4, 8, 16 (b-row blocks aligned to row 0, as BSR(b) builds
 * them) and the 16×16 tiles holding at least dense_min entries. Columns must be sorted per
 * row (the CSR invariant). */
typedef struct {
    int64_t occ[5];      /* occ[lb]: occupied (2^lb)×(2^lb) blocks, lb = 1 … 4; occ[0] = entries */
    int64_t dense_tiles; /* 16×16 tiles with ≥ dense_min entries */
    int64_t dense_nnz;   /* the entries in those tiles */
} sdi_block_census;
SDI_HIDDEN void sdi_csr_block_census(const sd_csr *a, int64_t br, int64_t dense_min,
                                     sdi_block_census *out);

/* Sorts v[0, n) ascending (introsort, inlined comparisons; duplicates allowed). */
SDI_HIDDEN void sdi_sort_i32(int32_t *v, int64_t n);

/* ------------------------------------------------------------------ COO staging
 * Triplets gathered in any order (a reader, a generator), turned into canonical CSR:
 * rows sorted, columns sorted within rows, duplicates summed (explicit zeros kept). */
typedef struct {
    int32_t rows, cols;
    int64_t nnz, cap;
    int32_t *ri, *ci;
    float *v;
} sdi_coo;

SDI_HIDDEN sd_status sdi_coo_init(sdi_coo *c, int32_t rows, int32_t cols, int64_t cap_hint);
/* Appends one triplet (grows geometrically); indices must be in range (not checked). */
SDI_HIDDEN sd_status sdi_coo_push(sdi_coo *c, int32_t i, int32_t j, float v);
SDI_HIDDEN void sdi_coo_free(sdi_coo *c);
/* Canonical CSR from c (c is left intact). *n_duplicates receives the number of
 * entries merged into an earlier one (may be NULL). Summation in double, in input order. */
SDI_HIDDEN sd_status sdi_coo_to_csr(const sdi_coo *c, sd_csr *out, int64_t *n_duplicates);

/* ------------------------------------------------------------------ JSON writer
 * Appends to a growing buffer; commas and nesting handled by the writer. A failed
 * allocation latches an error flag reported by sdi_json_finish. */
typedef struct {
    char *buf;
    size_t len, cap;
    int depth;
    bool need_comma[64];
    bool after_key;
    bool failed;
    int indent; /* 0 compact, > 0 spaces per level */
} sdi_json;

SDI_HIDDEN void sdi_json_init(sdi_json *j, int indent);
SDI_HIDDEN void sdi_json_begin_object(sdi_json *j);
SDI_HIDDEN void sdi_json_end_object(sdi_json *j);
SDI_HIDDEN void sdi_json_begin_array(sdi_json *j);
SDI_HIDDEN void sdi_json_end_array(sdi_json *j);
SDI_HIDDEN void sdi_json_key(sdi_json *j, const char *key);
SDI_HIDDEN void sdi_json_string(sdi_json *j, const char *s);
SDI_HIDDEN void sdi_json_number(sdi_json *j, double v); /* NaN/Inf → null */
SDI_HIDDEN void sdi_json_int(sdi_json *j, long long v);
SDI_HIDDEN void sdi_json_bool(sdi_json *j, bool v);
SDI_HIDDEN void sdi_json_null(sdi_json *j);
/* Inserts pre-formatted JSON text as one value. */
SDI_HIDDEN void sdi_json_raw(sdi_json *j, const char *text);
/* Returns SD_OK and leaves the NUL-terminated text in j->buf (owned by j). */
SDI_HIDDEN sd_status sdi_json_finish(sdi_json *j);
/* Finishes and hands the text to *out (the caller's, sdi_free), releasing the writer
 * either way; *out is NULL on failure. */
SDI_HIDDEN sd_status sdi_json_take(sdi_json *j, char **out);
SDI_HIDDEN void sdi_json_free(sdi_json *j);

/* ------------------------------------------------------------------ hashing */
typedef struct {
    uint64_t lo, hi;
} sdi_hash128;

/* XXH3-128 over (rows, cols, rowptr, colind): the pattern, never the values. */
SDI_HIDDEN sdi_hash128 sdi_pattern_hash(const sd_csr *a);
SDI_HIDDEN sdi_hash128 sdi_hash_bytes(const void *data, size_t len, uint64_t seed);
/* 32 lowercase hex digits + NUL. */
SDI_HIDDEN void sdi_hash_hex(sdi_hash128 h, char out[33]);

#endif /* SDI_CORE_H */
