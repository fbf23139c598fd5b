/* src/runtime/lowered.h: a lowered plan, on the host: everything one compiled kernel is
 * made of, nothing on a device yet. For SpMV and SpMM: the template and its macros (the
 * compile request), the arrays of the representation with their host contents, and the
 * launches, whose arguments name those arrays, the operands (x / B in, y / C out) or
 * constants. For SpGEMM: the schedule over C's rows and its compile units
 * (runtime/sg_program.h). Lowering fills it (the families, src/plan/families/); the runtime
 * instantiates it as an executable (runtime/executable.h). Pure data and host code: no
 * CUDA header, so the planner builds it on a machine without a GPU. */
#ifndef SDI_RUNTIME_LOWERED_H
#define SDI_RUNTIME_LOWERED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"
#include "../formats/formats.h"
#include "jit.h"
#include "sg_program.h"

#define SDI_LOW_MAX_ARRAYS 12
#define SDI_LOW_MAX_MACROS 24
#define SDI_LOW_MAX_KERNELS 2
#define SDI_LOW_MAX_LAUNCHES 2
#define SDI_LOW_MAX_ARGS 24
#define SDI_LOW_NAME 64
#define SDI_LOW_ARRAY_NAME 24

typedef enum {
    SDI_LOW_META = 0,  /* indices, descriptors */
    SDI_LOW_VALUE = 1, /* matrix values (refreshed when the values change) */
    SDI_LOW_WORK = 2   /* device workspace: zero when instantiated, no host data */
} sdi_low_role;

typedef struct {
    char name[SDI_LOW_ARRAY_NAME];
    void *host;        /* host contents (NULL for workspace) */
    size_t bytes;      /* device bytes */
    size_t host_bytes; /* bytes of host contents (≤ bytes: the rest is zero on the device) */
    int32_t role;      /* sdi_low_role */
    int32_t owned;     /* host belongs to the lowering (else borrowed: from the CSR or fmt) */
    /* VALUE arrays: how new values reach them (sdi_lowered_refresh). fmt_array ≥ 0: array
     * fmt_array of the lowering's format, refreshed by sdi_format_refresh_values; else src:
     * the CSR entry of each of nslots slots (−1: zero), NULL = the CSR values as they are. */
    int32_t fmt_array;
    int64_t *src;
    int64_t nslots;
} sdi_low_array;

typedef enum {
    SDI_LOW_ARG_ARRAY = 0, /* the device copy of array `index` */
    SDI_LOW_ARG_IN,        /* the dense input (x, B) */
    SDI_LOW_ARG_OUT,       /* the dense output (y, C) */
    SDI_LOW_ARG_NULL,      /* a null pointer (an absent optional array) */
    SDI_LOW_ARG_I32,
    SDI_LOW_ARG_I64
} sdi_low_arg_kind;

typedef struct {
    int32_t kind;  /* sdi_low_arg_kind */
    int32_t index; /* ARRAY: index into arr */
    int64_t value; /* I32, I64 */
} sdi_low_arg;

typedef struct {
    int32_t kernel;     /* index into kname */
    unsigned grid[3], block[3];
    unsigned dyn_smem;  /* dynamic shared memory per CTA (bytes) */
    int32_t grid_stride; /* 1: the kernel loops over its work, any grid is correct (the
                            runtime clamps it to the CTAs the device keeps resident) */
    int32_t nargs;
    sdi_low_arg args[SDI_LOW_MAX_ARGS];
} sdi_low_launch;

typedef struct {
    int32_t op;         /* sd_op */
    int32_t rows, cols; /* of A */
    int32_t k;          /* SpMM: K; 1 otherwise */
    int64_t nnz;
    /* --- SpMV / SpMM: the program */
    char template_name[48]; /* an embedded template ("spmv_csr_vec.cuh") */
    int32_t nkernels;
    char kname[SDI_LOW_MAX_KERNELS][SDI_LOW_NAME];
    int32_t nmacros;
    char macro_name[SDI_LOW_MAX_MACROS][24];
    char macro_value[SDI_LOW_MAX_MACROS][SDI_LOW_NAME];
    int32_t narrays;
    sdi_low_array arr[SDI_LOW_MAX_ARRAYS];
    int32_t nlaunches; /* 0: nothing to compute (no rows) */
    sdi_low_launch launch[SDI_LOW_MAX_LAUNCHES];
    bool has_fmt;    /* fmt holds the representation some arrays borrow from */
    sdi_devfmt fmt;
    /* --- SpGEMM: the schedule and its units (zero otherwise) */
    sdi_sg_schedule sg;
    sdi_sg_lowered sg_units;
    /* --- what the plan costs (device bytes: M_value, M_meta, workspace W) */
    int64_t bytes_value, bytes_meta, bytes_work;
    int64_t slots;      /* value slots (padding included) */
    int64_t smem;       /* static shared memory per CTA */
    int32_t long_rows;  /* split rows (SpMM split, PCSR with S) */
    int64_t chunks;     /* chunks (split) or PCSR rows */
    int32_t atomics;    /* the program adds floats atomically (not bitwise reproducible),
                           as built for this matrix (a plan's family says it beforehand) */
    double build_ms;    /* host format building */
} sdi_lowered;

/* Building (lowering helpers): each returns SD_ERR_INTERNAL when a fixed capacity would
 * overflow (named). add_array takes ownership of host when owned. */
SDI_HIDDEN sd_status sdi_lowered_add_macro(sdi_lowered *l, const char *name, const char *fmt, ...)
    SDI_PRINTF(3, 4);
SDI_HIDDEN sd_status sdi_lowered_add_array(sdi_lowered *l, const char *name, int role, void *host,
                                           size_t host_bytes, size_t bytes, int owned, int *index);
SDI_HIDDEN sd_status sdi_lowered_add_kernel(sdi_lowered *l, const char *name, int *index);
/* Appends every non-host array of f (taking f over: l->fmt, has_fmt; value arrays refresh
 * through the format); *index_of (may be NULL) receives each array's index in l, −1 for
 * host-only arrays, by f's array order. */
SDI_HIDDEN sd_status sdi_lowered_adopt_format(sdi_lowered *l, sdi_devfmt *f, int *index_of);
SDI_HIDDEN int sdi_lowered_find_array(const sdi_lowered *l, const char *name);

/* Frees owned host data (arrays, maps, fmt, the SpGEMM schedule and units); zeroes l. */
SDI_HIDDEN void sdi_lowered_free(sdi_lowered *l);
/* a's values changed (same pattern): the host value arrays follow them. */
SDI_HIDDEN sd_status sdi_lowered_refresh(sdi_lowered *l, const sd_csr *a);
/* The compile request of a SpMV / SpMM lowering (macros must hold SDI_LOW_MAX_MACROS and
 * outlive req; arch NULL = the context's). SD_ERR_UNSUPPORTED for SpGEMM (one request per
 * unit: sdi_sg_unit_request) and for an empty program. */
SDI_HIDDEN sd_status sdi_lowered_jit_request(const sdi_lowered *l, const char *arch,
                                             sdi_macro *macros, sdi_jit_request *req);
/* {"template":…, "kernels":[…], "macros":{…}, "arrays":[…], "launches":[…], "bytes":{…}}
 * (SpGEMM: the schedule and its units). */
SDI_HIDDEN void sdi_lowered_json(const sdi_lowered *l, sdi_json *j);

#endif /* SDI_RUNTIME_LOWERED_H */
