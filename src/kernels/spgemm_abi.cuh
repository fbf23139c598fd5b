/* src/kernels/spgemm_abi.cuh: the SpGEMM kernels' argument block and constants, shared
 * by the host driver (C, src/runtime/spgemm_exec.c) and the NVRTC-compiled templates, so
 * that the two sides cannot drift apart. Plain C: fixed-width types, no C++. */
#ifndef SD_SPGEMM_ABI_CUH
#define SD_SPGEMM_ABI_CUH

#include "sd_common.cuh"

/* Segments of one launch: each is one bin (or the compaction copy) with its own block
 * range; the kind of a segment is fixed in the generated code, its sizes are here. */
#define SD_SG_MAX_SEGS 24

/* Phases of a row kernel. */
#define SD_SG_PH_SYM 0 /* count the distinct columns of a row into cnt[row] */
#define SD_SG_PH_NUM 1 /* values + sorted columns straight into C at crow[row] */
#define SD_SG_PH_ONE 2 /* one phase: values + sorted columns into the staging area at
                          ub[row] (upper-bound layout) and the count into cnt[row] */

/* Empty slot of a hash table: larger than every column index (columns < 2^31 − 1), so
 * empty slots sort last. */
#define SD_SG_EMPTY 0x7fffffff

/* Look-back scan: rows per tile and threads of the scan kernel. */
#define SD_SG_SCAN_THREADS 256
#define SD_SG_SCAN_ITEMS 4
#define SD_SG_SCAN_TILE (SD_SG_SCAN_THREADS * SD_SG_SCAN_ITEMS)
/* Epochs tag the look-back words so that they need no clearing between calls. */
#define SD_SG_EPOCH_MASK 0x3fffu

/* Plan-time sort of a transposed row in shared memory up to this length (longer rows
 * use the merge kernel). */
#define SD_SG_TR_SMEM_SORT 2048

typedef struct {
    /* A (m × k) and B (k × n) in CSR on the device. */
    const sd_offset *arow;
    const sd_index *acol;
    const sd_value *aval;
    const sd_offset *brow;
    const sd_index *bcol;
    const sd_value *bval;
    const sd_offset *bperm; /* when not NULL, value p of B is bval[bperm[p]] (B = Aᵀ read
                               through the transpose's permutation) */
    /* Pattern metadata built at plan time. */
    const sd_index *binrows; /* non-empty rows grouped by bin */
    const sd_index *rowlo;   /* per row: the smallest column any product reaches */
    const sd_offset *ub;     /* m + 1 offsets of the one-phase staging area (a row that is
                                not one-phase has length 0) */
    /* Workspaces (allocated once) and the output. */
    sd_index *cnt;   /* m: distinct columns per row (rows without products stay 0) */
    sd_index *tcol;  /* staging of one-phase rows (ub layout) */
    sd_value *tval;
    sd_offset *crow; /* C: m + 1 row pointers */
    sd_index *ccol;
    sd_value *cval;
    unsigned long long *flags; /* look-back words, one per scan tile */
    long long *nnz_host;       /* the scan's: a mapped pinned host word that receives nnz(C)
                                  with crow[m] (NULL: crow[m] only) */
    sd_value *gval;            /* global dense stripes: gslots × gwidth values */
    unsigned *gbits;           /* and their occupancy bitmaps: gslots × gwidth / 32 words */
    long long gwidth;          /* columns per global stripe (a multiple of 32) */
    int *gdone;                /* per global row: CTAs done with it (parts mode) */
    int gparts;                /* CTAs per global row (parts mode: a slot per row); 0 =
                                  waves (a CTA per row at a time, slots reused) */
    int m, n;                  /* rows and columns of C */
    unsigned epoch;            /* 1 … SD_SG_EPOCH_MASK */
    int nsegs;
    int seg_end[SD_SG_MAX_SEGS];   /* cumulative block counts of the launch's segments */
    int seg_first[SD_SG_MAX_SEGS]; /* first index into binrows */
    int seg_rows[SD_SG_MAX_SEGS];  /* rows of the segment (tiles for the copy) */
} sd_spgemm_args;

/* Arguments of the plan-time kernels (analysis of u(i), transpose, value gather). */
typedef struct {
    const sd_offset *arow;
    const sd_index *acol;
    const sd_offset *brow;
    const sd_index *bcol;
    long long *u;           /* m: products of row i */
    sd_index *lo, *hi;      /* m: first and last column reached (−1 when none) */
    unsigned long long *tcount; /* transpose: entries per column of A */
    sd_offset *tcursor;     /* transpose: next free slot per row of Aᵀ */
    sd_offset *trow;        /* transpose: row pointers of Aᵀ */
    sd_index *tcol;         /* transpose: columns of Aᵀ (rows of A) */
    sd_offset *tperm;       /* transpose: entry of A behind each entry of Aᵀ */
    sd_index *tmp_col;      /* merge ping-pong */
    sd_offset *tmp_perm;
    const sd_index *long_rows; /* rows of Aᵀ longer than SD_SG_TR_SMEM_SORT */
    const sd_value *gsrc;   /* value gather: dst[p] = gsrc[perm[p]] */
    sd_value *gdst;
    const sd_offset *gperm;
    long long nnz;
    int m, k;               /* rows and columns of A (rows of B for the analysis) */
    int nlong;
} sd_spgemm_prep_args;

#endif /* SD_SPGEMM_ABI_CUH */
