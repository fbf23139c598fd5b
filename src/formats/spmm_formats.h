/* src/formats/spmm_formats.h: SpMM representations built from canonical CSR: PCSR
 * (ParamSpMM), split-row chunk lists, row windows, column-window packing, BSR/blocked-ELL
 * with rectangular blocks (also the tensor-core tiles). Every builder keeps, for each
 * value slot, the CSR entry it came from (src, -1 for padding) so that new values are a
 * gather (sdi_spmm_gather_values), and every format converts back to CSR (round trip). */
#ifndef SDI_SPMM_FORMATS_H
#define SDI_SPMM_FORMATS_H

#include "../core/core.h"

/* Fills dst[s] = vals[src[s]] (0 for src[s] < 0), s < n. */
SDI_HIDDEN void sdi_spmm_gather_values(const int64_t *src, int64_t n, const float *vals,
                                       float *dst);

/* ------------------------------------------------------------------ PCSR
 * ParamSpMM's parameterised CSR. Each row's nonzeros form vectors of V consecutive
 * entries; a row whose length is not a multiple of V is padded with zero-valued entries
 * that repeat the row's last column (the same B row, already in cache). With S on, a
 * row of more than `bound` slots is cut into PCSR rows of at most `bound` slots (a
 * multiple of V); trow[p] is the target row of PCSR row p, stored as -(row + 1) when
 * the row was cut (its PCSR rows add their partials atomically). Every matrix row owns
 * at least one PCSR row, empty rows included, so every output row is written.
 * PR_V = slots / nnz (0 when nnz = 0). */
typedef struct {
    int32_t rows, cols;
    int32_t v, s, bound;
    int64_t nnz;    /* of A */
    int64_t prows;  /* PCSR rows (= rows when S is off) */
    int64_t slots;  /* padded entries */
    int64_t *rowptr; /* prows + 1 slot offsets, each a multiple of V */
    int32_t *colidx; /* slots */
    float *val;      /* slots */
    int64_t *src;    /* slots: CSR entry or -1 (padding) */
    int32_t *trow;   /* prows (NULL when S is off: PCSR row p is row p) */
    int32_t nsplit;  /* rows cut into several PCSR rows */
    int32_t *split_rows; /* nsplit rows (their C rows are zeroed before the atomics) */
} sdi_pcsr;

/* v ∈ {1, 2}; s ∈ {0, 1}; bound ≥ v and a multiple of v when s = 1 (ignored otherwise). */
SDI_HIDDEN sd_status sdi_pcsr_build(const sd_csr *a, int v, int s, int bound, sdi_pcsr *out);
SDI_HIDDEN void sdi_pcsr_free(sdi_pcsr *p);
/* Back to canonical CSR: PCSR rows concatenated per target row, padding dropped
 * (a padding slot repeats the column before it, which a real entry never does). */
SDI_HIDDEN sd_status sdi_pcsr_to_csr(const sdi_pcsr *p, sd_csr *out);
/* PR_V from row lengths alone (no build): Σ ⌈r_i / V⌉·V / nnz. */
SDI_HIDDEN double sdi_pcsr_padding_ratio(const sd_csr *a, int v);
/* Balancing features of a PCSR build: PCSR rows per row, max/mean slots per PCSR row. */
typedef struct {
    double pr;            /* slots / nnz */
    double prow_per_row;  /* prows / rows */
    double slots_mean, slots_max, slots_cv; /* over PCSR rows */
    int32_t nsplit;
} sdi_pcsr_features;
SDI_HIDDEN void sdi_pcsr_describe(const sdi_pcsr *p, sdi_pcsr_features *out);

/* ------------------------------------------------------------------ split rows
 * Rows with more than `threshold` nonzeros are cut into chunks of `chunk` nonzeros.
 * Atomic mode lists the chunks after the first of each long row (the first is done by
 * the row-wise pass with its length capped at `chunk`); fixup mode lists every chunk of
 * every long row, with long_first giving each long row's first chunk. */
#define SDI_SPMM_SPLIT_ATOMIC 0 /* = SDI_SPLIT_ATOMIC of plan/spmm.h */
#define SDI_SPMM_SPLIT_FIXUP 1  /* = SDI_SPLIT_FIXUP */
typedef struct {
    int32_t threshold, chunk, mode;
    int32_t nlong;        /* rows longer than threshold */
    int32_t *long_row;    /* nlong */
    int64_t *long_first;  /* nlong + 1 (fixup mode; NULL in atomic mode) */
    int64_t nchunks;
    int32_t *chunk_row;   /* nchunks: target row */
    int32_t *chunk_long;  /* nchunks: index into long_row (fixup mode; NULL otherwise) */
    int64_t *chunk_start; /* nchunks: first CSR entry; the chunk ends at min(start + chunk, row end) */
} sdi_spmm_split;

SDI_HIDDEN sd_status sdi_spmm_split_build(const sd_csr *a, int threshold, int chunk, int mode,
                                          sdi_spmm_split *out);
SDI_HIDDEN void sdi_spmm_split_free(sdi_spmm_split *s);
/* Round trip: the CSR entries the split program visits (row-wise pass + chunks), each
 * exactly once, as CSR; a gap or a doubled entry is SD_ERR_INTERNAL. */
SDI_HIDDEN sd_status sdi_spmm_split_to_csr(const sd_csr *a, const sdi_spmm_split *s,
                                           sd_csr *out);

/* ------------------------------------------------------------------ row windows
 * Consecutive rows grouped so that a window holds at most max_rows rows and at most
 * cap nonzeros, except a single row longer than cap, which is a window by itself (its
 * entries are staged in rounds). win_ptr[w] is the first row of window w. */
typedef struct {
    int32_t max_rows, cap;
    int32_t nwin;
    int32_t *win_ptr; /* nwin + 1 */
    int32_t rows_max; /* most rows in one window */
} sdi_spmm_windows;

SDI_HIDDEN sd_status sdi_spmm_windows_build(const sd_csr *a, int max_rows, int cap,
                                            sdi_spmm_windows *out);
SDI_HIDDEN void sdi_spmm_windows_free(sdi_spmm_windows *w);

/* ------------------------------------------------------------------ column windows
 * Sextans-style packing: rows in panels of panel_rows; inside a panel the entries are
 * regrouped by column window (width columns), each non-empty (panel, window) pair a
 * segment with its own row offsets (panel_rows + 1, relative to the segment start). */
typedef struct {
    int32_t rows, cols, panel_rows, width;
    int32_t npanels;
    int64_t nnz, nseg;
    int64_t *panel_seg;  /* npanels + 1 */
    int32_t *seg_col0;   /* nseg: first column of the window */
    int64_t *seg_start;  /* nseg + 1: first packed entry */
    int32_t *seg_rowoff; /* nseg·(panel_rows + 1): offsets relative to seg_start */
    int32_t *colidx;     /* nnz */
    float *val;          /* nnz */
    int64_t *src;        /* nnz */
} sdi_spmm_colwin;

SDI_HIDDEN sd_status sdi_spmm_colwin_build(const sd_csr *a, int panel_rows, int width,
                                           sdi_spmm_colwin *out);
SDI_HIDDEN void sdi_spmm_colwin_free(sdi_spmm_colwin *c);
SDI_HIDDEN sd_status sdi_spmm_colwin_to_csr(const sdi_spmm_colwin *c, sd_csr *out);
/* Segments and mean entries per segment without building (for legality). */
SDI_HIDDEN sd_status sdi_spmm_colwin_count(const sd_csr *a, int panel_rows, int width,
                                           int64_t *nseg);

/* ------------------------------------------------------------------ blocks
 * BSR with bm × bn blocks (square for bsr(b), 16 × 8 or 8 × 8 for the tensor-core
 * tiles) and blocked-ELL (every block row padded to ell_width blocks; padding blocks
 * have column -1). Block values are stored column-major inside a block (the bm values
 * of one column of the block are contiguous) unless tc_layout is set, which stores a
 * bm × 8 tile (bm ∈ {8, 16}) in lane order of the mma.sync m16n8k8 fragments (see
 * sdi_spmm_tc_slot_rows and spmm_bsr_tc.cuh). Rows and columns beyond the matrix inside
 * edge blocks are zero (src -1). tc_layout SDI_BLOCKS_ELL_ROWS (blocked-ELL, bm = bn)
 * stores the values as cuSPARSE's Blocked-ELL does: brows·bm rows of ell·bn values,
 * row-major (row i, block slot j, column c of the block at (i·ell + j)·bn + c). */
enum { SDI_BLOCKS_COLMAJOR = 0, SDI_BLOCKS_TC = 1, SDI_BLOCKS_ELL_ROWS = 2 };
typedef struct {
    int32_t rows, cols, bm, bn;
    int32_t brows, bcols;
    int32_t ell;          /* 0: BSR; > 0: blocked-ELL width (blocks per block row) */
    int32_t tc_layout;    /* SDI_BLOCKS_* */
    int64_t nnz, nblocks; /* stored blocks, padding included for blocked-ELL */
    int64_t *browptr;     /* brows + 1 (BSR; NULL for blocked-ELL) */
    int32_t *bcolidx;     /* nblocks (-1: padding block) */
    float *val;           /* nblocks·bm·bn */
    int64_t *src;         /* nblocks·bm·bn */
} sdi_spmm_blocks;

SDI_HIDDEN sd_status sdi_spmm_blocks_build(const sd_csr *a, int bm, int bn, int ell,
                                           int tc_layout, sdi_spmm_blocks *out);
SDI_HIDDEN void sdi_spmm_blocks_free(sdi_spmm_blocks *b);
/* Back to CSR: the pattern is the set of slots with src ≥ 0 (explicit zeros kept). */
SDI_HIDDEN sd_status sdi_spmm_blocks_to_csr(const sdi_spmm_blocks *b, sd_csr *out);
/* Occupied blocks and the widest block row without building. */
SDI_HIDDEN sd_status sdi_spmm_blocks_count(const sd_csr *a, int bm, int bn, int64_t *nblocks,
                                           int64_t *max_per_brow);
/* Slot (row, col) of the mma A fragment for element e ∈ [0, 128) of a 16×8 tile. */
SDI_HIDDEN void sdi_spmm_tc_slot(int e, int *r, int *c);
/* Slot (row, col) of element e ∈ [0, bm·8) of a bm × 8 tile, bm ∈ {8, 16}: lane e / (bm/4)
 * holds rows g + 8h (h < bm/8) at columns t and t + 4 (g = lane / 4, t = lane % 4), row
 * halves first. For bm = 16 this is sdi_spmm_tc_slot's A-fragment order; for each
 * 8-row half it is also the B-fragment order of the transposed product (C^T = B^T A^T). */
SDI_HIDDEN void sdi_spmm_tc_slot_rows(int bm, int e, int *r, int *c);

#endif /* SDI_SPMM_FORMATS_H */
