/* src/lower/spgemm_units.c: SpGEMM schedule → CUDA compile units. Each distinct launch
 * shape becomes one unit holding one kernel, whose blocks are dealt to its segments by
 * the block ranges in the argument block (seg_end); a segment calls the row template of
 * its bin kind with the kind's sizes as template arguments. Also a plan's lowering (the
 * SpGEMM families' `lower` hook) and the parallel precompilation of many plans' units.
 * The generated sources still name src/lower/spgemm_lower.c in their first line: the
 * sources are the units' identity in the memo and the JIT cache, so they stay
 * byte-identical. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/context.h"
#include "../runtime/jit.h"
#include "../runtime/memo.h"
#include "../runtime/spgemm_exec.h"
#include "spgemm_units.h"

/* ------------------------------------------------------------------ text buffer */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} text;

static void text_add(text *t, const char *fmt, ...) SDI_PRINTF(2, 3);
static void text_add(text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf != NULL ? t->buf + t->len : NULL,
                          t->buf != NULL ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->buf != NULL && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap > 0 ? t->cap * 2 : 4096;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *nb = sdi_realloc_array(t->buf, cap, 1);
        if (nb == NULL) {
            t->failed = 1;
            return;
        }
        t->buf = nb;
        t->cap = cap;
    }
}

/* ------------------------------------------------------------------ segments */
/* The segment template's instantiation, e.g. "sg_seg_chash<13, 1, 256>". */
static void seg_template(text *t, int kind, int g, int p, int phase, int threads)
{
    switch (kind) {
    case SDI_SG_TINY:
        text_add(t, "sg_seg_tiny<%d, %d, %d>", p, phase, threads);
        break;
    case SDI_SG_GHASH:
        text_add(t, "sg_seg_ghash<%d, %d, %d, %d>", g, p, phase, threads);
        break;
    case SDI_SG_GDENSE:
        text_add(t, "sg_seg_gdense<%d, %lld, %d, %d>", g, (long long)sdi_sg_stripe_cols(p), phase, threads);
        break;
    case SDI_SG_CHASH:
        text_add(t, "sg_seg_chash<%d, %d, %d>", p, phase, threads);
        break;
    case SDI_SG_CDENSE:
        text_add(t, "sg_seg_cdense<%lld, %d, %d>", (long long)sdi_sg_stripe_cols(p), phase, threads);
        break;
    case SDI_SG_GLOBAL:
        text_add(t, "sg_seg_global<%d, %d>", phase, threads);
        break;
    default: /* SDI_SG_COPY */
        text_add(t, "sg_seg_copy<%d>", threads);
        break;
    }
}

static void seg_call(text *t, int kind, int g, int p, int phase, int threads, int index,
                     const char *lb)
{
    seg_template(t, kind, g, p, phase, threads);
    text_add(t, "(a, %d, %s, sd_sg_smem);", index, lb);
}

/* The relocatable function of a segment variant: its name depends on the variant only. */
static void variant_name(char *buf, size_t cap, int kind, int g, int p, int phase, int threads)
{
    snprintf(buf, cap, "sgv_%s_g%d_p%s%d_ph%d_t%d", sdi_sg_kind_name(kind), g, p < 0 ? "m" : "",
             p < 0 ? -p : p, phase, threads);
}

/* The define every row-kernel source of a schedule starts with: the configuration's
 * warp_brow (sdi_spgemm_config), or SG_WARP_BROW 0 under SPARSEDITTO_SG_WARP_BROW=0 (for
 * side-by-side measurements); nothing for the template's default, so that the default
 * sources (and their JIT cache entries) stay as they were. */
static void warp_brow_define(text *t, int32_t warp_brow)
{
    if (!sdi_config_get()->sg_warp_brow || warp_brow < 0)
        text_add(t, "#define SG_WARP_BROW 0\n");
    else if (warp_brow > 0)
        text_add(t, "#define SG_WARP_BROW %d\n", (int)warp_brow);
}

/* One kernel: segments in order, block b goes to the first segment whose end exceeds b. */
static void kernel_text(text *t, const char *name, int threads, int nsegs, const int *kind,
                        const int *g, const int *p, const int *phase)
{
    text_add(t, "\nSD_KERNEL void SD_LAUNCH_BOUNDS(%d) %s(const sd_spgemm_args a)\n{\n", threads,
             name);
    text_add(t, "    extern __shared__ __align__(16) unsigned char sd_sg_smem[];\n");
    text_add(t, "    const int b = (int)blockIdx.x;\n");
    for (int q = 0; q < nsegs; q++) {
        char lb[48];
        if (q == 0)
            snprintf(lb, sizeof lb, "b");
        else
            snprintf(lb, sizeof lb, "b - a.seg_end[%d]", q - 1);
        if (q + 1 < nsegs)
            text_add(t, "    if (b < a.seg_end[%d]) {\n        ", q);
        else
            text_add(t, "    {\n        ");
        seg_call(t, kind[q], g[q], p[q], phase[q], threads, q, lb);
        text_add(t, "\n        return;\n    }\n");
    }
    text_add(t, "}\n");
}

/* The shape of a launch (what its kernel's text depends on): threads, nsegs, then kind,
 * lanes, size and phase per segment. Returns the number of words. */
enum { SHAPE_MAX = 2 + 4 * SD_SG_MAX_SEGS };
static int launch_shape(const sdi_sg_launch *L, int32_t shape[SHAPE_MAX])
{
    int n = 0;
    memset(shape, 0, SHAPE_MAX * sizeof shape[0]);
    shape[n++] = L->threads;
    shape[n++] = L->nsegs;
    for (int q = 0; q < L->nsegs; q++) {
        shape[n++] = L->segs[q].kind;
        shape[n++] = L->segs[q].g;
        shape[n++] = L->segs[q].p;
        shape[n++] = L->segs[q].phase;
    }
    return n;
}

/* One unit's source: the row templates (not the scan, compiled on its own) and the kernel. */
static sd_status unit_text(const sdi_sg_launch *L, int32_t warp_brow, const char *name,
                           char **source)
{
    text t = {0};
    int kind[SD_SG_MAX_SEGS], g[SD_SG_MAX_SEGS], p[SD_SG_MAX_SEGS], ph[SD_SG_MAX_SEGS];
    for (int q = 0; q < L->nsegs; q++) {
        kind[q] = L->segs[q].kind;
        g[q] = L->segs[q].g;
        p[q] = L->segs[q].p;
        ph[q] = L->segs[q].phase;
    }
    text_add(&t, "// generated by src/lower/spgemm_lower.c: SpGEMM launch unit %s\n", name);
    /* The warp-per-B-row threshold (a configuration's, or off under
     * SPARSEDITTO_SG_WARP_BROW=0): the source differs, so the memo and the JIT cache keep
     * each. */
    warp_brow_define(&t, warp_brow);
    text_add(&t, "#include \"spgemm_rows.cuh\"\n");
    kernel_text(&t, name, L->threads, L->nsegs, kind, g, p, ph);
    if (t.failed) {
        sdi_free(t.buf);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the SpGEMM source");
    }
    *source = t.buf;
    return SD_OK;
}

/* The linked form of a unit (sdi_sg_unit): one part per segment variant and the dispatch.
 * The kernel takes its arguments as a __grid_constant__ parameter and passes its address.
 * A part must not leave the compiler guessing address spaces (H200: a linked form that
 * takes the shared-memory base as a pointer argument and reads the arguments through a
 * reference runs 13 of 14 quick-set products slower, with every hash-table access and
 * atomic generic in its PTX): it declares the dynamic shared memory itself, and
 * copies the arguments once, so that the fields live in registers and no store to C can
 * alias them. The segment's three words go to slot 0 of the copy and the template is
 * called with segment 0, so the per-segment arrays are indexed by a constant and the copy
 * needs no local memory. */
static sd_status unit_link_text(const sdi_sg_launch *L, int32_t warp_brow, const char *name,
                                sdi_sg_unit *U)
{
    char vn[SD_SG_MAX_SEGS][64];
    for (int q = 0; q < L->nsegs; q++) {
        const sdi_sg_segment *g = &L->segs[q];
        variant_name(vn[q], sizeof vn[q], g->kind, g->g, g->p, g->phase, L->threads);
        text pt = {0};
        text_add(&pt, "// generated by src/lower/spgemm_lower.c: SpGEMM segment variant %s "
                      "(relocatable, linked into launch units)\n", vn[q]);
        warp_brow_define(&pt, warp_brow);
        text_add(&pt, "#include \"spgemm_rows.cuh\"\n");
        text_add(&pt, "extern \"C\" __device__ __noinline__ void %s(const sd_spgemm_args *ap, int seg, "
                      "int lb)\n{\n", vn[q]);
        text_add(&pt, "    extern __shared__ __align__(16) unsigned char sd_sg_smem[];\n"
                      "    sd_spgemm_args a = *ap;\n"
                      "    a.seg_first[0] = ap->seg_first[seg];\n"
                      "    a.seg_rows[0] = ap->seg_rows[seg];\n"
                      "    a.seg_end[0] = ap->seg_end[seg] - (seg > 0 ? ap->seg_end[seg - 1] : 0);\n"
                      "    ");
        seg_template(&pt, g->kind, g->g, g->p, g->phase, L->threads);
        text_add(&pt, "(a, 0, lb, sd_sg_smem);\n}\n");
        if (pt.failed) {
            sdi_free(pt.buf);
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the SpGEMM source");
        }
        U->parts[U->nparts++] = pt.buf;
    }
    text t = {0};
    text_add(&t, "// generated by src/lower/spgemm_lower.c: SpGEMM launch unit %s, linked from "
                 "its segment variants\n#include \"spgemm_abi.cuh\"\n", name);
    for (int q = 0; q < L->nsegs; q++)
        text_add(&t, "extern \"C\" __device__ void %s(const sd_spgemm_args *ap, int seg, int lb);\n",
                 vn[q]);
    text_add(&t, "\nSD_KERNEL void SD_LAUNCH_BOUNDS(%d) %s(const __grid_constant__ sd_spgemm_args a)\n{\n",
             L->threads, name);
    text_add(&t, "    const int b = (int)blockIdx.x;\n");
    for (int q = 0; q < L->nsegs; q++) {
        if (q + 1 < L->nsegs)
            text_add(&t, "    if (b < a.seg_end[%d]) {\n", q);
        else
            text_add(&t, "    {\n");
        if (q == 0)
            text_add(&t, "        %s(&a, 0, b);\n", vn[q]);
        else
            text_add(&t, "        %s(&a, %d, b - a.seg_end[%d]);\n", vn[q], q, q - 1);
        text_add(&t, "        return;\n    }\n");
    }
    text_add(&t, "}\n");
    if (t.failed) {
        sdi_free(t.buf);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the SpGEMM source");
    }
    U->link_source = t.buf;
    /* __launch_bounds__(T) caps a whole kernel's registers at 64 Ki / T (≤ 255); the parts,
     * compiled apart, get that cap explicitly */
    const int cap = 65536 / (L->threads > 0 ? L->threads : 256);
    U->maxrreg = cap < 255 ? cap : 0;
    return SD_OK;
}

sd_status sdi_spgemm_lower(const sdi_sg_schedule *s, sdi_sg_lowered *out)
{
#define SD_FREE_ALL sdi_sg_lowered_free(out)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: out is NULL");
    memset(out, 0, sizeof *out);
    if (s == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: schedule is NULL");
    out->fast = s->fast;
    if (s->nlaunches < 0 || s->nlaunches > SDI_SG_MAX_LAUNCHES)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: %d launches (at most %d)",
                       s->nlaunches, SDI_SG_MAX_LAUNCHES);
    int32_t shapes[SDI_SG_MAX_LAUNCHES][SHAPE_MAX];
    int shape_len[SDI_SG_MAX_LAUNCHES];
    for (int l = 0; l < s->nlaunches; l++) {
        if (s->launches[l].nsegs < 0 || s->launches[l].nsegs > SD_SG_MAX_SEGS)
            return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: launch %d has %d segments", l,
                           s->launches[l].nsegs);
        shape_len[l] = launch_shape(&s->launches[l], shapes[l]);
    }
    /* The schedule's identity: every launch shape in order (labels and logs only). */
    sdi_hash128 h = sdi_hash_bytes(shapes, (size_t)s->nlaunches * sizeof shapes[0], 0x5347454d4dull);
    snprintf(out->hex, sizeof out->hex, "%016llx", (unsigned long long)h.lo);
    const size_t n1 = (size_t)(s->nlaunches > 0 ? s->nlaunches : 1);
    out->unit_of = sdi_malloc_array(n1, sizeof *out->unit_of);
    out->units = sdi_calloc(n1, sizeof *out->units);
    SD_CHECK_ALLOC(out->unit_of, "launch units");
    SD_CHECK_ALLOC(out->units, "launch units");
    out->nkernels = s->nlaunches;
    const bool link = sdi_config_get()->sg_link;
    for (int l = 0; l < s->nlaunches; l++) {
        /* A shape seen earlier in this schedule reuses its unit (exact comparison, not
         * the hash: a collision must not merge two kernels). */
        int u = -1;
        for (int q = 0; q < l && u < 0; q++)
            if (shape_len[q] == shape_len[l] &&
                memcmp(shapes[q], shapes[l], (size_t)shape_len[l] * sizeof shapes[l][0]) == 0)
                u = out->unit_of[q];
        if (u < 0) {
            u = out->nunits;
            sdi_sg_unit *U = &out->units[u];
            sdi_hash128 hu = sdi_hash_bytes(shapes[l], (size_t)shape_len[l] * sizeof shapes[l][0],
                                            0x53475f554e4954ull);
            snprintf(U->name, sizeof U->name, "sd_sg_%016llx", (unsigned long long)hu.lo);
            out->nunits++; /* before its texts: freed with the rest on failure */
            SD_TRY(unit_text(&s->launches[l], s->warp_brow, U->name, &U->source));
            if (link)
                SD_TRY(unit_link_text(&s->launches[l], s->warp_brow, U->name, U));
        }
        out->unit_of[l] = u;
    }
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_spgemm_lower_all_variants(int threads, char **source)
{
    text t = {0};
    if (source == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: source is NULL");
    *source = NULL;
    text_add(&t, "// every SpGEMM template variant at %d threads (compile test)\n", threads);
    text_add(&t, "#include \"spgemm_rows.cuh\"\n");
    static const int phases[3] = {SD_SG_PH_SYM, SD_SG_PH_NUM, SD_SG_PH_ONE};
    enum { MAXV = 64 };
    for (int kd = 0; kd < SDI_SG_NKINDS; kd++) {
        for (int ph = 0; ph < 3; ph++) {
            if (kd == SDI_SG_COPY && ph > 0)
                break;
            int kind[MAXV], g[MAXV], p[MAXV], phase[MAXV], n = 0;
#define VAR(G, P)                                                                          \
    do {                                                                                   \
        kind[n] = kd;                                                                      \
        g[n] = (G);                                                                        \
        p[n] = (P);                                                                        \
        phase[n] = phases[ph];                                                             \
        n++;                                                                               \
    } while (0)
            switch (kd) {
            case SDI_SG_TINY:
                VAR(0, 8);
                VAR(0, 32);
                break;
            case SDI_SG_GHASH:
                for (int gg = 8; gg <= 32; gg *= 2)
                    for (int pp = 6; pp <= 12; pp++)
                        VAR(gg, pp);
                break;
            case SDI_SG_GDENSE:
                for (int gg = 8; gg <= 32; gg *= 2)
                    for (int pp = 5; pp <= 11; pp++)
                        VAR(gg, pp);
                break;
            case SDI_SG_CHASH:
                for (int pp = 6; pp <= 14; pp++)
                    VAR(0, pp);
                break;
            case SDI_SG_CDENSE:
                for (int pp = 5; pp <= 15; pp++)
                    VAR(0, pp);
                VAR(0, -1410); /* a wide stripe: 45,120 columns (Belcastro_mouse_gene's C) */
                break;
            default: /* global, copy */
                VAR(0, 0);
                break;
            }
#undef VAR
            /* A kernel holds at most SD_SG_MAX_SEGS segments: split long lists. */
            for (int first = 0, part = 0; first < n; first += SD_SG_MAX_SEGS, part++) {
                const int cnt = n - first < SD_SG_MAX_SEGS ? n - first : SD_SG_MAX_SEGS;
                char name[SDI_SG_KERNEL_NAME];
                snprintf(name, sizeof name, "sd_spgemm_all_%s_ph%d_%d", sdi_sg_kind_name(kd),
                         phases[ph], part);
                kernel_text(&t, name, threads, cnt, kind + first, g + first, p + first,
                            phase + first);
            }
        }
    }
    if (t.failed) {
        sdi_free(t.buf);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the SpGEMM source");
    }
    *source = t.buf;
    return SD_OK;
}

/* ------------------------------------------------------------------ plans */
sd_status sdi_spgemm_lower_config(const sdi_sg_limits *lim, const sdi_sg_rowinfo *ri,
                                  const sdi_spgemm_config *cfg, sdi_lowered *out)
{
#define SD_FREE_ALL (void)0
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: out is NULL");
    memset(out, 0, sizeof *out);
    if (lim == NULL || ri == NULL || cfg == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: NULL limits, rows or configuration");
    out->op = SD_OP_SPGEMM;
    out->k = 1;
    out->rows = ri->m;
    SD_TRY(sdi_sg_schedule_build(cfg, lim, ri, &out->sg));
    sd_status st = sdi_spgemm_lower(&out->sg, &out->sg_units);
    if (st != SD_OK) {
        sdi_sg_schedule_free(&out->sg);
        memset(out, 0, sizeof *out);
        return st;
    }
    out->bytes_work = out->sg.ws_bytes;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_spgemm_lower_plan(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
#define SD_FREE_ALL (void)0
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: out is NULL");
    memset(out, 0, sizeof *out);
    if (t == NULL || p == NULL || t->sg_rows == NULL || (t->sg_lim == NULL && t->gpu == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: NULL plan or task without C's rows");
    if (p->op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: not a SpGEMM plan");
    sdi_sg_limits lim;
    if (t->sg_lim != NULL)
        lim = *t->sg_lim;
    else
        sdi_sg_limits_from_props(t->gpu, &lim);
    SD_TRY(sdi_spgemm_lower_config(&lim, t->sg_rows, &p->p.spgemm, out));
    if (t->a != NULL) {
        out->rows = t->a->rows;
        out->cols = t->a->cols;
        out->nnz = t->a->nnz;
    }
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ precompilation */
sd_status sdi_spgemm_precompile(sd_context *ctx, const sdi_sg_rowinfo *ri,
                                const sdi_spgemm_config *cfgs, int n)
{
    sdi_sg_lowered *lows = NULL;
    sdi_jit_request *reqs = NULL;
    uint64_t *keys = NULL;
    int nlows = n > 0 ? n : 0;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        for (int q_ = 0; lows != NULL && q_ < nlows; q_++)                                 \
            sdi_sg_lowered_free(&lows[q_]);                                                \
        sdi_free(lows);                                                                    \
        sdi_free(reqs);                                                                    \
        sdi_free(keys);                                                                    \
    } while (0)
    if (ctx == NULL || ri == NULL || (n > 0 && cfgs == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm precompile: NULL argument");
    sdi_sg_limits lim;
    sdi_sg_limits_from_props(&ctx->props, &lim);
    lows = sdi_calloc((size_t)(nlows > 0 ? nlows : 1), sizeof *lows);
    SD_CHECK_ALLOC(lows, "lowered configurations");
    /* 1. Schedule and lower every configuration (host work, in parallel). */
    sd_status first = SD_OK;
#pragma omp parallel for schedule(dynamic, 1)
    for (int q = 0; q < n; q++) {
        sdi_sg_schedule s;
        if (sdi_sg_schedule_build(&cfgs[q], &lim, ri, &s) != SD_OK)
            continue;
        sd_status st = sdi_spgemm_lower(&s, &lows[q]);
        sdi_sg_schedule_free(&s);
        if (st != SD_OK) {
#pragma omp critical(sdi_spgemm_precompile)
            if (first == SD_OK)
                first = st;
        }
    }
    /* 2. The distinct units of all of them (equal shapes give equal sources), and the
     * scan: NVRTC runs once per distinct source, not once per configuration. */
    int total = 1;
    for (int q = 0; q < n; q++)
        for (int u = 0; u < lows[q].nunits; u++)
            total += 1 + lows[q].units[u].nparts;
    reqs = sdi_calloc((size_t)total, sizeof *reqs);
    keys = sdi_calloc((size_t)total, sizeof *keys);
    SD_CHECK_ALLOC(reqs, "precompile requests");
    SD_CHECK_ALLOC(keys, "precompile requests");
    int nreq = 0;
    sdi_spgemm_scan_request(&reqs[nreq++]);
    /* Linked units: their distinct relocatable parts first (compiled in parallel below, the
     * units then only link them), deduplicated across units and configurations. */
    for (int q = 0; q < n; q++)
        for (int u = 0; u < lows[q].nunits; u++) {
            sdi_jit_request unit;
            sdi_spgemm_unit_request(&lows[q], u, &unit);
            for (int p = 0; p < unit.nparts; p++) {
                const char *src = unit.parts[p];
                const uint64_t k = sdi_hash_bytes(src, strlen(src), 0).lo;
                bool seen = false;
                for (int r = 1; r < nreq && !seen; r++)
                    seen = keys[r] == k && strcmp(reqs[r].source, src) == 0;
                if (!seen) {
                    keys[nreq] = k;
                    sdi_jit_part_request(&unit, p, &reqs[nreq++]);
                }
            }
        }
    const int nparts_req = nreq;
    for (int q = 0; q < n; q++)
        for (int u = 0; u < lows[q].nunits; u++) {
            const char *src = lows[q].units[u].source;
            const uint64_t k = sdi_hash_bytes(src, strlen(src), 0).lo;
            bool seen = false;
            for (int r = nparts_req; r < nreq && !seen; r++)
                seen = keys[r] == k && strcmp(reqs[r].source, src) == 0;
            if (!seen) {
                keys[nreq] = k;
                sdi_spgemm_unit_request(&lows[q], u, &reqs[nreq++]);
            }
        }
    /* 3. Compile them in parallel (NVRTC is thread-safe; the memo keeps the results), the
     * longest sources first: a fused unit of many segments compiles for seconds (dblp-2010:
     * 1.3 s against 0.1–0.3 s for the others on the VM), and started last it would run
     * alone at the end of the batch. */
    for (int r = 1; r < nreq; r++)
        keys[r] = strlen(reqs[r].source); /* the hashes are done with: now the lengths */
    for (int r = 2; r < nreq; r++) {
        const sdi_jit_request x = reqs[r];
        const uint64_t lx = keys[r];
        int j = r - 1;
        /* within its group: the parts, then the units (a linked unit needs its parts) */
        const int lo = r < nparts_req ? 1 : nparts_req;
        for (; j >= lo && keys[j] < lx; j--) {
            reqs[j + 1] = reqs[j];
            keys[j + 1] = keys[j];
        }
        reqs[j + 1] = x;
        keys[j + 1] = lx;
    }
    for (int pass = 0; pass < 2; pass++) { /* parts (and the scan), then the units */
        const int r0 = pass == 0 ? 0 : nparts_req, r1 = pass == 0 ? nparts_req : nreq;
#pragma omp parallel for schedule(dynamic, 1)
        for (int r = r0; r < r1; r++) {
            const sdi_cubin *cb = NULL;
            sd_status st = sdi_jit_get(ctx, &reqs[r], &cb, NULL);
            if (st != SD_OK) {
#pragma omp critical(sdi_spgemm_precompile)
                if (first == SD_OK)
                    first = st;
            }
        }
    }
    SD_FREE_ALL;
    return first;
#undef SD_FREE_ALL
}

sd_status sdi_spgemm_precompile_plans(sd_context *ctx, const sdi_sg_rowinfo *ri,
                                      const sdi_plan *plans, int n)
{
    if (n > 0 && plans == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm precompile: NULL argument");
    sdi_spgemm_config *cfgs = sdi_malloc_array((size_t)(n > 0 ? n : 1), sizeof *cfgs);
    if (cfgs == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the precompiled plans");
    for (int q = 0; q < n; q++)
        cfgs[q] = plans[q].p.spgemm;
    sd_status s = sdi_spgemm_precompile(ctx, ri, cfgs, n);
    sdi_free(cfgs);
    return s;
}
