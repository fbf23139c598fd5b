/* src/formats/formats.h: SpMV format builders. Each builder turns a canonical host CSR
 * into flat device-ready arrays listed in a descriptor (name, element size, count, role),
 * so that lowering uploads them by name and the planner computes M_rep = value bytes +
 * metadata bytes; each format converts back to CSR (round-trip tests). */
#ifndef SDI_FORMATS_H
#define SDI_FORMATS_H

#include "../core/core.h"

#define SDI_FMT_MAX_ARRAYS 10
#define SDI_FMT_NAME 16

/* What an array holds: metadata (indices, descriptors), matrix values (replaced when the
 * values change), device-only workspace (no host data; zero on the device), or host-only
 * bookkeeping that is never uploaded (which padded slots are real: round trips). */
typedef enum {
    SDI_ROLE_META = 0,
    SDI_ROLE_VALUE = 1,
    SDI_ROLE_WORKSPACE = 2,
    SDI_ROLE_HOST = 3
} sdi_fmt_role;

typedef struct {
    char name[SDI_FMT_NAME]; /* the buffer name lowering binds, e.g. "colind" */
    void *data;              /* host elements; NULL for workspace */
    int64_t count;           /* elements on the device (padding included) */
    int64_t host_count;      /* elements present in data (≤ count); the rest is zero */
    int32_t elem_size;       /* bytes per element */
    int32_t role;            /* sdi_fmt_role */
    int32_t owned;           /* data belongs to the format (else borrowed from the CSR) */
} sdi_fmt_array;

typedef enum {
    SDI_FMT_CSR = 0,  /* rowptr (64- or 32-bit), colind (int32 or 16-bit deltas), vals */
    SDI_FMT_ROWBLOCKS, /* CSR + CSR-Adaptive row blocks (short / medium / long rows) */
    SDI_FMT_MERGE,    /* CSR + merge-path tile coordinates + carry workspace */
    SDI_FMT_COO,      /* row-major COO: rowind, colind, vals */
    SDI_FMT_ELL,      /* column-major ELL */
    SDI_FMT_SELL,     /* SELL-C-σ, column-major slices, row permutation */
    SDI_FMT_BSR,      /* b×b blocks, row-major inside a block */
    SDI_FMT_TILES16,  /* 16×16 tiles, each dense, CSR or COO inside */
    SDI_FMT_DIA,      /* diagonals, column-major by diagonal */
    SDI_FMT_NKINDS
} sdi_fmt_kind;

/* A built format. Fields that a kind does not use are 0. Arrays marked borrowed point
 * into the sd_csr the format was built from, which must outlive the format. */
typedef struct {
    int32_t kind;
    int32_t rows, cols;
    int64_t nnz;
    int64_t slots; /* value slots stored, padding included (nnz for unpadded kinds) */
    /* CSR-based kinds */
    int32_t rp32;        /* row pointers stored as 32-bit */
    int32_t colc;        /* 1: 16-bit column deltas against colbase[row >> colc_shift] */
    int32_t colc_shift;  /* log2 of the rows sharing one column base */
    /* row blocks (CSR-Adaptive) */
    int32_t rb_cap;      /* nonzeros a stream block holds at most */
    int32_t rb_piece;    /* nonzeros per piece of a long row */
    int32_t rb_max_rows; /* rows a stream block holds at most */
    int64_t rb_items, rb_long, rb_pieces;
    /* merge path */
    int32_t mp_tile;          /* merge items (row ends + nonzeros) per tile */
    int32_t mp_tiles_per_cta; /* consecutive tiles one CTA consumes */
    int64_t mp_tiles, mp_ctas;
    /* ELL / SELL */
    int32_t sell_c, sell_sigma;
    int64_t ell_width, ell_ld; /* ELL: slots per row, leading dimension (rows padded) */
    int64_t sell_slices;
    int32_t sell_permuted; /* perm array present (σ > 1) */
    /* BSR */
    int32_t bsr_b;
    int64_t bsr_brows, bsr_bcols, bsr_blocks;
    /* tiles16 */
    int32_t t_dense_min; /* a tile with at least this many nonzeros is stored dense */
    int32_t t_coo_max;   /* a tile with at most this many is stored COO (else CSR) */
    int64_t t_rows, t_tiles, t_dense, t_csr, t_coo;
    /* DIA */
    int32_t dia_ndiag;
    int64_t dia_ld;
    int n_arrays;
    sdi_fmt_array arr[SDI_FMT_MAX_ARRAYS];
} sdi_devfmt;

/* ------------------------------------------------------------------ descriptor */
SDI_HIDDEN const char *sdi_fmt_kind_name(int kind);
/* Index of the named array, -1 when absent. */
SDI_HIDDEN int sdi_format_find(const sdi_devfmt *f, const char *name);
SDI_HIDDEN const sdi_fmt_array *sdi_format_array(const sdi_devfmt *f, const char *name);
/* Device bytes of the arrays with the given role (M_value, M_meta, workspace). */
SDI_HIDDEN int64_t sdi_format_bytes(const sdi_devfmt *f, sdi_fmt_role role);
/* Frees owned arrays and zeroes f; accepts NULL and zeroed input. */
SDI_HIDDEN void sdi_format_free(sdi_devfmt *f);
/* Writes {"kind":…, "arrays":[{name, elem, count, role}], parameters…} into j. */
SDI_HIDDEN void sdi_format_json(const sdi_devfmt *f, sdi_json *j);
/* Converts back to a canonical CSR (padding dropped, permutation undone): the round trip
 * of every builder. Explicit zeros of the original are kept for the kinds that store
 * them by position (all kinds here). */
SDI_HIDDEN sd_status sdi_format_to_csr(const sdi_devfmt *f, sd_csr *out);
/* Rebuilds the value arrays of f from a's values (same pattern as f was built from):
 * owned value arrays are refilled in place, borrowed ones re-pointed at a->vals. */
SDI_HIDDEN sd_status sdi_format_refresh_values(sdi_devfmt *f, const sd_csr *a);

/* ------------------------------------------------------------------ builders
 * On failure *out is zeroed. SD_ERR_UNSUPPORTED names the limit that a format would
 * break (padding beyond max_fill × nnz, 32-bit offsets overflowing, a column window
 * wider than 16 bits); SD_ERR_OUT_OF_MEMORY names the array. max_fill ≤ 0 means the
 * default limit SDI_FMT_DEFAULT_FILL. Sizes are overflow-checked. */
#define SDI_FMT_DEFAULT_FILL 8.0
/* Padding a builder always tolerates on top of the ratio (small matrices). */
#define SDI_FMT_FILL_SLACK 4096

/* Index options shared by the CSR-based kinds: 32-bit row pointers (needs nnz < 2^31)
 * and 16-bit column deltas: colbase[g] = smallest column of the rows g·2^shift …
 * (g+1)·2^shift − 1, every column of those rows within colbase + [0, 65535]. */
typedef struct {
    int rp32;
    int colc;
    int colc_shift;
} sdi_csr_opts;

/* CSR: rowptr (int64 or int32), colind (int32, or uint16 deltas + colbase int32), vals.
 * colind/vals are padded to a multiple of 8 elements on the device, so 16-byte vector
 * loads never leave the buffer. Unpadded int32/int64 arrays are borrowed from a. */
SDI_HIDDEN sd_status sdi_fmt_csr(const sd_csr *a, const sdi_csr_opts *o, sdi_devfmt *out);
/* Whether the 16-bit column deltas fit for a group shift (no allocation). */
SDI_HIDDEN int sdi_fmt_colc_fits(const sd_csr *a, int colc_shift);

/* CSR-Adaptive row blocks over CSR: consecutive rows grouped into stream blocks of at
 * most `cap` nonzeros and `max_rows` rows; a row longer than cap becomes a long row cut
 * into pieces of `piece` nonzeros. Arrays: the CSR arrays, items (int32×4 per item:
 * {first row, rows (0 for a long-row piece), piece index, long-row id}), lrbase
 * (n_long + 1 offsets into the pieces), workspace lrpart (float per piece) and lrcount
 * (int32 per long row, zero between launches). */
SDI_HIDDEN sd_status sdi_fmt_rowblocks(const sd_csr *a, const sdi_csr_opts *o, int cap,
                                       int max_rows, int piece, sdi_devfmt *out);

/* Merge-path tiles over CSR: the merge of the row ends and the nonzeros cut into tiles
 * of `tile` items; tile k starts at (tilerow[k], tilenz[k]) (tiles + 1 entries); CTA c
 * consumes tiles c·tiles_per_cta … Arrays: the CSR arrays, tilerow (int32), tilenz
 * (int64), workspace carry_row (int32 per CTA), carry_val (float per CTA), counter. */
SDI_HIDDEN sd_status sdi_fmt_merge(const sd_csr *a, const sdi_csr_opts *o, int tile,
                                   int tiles_per_cta, sdi_devfmt *out);
/* The merge-path coordinate of diagonal d: (*row, *nz) with row + nz = d, every row end
 * ≤ nz consumed before nonzero nz. */
SDI_HIDDEN void sdi_merge_path_search(const sd_csr *a, int64_t d, int32_t *row, int64_t *nz);

/* Row-major COO (rowind, colind, vals). */
SDI_HIDDEN sd_status sdi_fmt_coo(const sd_csr *a, sdi_devfmt *out);
/* The row of every CSR entry (nnz int32; at least one allocated, caller frees); NULL when
 * host memory runs out. */
SDI_HIDDEN int32_t *sdi_fmt_row_indices(const sd_csr *a);

/* Column-major ELL: width = longest row, ld = rows rounded up to 32; padding slots have
 * value 0 and the row's last column (0 for an empty row). */
SDI_HIDDEN sd_status sdi_fmt_ell(const sd_csr *a, double max_fill, sdi_devfmt *out);

/* SELL-C-σ: rows sorted by length (descending, stable) inside windows of σ rows
 * (σ = 1: no sorting, no perm array; σ is rounded up to a multiple of C), cut into
 * slices of C rows stored column-major; sliceptr (int64, slices + 1, in slots), colind,
 * vals, perm (int32, sorted position → row). C ∈ {2, 4, …, 1024} (power of two). */
SDI_HIDDEN sd_status sdi_fmt_sell(const sd_csr *a, int c, int sigma, double max_fill,
                                  sdi_devfmt *out);
/* The same with options, for the cuSPARSE layout (formats/cs_layout.h): padding column −1
 * instead of the row's last column, 32-bit slice offsets (SD_ERR_UNSUPPORTED beyond), and a
 * host array "slot" (int64, nnz: the slot of each CSR entry). NULL = sdi_fmt_sell. */
typedef struct {
    int pad_minus1;
    int ptr32;
    int slot_map;
} sdi_sell_opts;
SDI_HIDDEN sd_status sdi_fmt_sell_ex(const sd_csr *a, int c, int sigma, double max_fill,
                                     const sdi_sell_opts *o, sdi_devfmt *out);
/* The slots of SELL-c-1 (no sorting) without building it (limits). */
SDI_HIDDEN int64_t sdi_fmt_sell_slots(const sd_csr *a, int c);

/* BSR with b×b blocks (b ∈ {2, 4, 8, 16}), row-major inside a block: browptr (int32),
 * bcolind (int32), bvals (float, b² per block). Partial edge blocks are padded. */
SDI_HIDDEN sd_status sdi_fmt_bsr(const sd_csr *a, int b, double max_fill, sdi_devfmt *out);

/* Adaptive 16×16 tiles (CB-SpMV style): tiles of a tile row in column order; a tile
 * with ≥ dense_min nonzeros is dense (256 values), one with ≤ coo_max is COO (one byte
 * (r << 4 | c) per entry), others CSR (16 byte row starts, one byte column per entry).
 * Arrays: trowptr (int32, tile rows + 1), tdesc (int32×4 per tile: {tile column,
 * type << 16 | nnz, value offset, index byte offset}), tidx (uint8), tvals (float). */
enum { SDI_TILE_DENSE = 0, SDI_TILE_CSR = 1, SDI_TILE_COO = 2 };
SDI_HIDDEN sd_status sdi_fmt_tiles16(const sd_csr *a, int dense_min, int coo_max,
                                     double max_fill, sdi_devfmt *out);

/* DIA: offsets (int32, ascending, column − row) and vals (float, ndiag × ld, diagonal d
 * of row r at d·ld + r; ld = rows rounded up to 32). */
SDI_HIDDEN sd_status sdi_fmt_dia(const sd_csr *a, double max_fill, int max_diags,
                                 sdi_devfmt *out);

/* ------------------------------------------------------------------ helpers for builders */
/* Appends an array to f (fails with SD_ERR_INTERNAL when the table is full). */
SDI_HIDDEN sd_status sdi_format_add(sdi_devfmt *f, const char *name, void *data, int64_t count,
                                    int64_t host_count, int32_t elem_size, sdi_fmt_role role,
                                    int owned);
/* The distinct block columns (column / b) of block row br (rows br·b … br·b + b − 1,
 * b ≤ 16), ascending, written to out (may be NULL); returns their count. The rows are
 * sorted, so a b-way merge of their cursors suffices. */
SDI_HIDDEN int64_t sdi_fmt_block_cols(const sd_csr *a, int b, int64_t br, int32_t *out);
/* The same, with out[k·stride] the k-th block column and zout[k·stride] (may be NULL) its
 * entry count, and adding to *dense_nnz (may be NULL) the entries of each block that holds at
 * least dense_min of them. */
SDI_HIDDEN int64_t sdi_fmt_block_scan(const sd_csr *a, int b, int64_t br, int32_t *out, int32_t *zout,
                                      int stride, int64_t dense_min, int64_t *dense_nnz);
/* Checks slots ≤ max_fill·nnz + SDI_FMT_FILL_SLACK, naming the format. */
SDI_HIDDEN sd_status sdi_format_check_fill(const char *what, int64_t slots, int64_t nnz,
                                           double max_fill);

#endif /* SDI_FORMATS_H */
