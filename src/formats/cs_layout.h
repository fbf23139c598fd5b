/* src/formats/cs_layout.h: cuSPARSE's Sliced-ELL and Blocked-ELL layouts of a CSR
 * matrix, built on the host by the formats' builders (fmt_sell.c, spmm_formats.c) with
 * cuSPARSE's conventions, for the baseline (src/vendor) and for the executor that runs a
 * cuSPARSE winner (runtime/cs_format.c): one builder per layout, so the executor runs
 * exactly the format the baseline timed. Host memory only; the callers check their size
 * limits between measuring a layout and building it, then upload. */
#ifndef SDI_CS_LAYOUT_H
#define SDI_CS_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/sdi.h"

/* Sliced ELL: slices of `slice` rows, each column-major with leading dimension `slice` (the
 * last slice padded like the others) and as wide as its longest row; padding column -1,
 * value 0. */
typedef struct {
    int64_t nslices, slots;
    int32_t *off;  /* nslices + 1 slot offsets */
    int32_t *col;  /* slots (at least one) */
    float *val;    /* slots (at least one) */
    int64_t *slot; /* nnz: each entry's slot, for value updates (NULL unless asked) */
} sdi_cs_sell;

/* The slots a's Sliced ELL needs (to check limits before building it). */
SDI_HIDDEN int64_t sdi_cs_sell_slots(const sd_csr *a, int slice);
/* Builds it (slots must fit 32-bit offsets: SD_ERR_UNSUPPORTED otherwise). */
SDI_HIDDEN sd_status sdi_cs_sell_build(const sd_csr *a, int slice, bool want_slot, sdi_cs_sell *out);
SDI_HIDDEN void sdi_cs_sell_free(sdi_cs_sell *s);

/* Blocked ELL: bs×bs blocks; every block row holds maxb block slots (the largest count of
 * occupied block columns), its block columns ascending and padded with -1; values
 * rows_pad × ell_cols row-major (ell_cols = maxb·bs); rows and columns padded to multiples
 * of bs. */
typedef struct {
    int64_t nbr, maxb, rows_pad, cols_pad, ell_cols, slots;
    int32_t *bcol; /* nbr × maxb */
    float *val;    /* slots = rows_pad × ell_cols */
    int64_t *slot; /* nnz: each entry's value slot (NULL unless asked) */
} sdi_cs_bell;

/* maxb: the largest number of occupied block columns of a block row (0 when a is empty). */
SDI_HIDDEN sd_status sdi_cs_bell_width(const sd_csr *a, int bs, int64_t *maxb);
/* Builds it for the maxb sdi_cs_bell_width returned. */
SDI_HIDDEN sd_status sdi_cs_bell_build(const sd_csr *a, int bs, int64_t maxb, bool want_slot,
                                       sdi_cs_bell *out);
SDI_HIDDEN void sdi_cs_bell_free(sdi_cs_bell *b);

#endif /* SDI_CS_LAYOUT_H */
