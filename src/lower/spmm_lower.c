/* src/lower/spmm_lower.c: SpMM plan → launch description (formats, template macros,
 * grids and arguments), and its instantiation as a runtime launch program. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../formats/formats.h"
#include "../formats/spmm_formats.h"
#include "spmm_lower.h"

/* ------------------------------------------------------------------ description helpers */

static sd_status add_array(sdi_spmm_lowered *l, const char *name, void *host, size_t bytes,
                           int role, int owned, int64_t *src, int64_t nslots, int *index)
{
    /* On failure nothing changes hands: the caller still owns host and src. */
    if (l->narrays == SDI_SPMM_MAX_ARRAYS)
        return SDI_ERR(SD_ERR_INTERNAL, "spmm lowering: too many arrays");
    sdi_spmm_array *a = &l->arr[l->narrays];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->host = host;
    a->bytes = bytes;
    a->role = role;
    a->owned = owned;
    a->src = src;
    a->nslots = nslots;
    if (role == SDI_SPMM_ARR_VALUE)
        l->bytes_value += (int64_t)bytes;
    else if (role == SDI_SPMM_ARR_META)
        l->bytes_meta += (int64_t)bytes;
    else
        l->bytes_work += (int64_t)bytes;
    if (index)
        *index = l->narrays;
    l->narrays++;
    return SD_OK;
}

static void add_macro(sdi_spmm_lowered *l, const char *name, const char *fmt, ...)
    SDI_PRINTF(3, 4);
static void add_macro(sdi_spmm_lowered *l, const char *name, const char *fmt, ...)
{
    if (l->nmacros == SDI_SPMM_MAX_MACROS)
        return; /* checked by the caller through nmacros */
    snprintf(l->macro_name[l->nmacros], sizeof l->macro_name[0], "%s", name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->macro_value[l->nmacros], sizeof l->macro_value[0], fmt, ap);
    va_end(ap);
    l->nmacros++;
}

/* Row pointers on the device: borrowed int64 when rp64, else an int32 copy. */
static sd_status rp_array(sdi_spmm_lowered *l, const char *name, const int64_t *rp, int64_t n,
                          int rp64, int *index)
{
    if (rp64)
        return add_array(l, name, (void *)rp, (size_t)n * 8, SDI_SPMM_ARR_META, 0, NULL, 0,
                         index);
    int32_t *r = sdi_malloc_array(n > 0 ? (size_t)n : 1, sizeof *r);
    if (r == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for 32-bit %s", name);
    for (int64_t i = 0; i < n; i++)
        r[i] = (int32_t)rp[i];
    sd_status s = add_array(l, name, r, (size_t)n * 4, SDI_SPMM_ARR_META, 1, NULL, 0, index);
    if (s != SD_OK)
        sdi_free(r);
    return s;
}

static sdi_spmm_arg arg_array(int i) { return (sdi_spmm_arg){SDI_SPMM_ARG_ARRAY, i, 0}; }
static sdi_spmm_arg arg_b(void) { return (sdi_spmm_arg){SDI_SPMM_ARG_B, -1, 0}; }
static sdi_spmm_arg arg_c(void) { return (sdi_spmm_arg){SDI_SPMM_ARG_C, -1, 0}; }
static sdi_spmm_arg arg_null(void) { return (sdi_spmm_arg){SDI_SPMM_ARG_NULL, -1, 0}; }
static sdi_spmm_arg arg_i32(int64_t v) { return (sdi_spmm_arg){SDI_SPMM_ARG_I32, -1, v}; }
static sdi_spmm_arg arg_i64(int64_t v) { return (sdi_spmm_arg){SDI_SPMM_ARG_I64, -1, v}; }

static sdi_spmm_launch *add_launch(sdi_spmm_lowered *l, int kernel, int64_t gx, int gy,
                                   int threads)
{
    sdi_spmm_launch *x = &l->launch[l->nlaunches++];
    memset(x, 0, sizeof *x);
    x->kernel = kernel;
    x->grid[0] = (unsigned)gx;
    x->grid[1] = (unsigned)gy;
    x->grid[2] = 1;
    x->block[0] = (unsigned)threads;
    x->block[1] = x->block[2] = 1;
    return x;
}

static void push_arg(sdi_spmm_launch *x, sdi_spmm_arg a)
{
    if (x->nargs < SDI_SPMM_MAX_ARGS)
        x->args[x->nargs++] = a;
}

void sdi_spmm_lowered_free(sdi_spmm_lowered *l)
{
    if (l == NULL)
        return;
    for (int i = 0; i < l->narrays; i++) {
        if (l->arr[i].owned)
            sdi_free(l->arr[i].host);
        sdi_free(l->arr[i].src);
    }
    memset(l, 0, sizeof *l);
}

void sdi_spmm_lowered_refresh(sdi_spmm_lowered *l, const float *vals)
{
    for (int i = 0; i < l->narrays; i++) {
        sdi_spmm_array *a = &l->arr[i];
        if (a->role != SDI_SPMM_ARR_VALUE)
            continue;
        if (a->src == NULL) {
            if (a->owned)
                memcpy(a->host, vals, (size_t)a->nslots * sizeof(float));
            else
                a->host = (void *)vals; /* borrowed: point at the new values */
        } else {
            sdi_spmm_gather_values(a->src, a->nslots, vals, a->host);
        }
    }
}

/* ------------------------------------------------------------------ lowering */

static int regcap_minb(const sdi_spmm_config *c, int threads)
{
    int cap = c->regcap > 0 ? c->regcap : 64;
    int minb = 65536 / (threads * cap);
    return minb < 1 ? 1 : minb;
}

static void common_macros(sdi_spmm_lowered *l, const sdi_spmm_config *c, int threads, int big)
{
    add_macro(l, "SD_K", "%d", c->k);
    add_macro(l, "SD_RP64", "%d", c->rp64 ? 1 : 0);
    add_macro(l, "SD_BIG", "%d", big);
    add_macro(l, "SD_MINB", "%d", regcap_minb(c, threads));
    /* the light cap (spmm_families.c): fewer B loads in flight per lane, so that they fit */
    if (c->regcap > 0 && c->regcap <= 32)
        add_macro(l, "SD_INFLIGHT", "%d", 8);
}

/* Kernel names: sd_spmm_<template>_<16 hex of the macros>; the pattern is not part of
 * the code (sizes are arguments), so equal θ_H and K give equal kernels (memo hits). */
static void name_kernels(sdi_spmm_lowered *l, const char *family, int nkernels)
{
    char text[SDI_SPMM_MAX_MACROS * 96];
    size_t at = 0;
    at += (size_t)snprintf(text + at, sizeof text - at, "%s|%s", family, l->template_name);
    for (int i = 0; i < l->nmacros && at < sizeof text; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "|%s=%s", l->macro_name[i],
                               l->macro_value[i]);
    if (at > sizeof text)
        at = sizeof text;
    sdi_hash128 h = sdi_hash_bytes(text, at, 0x5350);
    char hex[33];
    sdi_hash_hex(h, hex);
    hex[16] = '\0';
    l->nkernels = nkernels;
    snprintf(l->kname[0], SDI_SPMM_KNAME, "sd_spmm_%s_%s", family, hex);
    snprintf(l->kname[1], SDI_SPMM_KNAME, "sd_spmm_%s_%s_b", family, hex);
    add_macro(l, "SD_KNAME", "%s", l->kname[0]);
    if (nkernels > 1)
        add_macro(l, "SD_KNAME2", "%s", l->kname[1]);
}

static sd_status lower_csr_arrays(sdi_spmm_lowered *l, const sd_csr *a, int rp64, int *irp,
                                  int *ici, int *iva)
{
    sd_status s = rp_array(l, "rowptr", a->rowptr, (int64_t)a->rows + 1, rp64, irp);
    if (s == SD_OK)
        s = add_array(l, "colind", a->colind, (size_t)a->nnz * 4, SDI_SPMM_ARR_META, 0, NULL, 0,
                      ici);
    if (s == SD_OK)
        s = add_array(l, "vals", a->vals, (size_t)a->nnz * 4, SDI_SPMM_ARR_VALUE, 0, NULL,
                      a->nnz, iva);
    return s;
}

static sd_status lower_row(sdi_spmm_lowered *l, const sd_csr *a, const sdi_spmm_config *c,
                           int big)
{
    int threads = c->warps * 32, g = c->klanes * c->nzpar, gpc = threads / g;
    l->template_name = "spmm_csr_row.cuh";
    common_macros(l, c, threads, big);
    add_macro(l, "SD_WARPS", "%d", c->warps);
    add_macro(l, "SD_KL", "%d", c->klanes);
    add_macro(l, "SD_NZ", "%d", c->nzpar);
    add_macro(l, "SD_V", "%d", c->vec);
    add_macro(l, "SD_CO", "%d", c->coarsen);
    name_kernels(l, "csr_row", 1);
    int irp = -1, ici = -1, iva = -1; /* -1: set by lower_csr_arrays (gcc -O3 cannot tell) */
    sd_status s = lower_csr_arrays(l, a, c->rp64, &irp, &ici, &iva);
    if (s != SD_OK)
        return s;
    l->slots = a->nnz;
    l->deterministic = 1;
    if (a->rows > 0) {
        sdi_spmm_launch *x = add_launch(l, 0, ((int64_t)a->rows + gpc - 1) / gpc,
                                        sdi_spmm_ktiles(c), threads);
        push_arg(x, arg_array(irp));
        push_arg(x, arg_array(ici));
        push_arg(x, arg_array(iva));
        push_arg(x, arg_b());
        push_arg(x, arg_c());
        push_arg(x, arg_i32(a->rows));
    }
    return SD_OK;
}

/* Whether a segment boundary (every CH entries) falls inside a row. */
static bool segments_cut_a_row(const sd_csr *a, int ch)
{
    for (int64_t i = 0; i < a->rows; i++) {
        const int64_t s = a->rowptr[i], e = a->rowptr[i + 1];
        if (e - s >= 2 && s / ch != (e - 1) / ch)
            return true;
    }
    return false;
}

/* Segments (csr_split, SDI_SPLIT_SEGMENTS / SEGATOMIC): CH consecutive entries per group of
 * klanes lanes, rows from a COO row index; a run of a row cut by a segment boundary leaves its
 * partial in ws (SEGMENTS: two slots per segment, its head run and its tail run; SEGATOMIC:
 * added into one slot per cut row) and the last of the row's segments to arrive (cnt, per the
 * row's first segment and K tile) sums them or reads the row's slot. */
static sd_status lower_segments(sdi_spmm_lowered *l, const sd_csr *a, const sdi_spmm_config *c,
                                int big)
{
    int threads = c->warps * 32, gpc = threads / c->klanes;
    int tiles = sdi_spmm_ktiles(c);
    /* One segment at least, so that a matrix without entries still has its rows zeroed. */
    int64_t nseg = a->nnz > 0 ? (a->nnz + c->chunk - 1) / c->chunk : 1;
    if (nseg >= INT32_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "csr_split segments: %lld segments exceed int32",
                       (long long)nseg);
    /* SEGMENTS: two partial slots per segment; SEGATOMIC: one sum slot per cut row, at the
     * row's first segment (only the last row starting in a segment can be cut) */
    const int slots = c->split_mode == SDI_SPLIT_SEGATOMIC ? 1 : 2;
    double ws_bytes = (double)nseg * slots * c->k * 4.0;
    if (ws_bytes > (double)(1LL << 30))
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "csr_split segments: %.0f MiB of segment partials (at most 1 GiB)",
                       ws_bytes / 1048576.0);
    l->template_name = "spmm_csr_split.cuh";
    common_macros(l, c, threads, big);
    add_macro(l, "SD_WARPS", "%d", c->warps);
    add_macro(l, "SD_KL", "%d", c->klanes);
    add_macro(l, "SD_NZ", "%d", 1);
    add_macro(l, "SD_NZL", "%d", 32 / c->klanes);
    add_macro(l, "SD_V", "%d", c->vec);
    add_macro(l, "SD_CO", "%d", c->coarsen);
    add_macro(l, "SD_MODE", "%d", c->split_mode);
    name_kernels(l, "csr_split", 1);
    int irp = -1, iri = -1, ici = -1, iva = -1, iws = -1, icn = -1;
#define SD_FREE_ALL ((void)0) /* what was added belongs to l (freed by sdi_spmm_lower) */
    SD_TRY(lower_csr_arrays(l, a, c->rp64, &irp, &ici, &iva));
    int32_t *ri = sdi_fmt_row_indices(a);
    if (ri == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the segments' row indices");
    sd_status s = add_array(l, "rowind", ri, (size_t)a->nnz * 4, SDI_SPMM_ARR_META, 1, NULL, 0,
                            &iri);
    if (s != SD_OK) {
        sdi_free(ri);
        return s;
    }
    SD_TRY(add_array(l, "ws", NULL, (size_t)nseg * slots * (size_t)c->k * 4, SDI_SPMM_ARR_WORK,
                     0, NULL, 0, &iws));
    SD_TRY(add_array(l, "cnt", NULL, (size_t)nseg * (size_t)tiles * 4, SDI_SPMM_ARR_WORK, 0,
                     NULL, 0, &icn));
    l->slots = a->nnz;
    l->chunks = nseg;
    /* atomic sums only where some row spans two segments */
    l->deterministic = c->split_mode == SDI_SPLIT_SEGMENTS || !segments_cut_a_row(a, c->chunk);
    if (a->rows > 0) {
        sdi_spmm_launch *x = add_launch(l, 0, (nseg + gpc - 1) / gpc, tiles, threads);
        push_arg(x, arg_array(irp));
        push_arg(x, arg_array(iri));
        push_arg(x, arg_array(ici));
        push_arg(x, arg_array(iva));
        push_arg(x, arg_array(iws));
        push_arg(x, arg_array(icn));
        push_arg(x, arg_b());
        push_arg(x, arg_c());
        push_arg(x, arg_i32(a->rows));
        push_arg(x, arg_i64(a->nnz));
        push_arg(x, arg_i32(c->chunk));
        push_arg(x, arg_i32(nseg));
    }
#undef SD_FREE_ALL
    return SD_OK;
}

static sd_status lower_split(sdi_spmm_lowered *l, const sd_csr *a, const sdi_spmm_config *c,
                             int big)
{
    if (sdi_spmm_split_segmented(c))
        return lower_segments(l, a, c, big);
    sdi_spmm_split sp;
    int threads = c->warps * 32, g = c->klanes * c->nzpar, gpc = threads / g;
    int tiles = sdi_spmm_ktiles(c);
    sd_status s = sdi_spmm_split_build(a, c->split_threshold, c->chunk, c->split_mode, &sp);
    if (s != SD_OK)
        return s;
#define SD_FREE_ALL sdi_spmm_split_free(&sp)
    if (sp.nchunks >= INT32_MAX) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_UNSUPPORTED, "csr_split: %lld chunks exceed int32",
                       (long long)sp.nchunks);
    }
    double ws_bytes = (double)sp.nchunks * c->k * 4.0;
    if (c->split_mode == SDI_SPLIT_FIXUP && ws_bytes > (double)(1LL << 30)) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_UNSUPPORTED, "csr_split: %.0f MiB of chunk partials (at most 1 GiB)",
                       ws_bytes / 1048576.0);
    }
    l->template_name = "spmm_csr_split.cuh";
    common_macros(l, c, threads, big);
    add_macro(l, "SD_WARPS", "%d", c->warps);
    add_macro(l, "SD_KL", "%d", c->klanes);
    add_macro(l, "SD_NZ", "%d", c->nzpar);
    add_macro(l, "SD_NZL", "%d", c->long_nzpar);
    add_macro(l, "SD_V", "%d", c->vec);
    add_macro(l, "SD_CO", "%d", c->coarsen);
    add_macro(l, "SD_MODE", "%d", c->split_mode);
    name_kernels(l, "csr_split", c->split_mode == SDI_SPLIT_ATOMIC ? 2 : 1);
    int irp = -1, ici = -1, iva = -1, icr = -1, ics = -1, icl = -1, ilf = -1, iws = -1, icn = -1;
    SD_TRY(lower_csr_arrays(l, a, c->rp64, &irp, &ici, &iva));
    /* chunk arrays: the lists move into the description (ownership transferred) */
    size_t nc = (size_t)sp.nchunks;
    SD_TRY(add_array(l, "chunk_row", sp.chunk_row, nc * 4, SDI_SPMM_ARR_META, 1, NULL, 0, &icr));
    sp.chunk_row = NULL;
    SD_TRY(rp_array(l, "chunk_start", sp.chunk_start, sp.nchunks, c->rp64, &ics));
    if (c->rp64) { /* borrowed by rp_array: hand the ownership over */
        l->arr[ics].owned = 1;
        sp.chunk_start = NULL;
    }
    if (c->split_mode == SDI_SPLIT_FIXUP) {
        SD_TRY(add_array(l, "chunk_long", sp.chunk_long, nc * 4, SDI_SPMM_ARR_META, 1, NULL, 0,
                         &icl));
        sp.chunk_long = NULL;
        int32_t *lf = sdi_malloc_array((size_t)sp.nlong + 1, sizeof *lf);
        SD_CHECK_ALLOC(lf, "long-row chunk offsets");
        for (int32_t i = 0; i <= sp.nlong; i++)
            lf[i] = (int32_t)sp.long_first[i];
        s = add_array(l, "long_first", lf, ((size_t)sp.nlong + 1) * 4, SDI_SPMM_ARR_META, 1,
                      NULL, 0, &ilf);
        if (s != SD_OK) {
            sdi_free(lf);
            SD_FREE_ALL;
            return s;
        }
        SD_TRY(add_array(l, "ws", NULL, nc * (size_t)c->k * 4, SDI_SPMM_ARR_WORK, 0, NULL, 0,
                         &iws));
        SD_TRY(add_array(l, "cnt", NULL, (size_t)sp.nlong * (size_t)tiles * 4,
                         SDI_SPMM_ARR_WORK, 0, NULL, 0, &icn));
    }
    l->slots = a->nnz;
    l->long_rows = sp.nlong;
    l->chunks = sp.nchunks;
    l->deterministic = c->split_mode == SDI_SPLIT_FIXUP || sp.nchunks == 0;
    int64_t nb_short = ((int64_t)a->rows + gpc - 1) / gpc;
    int64_t nb_long = ((int64_t)sp.nchunks + c->warps - 1) / c->warps;
    if (c->split_mode == SDI_SPLIT_ATOMIC) {
        if (a->rows > 0) {
            sdi_spmm_launch *x = add_launch(l, 0, nb_short, tiles, threads);
            push_arg(x, arg_array(irp));
            push_arg(x, arg_array(ici));
            push_arg(x, arg_array(iva));
            push_arg(x, arg_b());
            push_arg(x, arg_c());
            push_arg(x, arg_i32(a->rows));
            push_arg(x, arg_i32(c->split_threshold));
            push_arg(x, arg_i32(c->chunk));
        }
        if (sp.nchunks > 0) {
            sdi_spmm_launch *x = add_launch(l, 1, nb_long, tiles, threads);
            push_arg(x, arg_array(irp));
            push_arg(x, arg_array(ici));
            push_arg(x, arg_array(iva));
            push_arg(x, arg_array(icr));
            push_arg(x, arg_array(ics));
            push_arg(x, arg_b());
            push_arg(x, arg_c());
            push_arg(x, arg_i32(a->rows));
            push_arg(x, arg_i32(c->split_threshold));
            push_arg(x, arg_i32(c->chunk));
            push_arg(x, arg_i32(sp.nchunks));
        }
    } else if (a->rows > 0) {
        sdi_spmm_launch *x = add_launch(l, 0, nb_short + nb_long, tiles, threads);
        push_arg(x, arg_array(irp));
        push_arg(x, arg_array(ici));
        push_arg(x, arg_array(iva));
        push_arg(x, arg_array(icr));
        push_arg(x, arg_array(ics));
        push_arg(x, arg_array(icl));
        push_arg(x, arg_array(ilf));
        push_arg(x, arg_array(iws));
        push_arg(x, arg_array(icn));
        push_arg(x, arg_b());
        push_arg(x, arg_c());
        push_arg(x, arg_i32(a->rows));
        push_arg(x, arg_i32(c->split_threshold));
        push_arg(x, arg_i32(c->chunk));
        push_arg(x, arg_i32(sp.nchunks));
        push_arg(x, arg_i32(nb_short));
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

static sd_status lower_window(sdi_spmm_lowered *l, const sd_csr *a, const sdi_spmm_config *c,
                              int big)
{
    int threads = c->warps * 32;
    sdi_spmm_windows w;
    sd_status s = sdi_spmm_windows_build(a, c->win_rows, c->win_cap, &w);
    if (s != SD_OK)
        return s;
    l->template_name = "spmm_csr_window.cuh";
    common_macros(l, c, threads, big);
    add_macro(l, "SD_WARPS", "%d", c->warps);
    add_macro(l, "SD_KL", "%d", c->klanes);
    add_macro(l, "SD_V", "%d", c->vec);
    add_macro(l, "SD_CO", "%d", c->coarsen);
    add_macro(l, "SD_WR", "%d", c->win_rows);
    add_macro(l, "SD_CAP", "%d", c->win_cap);
    name_kernels(l, "csr_window", 1);
    int iwp = -1, irp = -1, ici = -1, iva = -1;
    int32_t nwin = w.nwin;
    s = add_array(l, "win_ptr", w.win_ptr, ((size_t)nwin + 1) * 4, SDI_SPMM_ARR_META, 1, NULL,
                  0, &iwp);
    if (s == SD_OK)
        w.win_ptr = NULL; /* moved into the description */
    sdi_spmm_windows_free(&w);
    if (s == SD_OK)
        s = lower_csr_arrays(l, a, c->rp64, &irp, &ici, &iva);
    if (s != SD_OK)
        return s;
    l->slots = a->nnz;
    l->deterministic = 1;
    l->chunks = nwin;
    if (nwin > 0) {
        sdi_spmm_launch *x = add_launch(l, 0, nwin, 1, threads);
        push_arg(x, arg_array(iwp));
        push_arg(x, arg_array(irp));
        push_arg(x, arg_array(ici));
        push_arg(x, arg_array(iva));
        push_arg(x, arg_b());
        push_arg(x, arg_c());
    }
    return SD_OK;
}

/* Hands the arrays of bk to l (ownership moves): block-row pointers (unless with_rowptr
 * is false: blocked-ELL), block column indices and the nslots values; their indices in
 * *ibp (−1 without row pointers), *ibc, *ibv. On failure what was not handed over stays
 * in bk for the caller to free. */
static sd_status add_block_arrays(sdi_spmm_lowered *l, sdi_spmm_blocks *bk, int32_t brows, int rp64,
                                  bool with_rowptr, size_t nslots, int *ibp, int *ibc, int *ibv)
{
    *ibp = -1;
    sd_status s;
    if (with_rowptr) {
        if ((s = rp_array(l, "browptr", bk->browptr, (int64_t)brows + 1, rp64, ibp)) != SD_OK)
            return s;
        if (rp64) {
            l->arr[*ibp].owned = 1;
            bk->browptr = NULL;
        }
    }
    s = add_array(l, "bcolidx", bk->bcolidx, (size_t)bk->nblocks * 4, SDI_SPMM_ARR_META, 1, NULL, 0, ibc);
    if (s != SD_OK)
        return s;
    bk->bcolidx = NULL;
    s = add_array(l, "bval", bk->val, nslots * 4, SDI_SPMM_ARR_VALUE, 1, bk->src, (int64_t)nslots, ibv);
    if (s != SD_OK)
        return s;
    bk->val = NULL;
    bk->src = NULL;
    l->slots = (int64_t)nslots;
    l->deterministic = 1;
    l->chunks = bk->nblocks;
    return SD_OK;
}

static sd_status lower_blocks(sdi_spmm_lowered *l, const sd_csr *a, const sdi_spmm_config *c,
                              int big)
{
    int threads = c->warps * 32, gpc = threads / c->klanes;
    int b = c->block;
    bool ell = c->tmpl == SDI_SPMM_BELL;
    int64_t nb = 0, widest = 0;
    sd_status s = sdi_spmm_blocks_count(a, b, b, &nb, &widest);
    if (s != SD_OK)
        return s;
    int32_t brows = (a->rows + b - 1) / b;
    double slots = ell ? (double)brows * (double)widest * b * b : (double)nb * b * b;
    if (slots > 8.0 * (double)a->nnz + 4096)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "%s%d: %.0f value slots for %lld nonzeros (more "
                       "than 8x padding)", ell ? "bell" : "bsr", b, slots, (long long)a->nnz);
    if (ell && widest * (int64_t)brows >= INT32_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "bell%d: block count exceeds int32", b);
    sdi_spmm_blocks bk;
    s = sdi_spmm_blocks_build(a, b, b, ell ? (int)(widest > 0 ? widest : 1) : 0, 0, &bk);
    if (s != SD_OK)
        return s;
#define SD_FREE_ALL sdi_spmm_blocks_free(&bk)
    l->template_name = "spmm_bsr.cuh";
    common_macros(l, c, threads, big);
    add_macro(l, "SD_WARPS", "%d", c->warps);
    add_macro(l, "SD_KL", "%d", c->klanes);
    add_macro(l, "SD_V", "%d", c->vec);
    add_macro(l, "SD_CO", "%d", c->coarsen);
    add_macro(l, "SD_BM", "%d", b);
    add_macro(l, "SD_BN", "%d", b);
    name_kernels(l, ell ? "bell" : "bsr", 1);
    int ibp, ibc, ibv;
    SD_TRY(add_block_arrays(l, &bk, brows, c->rp64, !ell, (size_t)bk.nblocks * (size_t)b * (size_t)b, &ibp,
                            &ibc, &ibv));
    int ellw = ell ? (int)(bk.nblocks / (brows > 0 ? brows : 1)) : 0;
    if (brows > 0) {
        sdi_spmm_launch *x = add_launch(l, 0, ((int64_t)brows + gpc - 1) / gpc,
                                        sdi_spmm_ktiles(c), threads);
        push_arg(x, ell ? arg_null() : arg_array(ibp));
        push_arg(x, arg_array(ibc));
        push_arg(x, arg_array(ibv));
        push_arg(x, arg_b());
        push_arg(x, arg_c());
        push_arg(x, arg_i32(a->rows));
        push_arg(x, arg_i32(a->cols));
        push_arg(x, arg_i32(brows));
        push_arg(x, arg_i32(ellw));
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

/* Tensor-core BSR: b×8 tiles (b = c->block) in the mma lane order, one warp per block row. */
static sd_status lower_bsr_tc(sdi_spmm_lowered *l, const sd_csr *a, const sdi_spmm_config *c,
                              int big)
{
    int threads = c->warps * 32, b = c->block;
    int64_t nb = 0, widest = 0;
    sd_status s = sdi_spmm_blocks_count(a, b, 8, &nb, &widest);
    if (s != SD_OK)
        return s;
    double slots = (double)nb * b * 8;
    if (slots > 8.0 * (double)a->nnz + 4096)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "bsr_tc%d: %.0f value slots for %lld nonzeros (more "
                       "than 8x padding)", b, slots, (long long)a->nnz);
    int32_t brows = (a->rows + b - 1) / b;
    sdi_spmm_blocks bk;
    s = sdi_spmm_blocks_build(a, b, 8, 0, 1, &bk);
    if (s != SD_OK)
        return s;
#define SD_FREE_ALL sdi_spmm_blocks_free(&bk)
    l->template_name = "spmm_bsr_tc.cuh";
    common_macros(l, c, threads, big);
    add_macro(l, "SD_WARPS", "%d", c->warps);
    add_macro(l, "SD_BM", "%d", b);
    add_macro(l, "SD_NT", "%d", c->coarsen);
    name_kernels(l, "bsr_tc", 1);
    int ibp, ibc, ibv;
    SD_TRY(add_block_arrays(l, &bk, brows, c->rp64, true, (size_t)bk.nblocks * (size_t)b * 8, &ibp, &ibc,
                            &ibv));
    if (brows > 0) {
        sdi_spmm_launch *x = add_launch(l, 0, ((int64_t)brows + c->warps - 1) / c->warps,
                                        sdi_spmm_ktiles(c), threads);
        push_arg(x, arg_array(ibp));
        push_arg(x, arg_array(ibc));
        push_arg(x, arg_array(ibv));
        push_arg(x, arg_b());
        push_arg(x, arg_c());
        push_arg(x, arg_i32(a->rows));
        push_arg(x, arg_i32(a->cols));
        push_arg(x, arg_i32(brows));
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

static sd_status lower_pcsr(sdi_spmm_lowered *l, const sd_csr *a, const sdi_spmm_config *c,
                            int big)
{
    int threads = c->warps * 32, gpb = threads / c->pcsr_group;
    sdi_pcsr p;
    sd_status s = sdi_pcsr_build(a, c->pcsr_v, c->pcsr_s, c->pcsr_bound, &p);
    if (s != SD_OK)
        return s;
#define SD_FREE_ALL sdi_pcsr_free(&p)
    if (!c->rp64 && p.slots >= INT32_MAX) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_UNSUPPORTED, "pcsr: %lld slots need 64-bit row pointers",
                       (long long)p.slots);
    }
    l->template_name = "spmm_pcsr.cuh";
    common_macros(l, c, threads, big);
    add_macro(l, "SD_W", "%d", c->warps);
    add_macro(l, "SD_F", "%d", c->coarsen);
    add_macro(l, "SD_PV", "%d", c->pcsr_v);
    add_macro(l, "SD_PS", "%d", c->pcsr_s);
    add_macro(l, "SD_PG", "%d", c->pcsr_group);
    name_kernels(l, "pcsr", 2);
    int irp = -1, ici = -1, iva = -1, itr = -1, isr = -1;
    SD_TRY(rp_array(l, "prowptr", p.rowptr, p.prows + 1, c->rp64, &irp));
    if (c->rp64) {
        l->arr[irp].owned = 1;
        p.rowptr = NULL;
    }
    SD_TRY(add_array(l, "pcolidx", p.colidx, (size_t)p.slots * 4, SDI_SPMM_ARR_META, 1, NULL, 0,
                     &ici));
    p.colidx = NULL;
    SD_TRY(add_array(l, "pval", p.val, (size_t)p.slots * 4, SDI_SPMM_ARR_VALUE, 1, p.src,
                     p.slots, &iva));
    p.val = NULL;
    p.src = NULL;
    if (p.s) {
        SD_TRY(add_array(l, "trow", p.trow, (size_t)p.prows * 4, SDI_SPMM_ARR_META, 1, NULL, 0,
                         &itr));
        p.trow = NULL;
    }
    if (p.nsplit > 0) {
        SD_TRY(add_array(l, "split_rows", p.split_rows, (size_t)p.nsplit * 4, SDI_SPMM_ARR_META,
                         1, NULL, 0, &isr));
        p.split_rows = NULL;
    }
    l->slots = p.slots;
    l->long_rows = p.nsplit;
    l->chunks = p.prows;
    l->deterministic = p.nsplit == 0;
    if (p.nsplit > 0) {
        int64_t n = (int64_t)p.nsplit * c->k;
        sdi_spmm_launch *x = add_launch(l, 1, (n + 255) / 256, 1, 256);
        push_arg(x, arg_array(isr));
        push_arg(x, arg_c());
        push_arg(x, arg_i32(p.nsplit));
    }
    if (p.prows > 0) {
        sdi_spmm_launch *x = add_launch(l, 0, (p.prows + gpb - 1) / gpb, sdi_spmm_ktiles(c),
                                        threads);
        push_arg(x, arg_array(irp));
        push_arg(x, arg_array(ici));
        push_arg(x, arg_array(iva));
        push_arg(x, itr >= 0 ? arg_array(itr) : arg_null());
        push_arg(x, arg_b());
        push_arg(x, arg_c());
        push_arg(x, arg_i64(p.prows));
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

static sd_status lower_colwin(sdi_spmm_lowered *l, const sd_csr *a, const sdi_spmm_config *c,
                              int big)
{
    int threads = c->warps * 32, pr = c->win_rows;
    sdi_spmm_colwin cw;
    int64_t nseg = 0;
    sd_status s = sdi_spmm_colwin_count(a, pr, c->cw_width, &nseg);
    if (s != SD_OK)
        return s;
    /* Segment offsets take (panel rows + 1) int32 each: bound them by the entries. */
    if ((double)nseg * (pr + 1) > 4.0 * (double)a->nnz + 65536 || nseg >= INT32_MAX)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "col_window: %lld segments of %d rows for %lld "
                       "nonzeros (too sparse for column windows)", (long long)nseg, pr,
                       (long long)a->nnz);
    s = sdi_spmm_colwin_build(a, pr, c->cw_width, &cw);
    if (s != SD_OK)
        return s;
#define SD_FREE_ALL sdi_spmm_colwin_free(&cw)
    l->template_name = "spmm_colwin.cuh";
    common_macros(l, c, threads, big);
    add_macro(l, "SD_WARPS", "%d", c->warps);
    add_macro(l, "SD_KL", "%d", c->klanes);
    add_macro(l, "SD_V", "%d", c->vec);
    add_macro(l, "SD_CO", "%d", c->coarsen);
    add_macro(l, "SD_PR", "%d", pr);
    add_macro(l, "SD_CW", "%d", c->cw_width);
    name_kernels(l, "col_window", 1);
    int ips = -1, isc = -1, iss = -1, iso = -1, ici = -1, iva = -1;
    int32_t *ps = sdi_malloc_array((size_t)cw.npanels + 1, sizeof *ps);
    SD_CHECK_ALLOC(ps, "panel segment offsets");
    for (int32_t q = 0; q <= cw.npanels; q++)
        ps[q] = (int32_t)cw.panel_seg[q];
    s = add_array(l, "panel_seg", ps, ((size_t)cw.npanels + 1) * 4, SDI_SPMM_ARR_META, 1, NULL,
                  0, &ips);
    if (s != SD_OK) {
        sdi_free(ps);
        SD_FREE_ALL;
        return s;
    }
    SD_TRY(add_array(l, "seg_col0", cw.seg_col0, (size_t)nseg * 4, SDI_SPMM_ARR_META, 1, NULL, 0,
                     &isc));
    cw.seg_col0 = NULL;
    SD_TRY(rp_array(l, "seg_start", cw.seg_start, nseg + 1, c->rp64, &iss));
    if (c->rp64) {
        l->arr[iss].owned = 1;
        cw.seg_start = NULL;
    }
    SD_TRY(add_array(l, "seg_rowoff", cw.seg_rowoff, (size_t)nseg * ((size_t)pr + 1) * 4,
                     SDI_SPMM_ARR_META, 1, NULL, 0, &iso));
    cw.seg_rowoff = NULL;
    SD_TRY(add_array(l, "colidx", cw.colidx, (size_t)a->nnz * 4, SDI_SPMM_ARR_META, 1, NULL, 0,
                     &ici));
    cw.colidx = NULL;
    SD_TRY(add_array(l, "val", cw.val, (size_t)a->nnz * 4, SDI_SPMM_ARR_VALUE, 1, cw.src,
                     a->nnz, &iva));
    cw.val = NULL;
    cw.src = NULL;
    l->slots = a->nnz;
    l->deterministic = 1;
    l->chunks = nseg;
    if (cw.npanels > 0) {
        sdi_spmm_launch *x = add_launch(l, 0, cw.npanels, sdi_spmm_ktiles(c), threads);
        push_arg(x, arg_array(ips));
        push_arg(x, arg_array(isc));
        push_arg(x, arg_array(iss));
        push_arg(x, arg_array(iso));
        push_arg(x, arg_array(ici));
        push_arg(x, arg_array(iva));
        push_arg(x, arg_b());
        push_arg(x, arg_c());
        push_arg(x, arg_i32(a->rows));
        push_arg(x, arg_i32(a->cols));
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

sd_status sdi_spmm_lower(const sd_csr *a, const sdi_spmm_config *cfg, sdi_spmm_lowered *out)
{
    memset(out, 0, sizeof *out);
    if (a == NULL || cfg == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_spmm_lower: NULL argument");
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    sd_status s = sdi_spmm_config_check(cfg, &st);
    if (s != SD_OK)
        return s;
    double t0 = sdi_now();
    out->cfg = *cfg;
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    int64_t span = (int64_t)(a->rows > a->cols ? a->rows : a->cols) + 1;
    int big = span * (int64_t)cfg->k + cfg->k >= ((int64_t)1 << 31);
    switch (cfg->tmpl) {
    case SDI_SPMM_CSR_ROW: s = lower_row(out, a, cfg, big); break;
    case SDI_SPMM_CSR_SPLIT: s = lower_split(out, a, cfg, big); break;
    case SDI_SPMM_CSR_WINDOW: s = lower_window(out, a, cfg, big); break;
    case SDI_SPMM_BSR:
    case SDI_SPMM_BELL: s = lower_blocks(out, a, cfg, big); break;
    case SDI_SPMM_PCSR: s = lower_pcsr(out, a, cfg, big); break;
    case SDI_SPMM_COL_WINDOW: s = lower_colwin(out, a, cfg, big); break;
    case SDI_SPMM_BSR_TC: s = lower_bsr_tc(out, a, cfg, big); break;
    default: s = SDI_ERR(SD_ERR_INVALID_ARG, "spmm: unknown template %d", cfg->tmpl); break;
    }
    if (s == SD_OK && out->nmacros >= SDI_SPMM_MAX_MACROS)
        s = SDI_ERR(SD_ERR_INTERNAL, "spmm lowering: macro table full");
    if (s != SD_OK) {
        sdi_spmm_lowered_free(out);
        return s;
    }
    out->build_ms = (sdi_now() - t0) * 1e3;
    return SD_OK;
}

void sdi_spmm_jit_request(const sdi_spmm_lowered *l, sdi_macro *macros, sdi_jit_request *req)
{
    memset(req, 0, sizeof *req);
    for (int i = 0; i < l->nmacros; i++) {
        macros[i].name = l->macro_name[i];
        macros[i].value = l->macro_value[i];
    }
    req->template_name = l->template_name;
    req->macros = macros;
    req->nmacros = l->nmacros;
    req->kernel_name = l->kname[0];
}

void sdi_spmm_lowered_json(const sdi_spmm_lowered *l, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "config");
    sdi_spmm_config_json(&l->cfg, j);
    sdi_json_key(j, "template_file");
    sdi_json_string(j, l->template_name);
    sdi_json_key(j, "kernels");
    sdi_json_begin_array(j);
    for (int i = 0; i < l->nkernels; i++)
        sdi_json_string(j, l->kname[i]);
    sdi_json_end_array(j);
    sdi_json_key(j, "bytes_value");
    sdi_json_int(j, l->bytes_value);
    sdi_json_key(j, "bytes_meta");
    sdi_json_int(j, l->bytes_meta);
    sdi_json_key(j, "bytes_workspace");
    sdi_json_int(j, l->bytes_work);
    sdi_json_key(j, "padding_ratio");
    sdi_json_number(j, l->nnz > 0 ? (double)l->slots / (double)l->nnz : 0.0);
    sdi_json_key(j, "launches");
    sdi_json_int(j, l->nlaunches);
    sdi_json_key(j, "deterministic");
    sdi_json_bool(j, l->deterministic != 0);
    sdi_json_key(j, "build_ms");
    sdi_json_number(j, l->build_ms);
    sdi_json_end_object(j);
}

/* ------------------------------------------------------------------ on the device */

void sdi_spmm_unload(sdi_spmm_loaded *ld)
{
    if (ld == NULL)
        return;
    sdi_program_free(&ld->prog);
    sdi_module_unload(&ld->mod);
    memset(ld, 0, sizeof *ld);
}

sd_status sdi_spmm_load(sd_context *ctx, const sdi_spmm_lowered *l, bool use_graph,
                        sdi_spmm_loaded *out)
{
    memset(out, 0, sizeof *out);
    sdi_program_init(&out->prog);
#define SD_FREE_ALL sdi_spmm_unload(out)
    sdi_macro macros[SDI_SPMM_MAX_MACROS];
    sdi_jit_request req;
    sdi_spmm_jit_request(l, macros, &req);
    const sdi_cubin *cubin = NULL;
    bool hit = false;
    double t0 = sdi_now();
    SD_TRY(sdi_jit_get(ctx, &req, &cubin, &hit));
    out->compile_ms = hit ? 0.0 : cubin->compile_ms;
    double t1 = sdi_now();
    const char *names[2] = {l->kname[0], l->kname[1]};
    SD_TRY(sdi_module_load(ctx, cubin->cubin, cubin->size, names, l->nkernels, &out->mod));
    sdi_function *fns[2] = {NULL, NULL};
    for (int i = 0; i < l->nkernels; i++) {
        fns[i] = sdi_module_function(&out->mod, l->kname[i]);
        if (fns[i] == NULL) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "spmm: kernel '%s' missing after load", l->kname[i]);
        }
        out->num_regs[i] = fns[i]->num_regs;
        out->local_bytes[i] = fns[i]->local_bytes;
    }
    int bufidx[SDI_SPMM_MAX_ARRAYS];
    for (int i = 0; i < l->narrays; i++) {
        const sdi_spmm_array *a = &l->arr[i];
        SD_TRY(sdi_program_alloc_buffer(ctx, &out->prog, a->name, a->bytes, &bufidx[i]));
        if (a->host != NULL && a->bytes > 0)
            SD_TRY(sdi_program_upload(ctx, &out->prog, a->name, a->host, a->bytes));
    }
    out->b_bytes = (size_t)l->cols * (size_t)l->cfg.k * 4;
    out->c_bytes = (size_t)l->rows * (size_t)l->cfg.k * 4;
    SD_TRY(sdi_program_bind_buffer(&out->prog, "B", NULL, out->b_bytes, &out->ib));
    SD_TRY(sdi_program_bind_buffer(&out->prog, "C", NULL, out->c_bytes, &out->ic));
    for (int i = 0; i < l->nlaunches; i++) {
        const sdi_spmm_launch *x = &l->launch[i];
        sdi_function *fn = fns[x->kernel];
        SD_TRY(sdi_function_check_legal(ctx, fn, (int)x->block[0], 0));
        sdi_arg args[SDI_SPMM_MAX_ARGS];
        for (int q = 0; q < x->nargs; q++) {
            const sdi_spmm_arg *g = &x->args[q];
            switch (g->kind) {
            case SDI_SPMM_ARG_ARRAY: args[q] = sdi_arg_buffer(bufidx[g->index]); break;
            case SDI_SPMM_ARG_B: args[q] = sdi_arg_buffer(out->ib); break;
            case SDI_SPMM_ARG_C: args[q] = sdi_arg_buffer(out->ic); break;
            case SDI_SPMM_ARG_I32: args[q] = sdi_arg_i32((int32_t)g->value); break;
            case SDI_SPMM_ARG_I64: args[q] = sdi_arg_i64(g->value); break;
            default:
                args[q].kind = SDI_ARG_PTR;
                args[q].buffer = -1;
                args[q].v.ptr = NULL;
                break;
            }
        }
        SD_TRY(sdi_program_add_launch(&out->prog, fn, x->grid, x->block, 0, args, x->nargs));
    }
    out->prog.use_graph = use_graph;
    out->load_ms = (sdi_now() - t1) * 1e3;
    (void)t0;
#undef SD_FREE_ALL
    return SD_OK;
}

sd_status sdi_spmm_run(sd_context *ctx, sdi_spmm_loaded *ld, const float *d_b, float *d_c,
                       cudaStream_t stream)
{
    sd_status s = sdi_program_bind_buffer(&ld->prog, "B", (void *)d_b, ld->b_bytes, NULL);
    if (s == SD_OK)
        s = sdi_program_bind_buffer(&ld->prog, "C", d_c, ld->c_bytes, NULL);
    if (s != SD_OK)
        return s;
    if (ld->prog.nlaunches == 0)
        return SD_OK; /* no rows: C is empty */
    return sdi_program_run(ctx, &ld->prog, stream);
}

sd_status sdi_spmm_upload_values(sd_context *ctx, const sdi_spmm_lowered *l,
                                 sdi_spmm_loaded *ld)
{
    for (int i = 0; i < l->narrays; i++) {
        const sdi_spmm_array *a = &l->arr[i];
        if (a->role != SDI_SPMM_ARR_VALUE || a->bytes == 0)
            continue;
        sd_status s = sdi_program_upload(ctx, &ld->prog, a->name, a->host, a->bytes);
        if (s != SD_OK)
            return s;
    }
    return SD_OK;
}

/* ------------------------------------------------------------------ measurement */

typedef struct {
    sdi_spmm_loaded *ld;
    const float *b;
    float *c;
    const sdi_reference *ref;
    sdi_validation *val;
} measure_arg;

static sd_status measure_exec(sd_context *ctx, void *p, cudaStream_t stream)
{
    measure_arg *m = p;
    return sdi_spmm_run(ctx, m->ld, m->b, m->c, stream);
}

static sd_status measure_check(sd_context *ctx, void *p)
{
    measure_arg *m = p;
    return sdi_check_dense_output(ctx, m->ref, m->c, m->val);
}

sd_status sdi_spmm_measure(sd_context *ctx, sdi_spmm_loaded *ld, const float *d_b, float *d_c,
                           const sdi_reference *ref, sdi_validation *val, const char *name,
                           sdi_timing *out)
{
    measure_arg m = {ld, d_b, d_c, ref, val};
    return sdi_measure(ctx, name, measure_exec, &m, ref ? measure_check : NULL, &m, out);
}

sd_status sdi_spmm_precompile(sd_context *ctx, const sdi_spmm_lowered *const *list, int n,
                              int *nfailed, double *wall_s)
{
    int failed = 0;
    double t0 = sdi_now();
    /* sdi_jit_get is thread-safe and memoised: the later loads are memo hits. */
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : failed)
    for (int i = 0; i < n; i++) {
        sdi_macro macros[SDI_SPMM_MAX_MACROS];
        sdi_jit_request req;
        sdi_spmm_jit_request(list[i], macros, &req);
        const sdi_cubin *c = NULL;
        if (sdi_jit_get(ctx, &req, &c, NULL) != SD_OK) {
            sdi_log(1, "precompiling %s: %s", list[i]->kname[0], sd_last_error());
            failed++;
        }
    }
    if (nfailed)
        *nfailed = failed;
    if (wall_s)
        *wall_s = sdi_now() - t0;
    return ctx->broken ? SDI_ERR(SD_ERR_CUDA, "%s", ctx->broken_reason) : SD_OK;
}
