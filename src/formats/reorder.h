/* src/formats/reorder.h: graph reordering as a representation choice: a community-based
 * order (Rabbit-order style), reverse Cuthill-McKee and degree sort; applying a
 * permutation to a CSR; permutation files. */
#ifndef SDI_REORDER_H
#define SDI_REORDER_H

#include <stdbool.h>

#include "../core/core.h"

typedef enum {
    SDI_REORDER_RABBIT = 0, /* incremental community aggregation, dendrogram DFS order */
    SDI_REORDER_RCM = 1,    /* reverse Cuthill-McKee from pseudo-peripheral vertices */
    SDI_REORDER_DEGREE = 2, /* rows by decreasing length (stable) */
    SDI_REORDER_NMETHODS
} sdi_reorder_method;

/* "rabbit", "rcm", "degree"; NULL when out of range. */
SDI_HIDDEN const char *sdi_reorder_method_name(int m);
/* Method by name; -1 when unknown. */
SDI_HIDDEN int sdi_reorder_method_from_name(const char *name);

/* Computes a permutation for a, perm[new] = old.
 * Square a: a symmetric permutation computed on the pattern of A + Aᵀ (diagonal
 *   ignored); *perm_cols receives a copy of *perm_rows.
 * Rectangular a: rows only (*perm_cols = NULL, columns keep their order); degree sorts
 *   row lengths, rcm and rabbit work on the bipartite graph of rows and columns and keep
 *   the rows in the order their vertices received.
 * Only the pattern is used. perm_cols may be NULL when the caller wants rows only. */
SDI_HIDDEN sd_status sdi_reorder(const sd_csr *a, int method, int32_t **perm_rows,
                                 int32_t **perm_cols);

/* out(i, j) = a(perm_rows[i], perm_cols[j]) with perm[new] = old; NULL = identity.
 * out is canonical CSR (columns sorted per row). Permutations are checked. */
SDI_HIDDEN sd_status sdi_csr_permute(const sd_csr *a, const int32_t *perm_rows,
                                     const int32_t *perm_cols, sd_csr *out);

/* SD_OK when p is a permutation of 0..n-1; the message names the first bad index. */
SDI_HIDDEN sd_status sdi_perm_check(const int32_t *p, int32_t n);
SDI_HIDDEN sd_status sdi_perm_invert(const int32_t *p, int32_t n, int32_t **inv);

/* Text file, one 0-based index per line (an output file as core/io.h writes them). */
SDI_HIDDEN sd_status sdi_perm_write(const char *path, const int32_t *p, int32_t n);
/* Reads such a file; *n receives the count. Errors name the 1-based line. */
SDI_HIDDEN sd_status sdi_perm_read(const char *path, int32_t **p, int32_t *n);

#endif /* SDI_REORDER_H */
