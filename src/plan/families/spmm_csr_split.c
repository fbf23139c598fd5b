/* src/plan/families/spmm_csr_split.c: SpMM nonzero split — rows longer than T cut into
 * chunks of CH (atomic or fixup finish), or nonzero-balanced segments over every row
 * (spmm_csr_split.cuh; sdi_split_mode). */
#include <stdio.h>
#include <string.h>

#include "../../formats/formats.h"
#include "spmm_shared.h"

static void shape(int k, const sdi_spmm_stats *st, sdi_spmm_config *c)
{
    c->nzpar = sdi_spmm_pick_nzpar(c->klanes, st->row_mean);
    c->long_nzpar = 32 / c->klanes;
    c->chunk = k <= 32 ? 256 : 128;
    c->split_threshold = c->chunk;
    c->split_mode = SDI_SPLIT_FIXUP;
}

/* segments: the head run's copy, 32 floats of B in flight, the finisher's loads */
static int acc(const sdi_spmm_config *c)
{
    return sdi_spmm_split_segmented(c) ? 2 * c->coarsen * c->vec + 40 : c->coarsen * c->vec;
}

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            return SDI_ERR(SD_ERR_INVALID_ARG, __VA_ARGS__);                               \
    } while (0)

static sd_status check(const sdi_spmm_config *c, const char *n)
{
    sd_status s = sdi_spmm_check_group(c, n);
    if (s != SD_OK)
        return s;
    CHECK(c->long_nzpar * c->klanes == 32, "%s: long groups must be full warps (kl %d × %d)",
          n, c->klanes, c->long_nzpar);
    CHECK(c->chunk >= 1 && c->split_threshold >= c->chunk, "%s: need 1 <= CH (%d) <= T (%d)",
          n, c->chunk, c->split_threshold);
    CHECK(c->split_mode == SDI_SPLIT_ATOMIC || c->split_mode == SDI_SPLIT_FIXUP ||
              c->split_mode == SDI_SPLIT_SEGMENTS || c->split_mode == SDI_SPLIT_SEGATOMIC,
          "%s: split_mode %d", n, c->split_mode);
    CHECK(!sdi_spmm_split_segmented(c) || c->nzpar == 1,
          "%s: segments take groups of klanes lanes (nzpar %d, must be 1)", n, c->nzpar);
    return SD_OK;
}

static const char *mode_word(int mode)
{
    return mode == SDI_SPLIT_SEGATOMIC  ? "segatomic"
           : mode == SDI_SPLIT_SEGMENTS ? "segments"
           : mode == SDI_SPLIT_FIXUP    ? "fixup"
                                        : "atomic";
}

static void describe(const sdi_spmm_config *c, const char *n, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s k=%d w=%d kl=%d nz=%d v=%d co=%d T=%d CH=%d %s", n, c->k, c->warps,
             c->klanes, c->nzpar, c->vec, c->coarsen, c->split_threshold, c->chunk,
             mode_word(c->split_mode));
}

static sd_status sweep(const sd_csr *a, int k, const sdi_spmm_stats *st, int level,
                       sdi_spmm_cfgs *l)
{
    (void)a;
    sdi_spmm_config base, c;
    sd_status s = sdi_spmm_config_default(SDI_SPMM_CSR_SPLIT, k, st, &base);
    if (s != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    s = sdi_spmm_cfgs_push(l, &base, st);
    if (s != SD_OK || level == 0)
        return s;
    /* Segments (equal nonzeros per group, so that no group walks a long row alone:
     * small skewed matrices, where the longest row's chain of loads is the time) take
     * the first and third places after the default, so that a search trying three
     * members tries both dataflows; the wide sweep adds longer segments and half
     * coarsening after the chunk members. */
    /* Each segment length in both finishes: atomic sums first (one load finishes a
     * cut row, however many segments it spans), then the ordered, reproducible one.
     * Segments of 8 entries (one batch of loads) only with atomic sums: with ordered
     * partials a long row's finish would be a chain of hundreds. */
    sdi_spmm_config seg[20];
    int nseg = 0;
    static const int seg_chunks[] = {32, 16, 8, 64, 128};
    for (int ci = 0; ci < (level >= 2 ? 5 : 3); ci++)
        for (int half = 0; half < (level >= 2 && base.coarsen > 1 ? 2 : 1); half++)
            for (int m = 0; m < (seg_chunks[ci] == 8 ? 1 : 2); m++) {
                c = base;
                c.split_mode = m == 0 ? SDI_SPLIT_SEGATOMIC : SDI_SPLIT_SEGMENTS;
                c.nzpar = 1;
                c.chunk = c.split_threshold = seg_chunks[ci];
                c.coarsen = half ? base.coarsen / 2 : base.coarsen;
                if (st->row_max > c.chunk / 2) /* else every row fits in a segment */
                    seg[nseg++] = c;
            }
    int used = 0;
    const int at0 = l->n; /* members after the default */
    static const int chunks[] = {64, 256, 1024};
    for (int ci = 0; ci < 3; ci++)
        for (int mode = 0; mode < 2; mode++) {
            if (used < nseg && used < 2 && (l->n - at0 == 0 || l->n - at0 == 2)) {
                if ((s = sdi_spmm_cfgs_push(l, &seg[used++], st)) != SD_OK)
                    return s;
            }
            if (st->row_max <= 64)
                continue; /* nothing to split in chunks: the row-wise template covers it */
            c = base;
            c.chunk = chunks[ci];
            c.split_threshold = chunks[ci];
            c.split_mode = mode;
            if (c.chunk >= st->row_max)
                continue;
            if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
                return s;
            if (level >= 2) {
                c.split_threshold = 4 * chunks[ci];
                if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
                    return s;
            }
        }
    for (; used < nseg; used++)
        if ((s = sdi_spmm_cfgs_push(l, &seg[used], st)) != SD_OK)
            return s;
    if (sdi_spmm_light_fits(&base, st)) { /* the chunked default at the light cap, last */
        c = base;
        c.regcap = SPMM_REGCAP_LIGHT;
        if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
            return s;
    }
    return SD_OK;
}

/* ------------------------------------------------------------------ lowering */

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

static sd_status split_macros(sdi_lowered *l, const sdi_spmm_config *c, int threads, int big,
                              int nz, int nzl, int nkernels)
{
    snprintf(l->template_name, sizeof l->template_name, "%s", "spmm_csr_split.cuh");
    sd_status s = sdi_spmm_common_macros(l, c, threads, big);
    sdi_spmm_macro(&s, l, "SD_WARPS", c->warps);
    sdi_spmm_macro(&s, l, "SD_KL", c->klanes);
    sdi_spmm_macro(&s, l, "SD_NZ", nz);
    sdi_spmm_macro(&s, l, "SD_NZL", nzl);
    sdi_spmm_macro(&s, l, "SD_V", c->vec);
    sdi_spmm_macro(&s, l, "SD_CO", c->coarsen);
    sdi_spmm_macro(&s, l, "SD_MODE", c->split_mode);
    if (s == SD_OK)
        s = sdi_spmm_name_kernels(l, "csr_split", nkernels);
    return s;
}

/* Segments (SDI_SPLIT_SEGMENTS / SEGATOMIC): CH consecutive entries per group of klanes
 * lanes, rows from a COO row index; a run of a row cut by a segment boundary leaves its
 * partial in ws (SEGMENTS: two slots per segment, its head run and its tail run; SEGATOMIC:
 * added into one slot per cut row) and the last of the row's segments to arrive (cnt, per the
 * row's first segment and K tile) sums them or reads the row's slot. */
static sd_status lower_segments(sdi_lowered *l, const sd_csr *a, const sdi_spmm_config *c,
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
#define SD_FREE_ALL ((void)0) /* what was added belongs to l (freed by the caller) */
    SD_TRY(split_macros(l, c, threads, big, 1, 32 / c->klanes, 1));
    int irp = -1, iri = -1, ici = -1, iva = -1, iws = -1, icn = -1;
    SD_TRY(sdi_spmm_csr_arrays(l, a, c->rp64, &irp, &ici, &iva));
    int32_t *ri = sdi_fmt_row_indices(a);
    if (ri == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the segments' row indices");
    SD_TRY(sdi_spmm_add_array(l, "rowind", ri, (size_t)a->nnz * 4, SDI_LOW_META, 1, NULL, 0,
                              &iri));
    SD_TRY(sdi_spmm_add_array(l, "ws", NULL, (size_t)nseg * slots * (size_t)c->k * 4,
                              SDI_LOW_WORK, 0, NULL, 0, &iws));
    SD_TRY(sdi_spmm_add_array(l, "cnt", NULL, (size_t)nseg * (size_t)tiles * 4, SDI_LOW_WORK, 0,
                              NULL, 0, &icn));
    l->slots = a->nnz;
    l->chunks = nseg;
    /* atomic sums only where some row spans two segments */
    l->atomics = !(c->split_mode == SDI_SPLIT_SEGMENTS || !segments_cut_a_row(a, c->chunk));
    if (a->rows > 0) {
        sdi_low_launch *x = sdi_spmm_add_launch(l, 0, (nseg + gpc - 1) / gpc, tiles, threads);
        sdi_spmm_arg_array(x, irp);
        sdi_spmm_arg_array(x, iri);
        sdi_spmm_arg_array(x, ici);
        sdi_spmm_arg_array(x, iva);
        sdi_spmm_arg_array(x, iws);
        sdi_spmm_arg_array(x, icn);
        sdi_spmm_arg_in(x);
        sdi_spmm_arg_out(x);
        sdi_spmm_arg_i32(x, a->rows);
        sdi_spmm_arg_i64(x, a->nnz);
        sdi_spmm_arg_i32(x, c->chunk);
        sdi_spmm_arg_i32(x, nseg);
    }
#undef SD_FREE_ALL
    return SD_OK;
}

static sd_status lower(sdi_lowered *l, const sd_csr *a, const sdi_spmm_config *c, int big)
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
    SD_TRY(split_macros(l, c, threads, big, c->nzpar, c->long_nzpar,
                        c->split_mode == SDI_SPLIT_ATOMIC ? 2 : 1));
    int irp = -1, ici = -1, iva = -1, icr = -1, ics = -1, icl = -1, ilf = -1, iws = -1, icn = -1;
    SD_TRY(sdi_spmm_csr_arrays(l, a, c->rp64, &irp, &ici, &iva));
    /* chunk arrays: the lists move into the description (ownership transferred) */
    size_t nc = (size_t)sp.nchunks;
    s = sdi_spmm_add_array(l, "chunk_row", sp.chunk_row, nc * 4, SDI_LOW_META, 1, NULL, 0, &icr);
    sp.chunk_row = NULL;
    SD_TRY(s);
    SD_TRY(sdi_spmm_rp_array(l, "chunk_start", sp.chunk_start, sp.nchunks, c->rp64, &ics));
    if (c->rp64) { /* borrowed by the row-pointer array: hand the ownership over */
        l->arr[ics].owned = 1;
        sp.chunk_start = NULL;
    }
    if (c->split_mode == SDI_SPLIT_FIXUP) {
        s = sdi_spmm_add_array(l, "chunk_long", sp.chunk_long, nc * 4, SDI_LOW_META, 1, NULL, 0,
                               &icl);
        sp.chunk_long = NULL;
        SD_TRY(s);
        int32_t *lf = sdi_malloc_array((size_t)sp.nlong + 1, sizeof *lf);
        SD_CHECK_ALLOC(lf, "long-row chunk offsets");
        for (int32_t i = 0; i <= sp.nlong; i++)
            lf[i] = (int32_t)sp.long_first[i];
        SD_TRY(sdi_spmm_add_array(l, "long_first", lf, ((size_t)sp.nlong + 1) * 4, SDI_LOW_META,
                                  1, NULL, 0, &ilf));
        SD_TRY(sdi_spmm_add_array(l, "ws", NULL, nc * (size_t)c->k * 4, SDI_LOW_WORK, 0, NULL, 0,
                                  &iws));
        SD_TRY(sdi_spmm_add_array(l, "cnt", NULL, (size_t)sp.nlong * (size_t)tiles * 4,
                                  SDI_LOW_WORK, 0, NULL, 0, &icn));
    }
    l->slots = a->nnz;
    l->long_rows = sp.nlong;
    l->chunks = sp.nchunks;
    l->atomics = !(c->split_mode == SDI_SPLIT_FIXUP || sp.nchunks == 0);
    int64_t nb_short = ((int64_t)a->rows + gpc - 1) / gpc;
    int64_t nb_long = ((int64_t)sp.nchunks + c->warps - 1) / c->warps;
    if (c->split_mode == SDI_SPLIT_ATOMIC) {
        if (a->rows > 0) {
            sdi_low_launch *x = sdi_spmm_add_launch(l, 0, nb_short, tiles, threads);
            sdi_spmm_arg_array(x, irp);
            sdi_spmm_arg_array(x, ici);
            sdi_spmm_arg_array(x, iva);
            sdi_spmm_arg_in(x);
            sdi_spmm_arg_out(x);
            sdi_spmm_arg_i32(x, a->rows);
            sdi_spmm_arg_i32(x, c->split_threshold);
            sdi_spmm_arg_i32(x, c->chunk);
        }
        if (sp.nchunks > 0) {
            sdi_low_launch *x = sdi_spmm_add_launch(l, 1, nb_long, tiles, threads);
            sdi_spmm_arg_array(x, irp);
            sdi_spmm_arg_array(x, ici);
            sdi_spmm_arg_array(x, iva);
            sdi_spmm_arg_array(x, icr);
            sdi_spmm_arg_array(x, ics);
            sdi_spmm_arg_in(x);
            sdi_spmm_arg_out(x);
            sdi_spmm_arg_i32(x, a->rows);
            sdi_spmm_arg_i32(x, c->split_threshold);
            sdi_spmm_arg_i32(x, c->chunk);
            sdi_spmm_arg_i32(x, sp.nchunks);
        }
    } else if (a->rows > 0) {
        sdi_low_launch *x = sdi_spmm_add_launch(l, 0, nb_short + nb_long, tiles, threads);
        sdi_spmm_arg_array(x, irp);
        sdi_spmm_arg_array(x, ici);
        sdi_spmm_arg_array(x, iva);
        sdi_spmm_arg_array(x, icr);
        sdi_spmm_arg_array(x, ics);
        sdi_spmm_arg_array(x, icl);
        sdi_spmm_arg_array(x, ilf);
        sdi_spmm_arg_array(x, iws);
        sdi_spmm_arg_array(x, icn);
        sdi_spmm_arg_in(x);
        sdi_spmm_arg_out(x);
        sdi_spmm_arg_i32(x, a->rows);
        sdi_spmm_arg_i32(x, c->split_threshold);
        sdi_spmm_arg_i32(x, c->chunk);
        sdi_spmm_arg_i32(x, sp.nchunks);
        sdi_spmm_arg_i32(x, nb_short);
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ the entry */

/* Under "csr" first when rows are imbalanced (row_cv > 1); COO's nonzero balance. */
static int rank(const sdi_task *t, const char *label)
{
    if (strcmp(label, "csr") == 0)
        return sdi_spmm_feature(t, "row_cv") > 1.0 ? 0 : -1;
    return strcmp(label, "coo") == 0 ? 0 : -1;
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    return sdi_spmm_hook_defaults(t, SDI_SPMM_CSR_SPLIT, out);
}

static sd_status sweep_hook(const sdi_task *t, int level, sdi_plan_list *out)
{
    return sdi_spmm_hook_sweep(t, SDI_SPMM_CSR_SPLIT, level, out);
}

static const char *dataflow(const sdi_plan *p)
{
    return mode_word(p->p.spmm.split_mode);
}

static bool uses_atomics(const sdi_plan *p)
{
    return p->p.spmm.split_mode == SDI_SPLIT_ATOMIC || p->p.spmm.split_mode == SDI_SPLIT_SEGATOMIC;
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    (void)p;
    if (cap > 0)
        buf[0] = '\0';
    return false;
}

const sdi_family sdi_family_spmm_csr_split = {
    .name = "csr_split",
    .op = SD_OP_SPMM,
    .id = SDI_SPMM_CSR_SPLIT,
    .layout = "csr",
    .decomposition = "nonzero_split",
    .stats = SDI_STATS_SPMM,
    .diag = SDI_DIAG_FOR_IMBALANCE,
    .rank = rank,
    .defaults = defaults,
    .sweep = sweep_hook,
    .check = sdi_spmm_hook_check,
    .lower = sdi_spmm_hook_lower,
    .dataflow = dataflow,
    .uses_atomics = uses_atomics,
    .vo_label = vo_label,
};

const sdi_spmm_ops sdi_spmm_ops_csr_split = {
    .fam = &sdi_family_spmm_csr_split,
    .shape = shape,
    .acc = acc,
    .check = check,
    .describe = describe,
    .sweep = sweep,
    .lower = lower,
};
