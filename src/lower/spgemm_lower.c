/* src/lower/spgemm_lower.c: SpGEMM schedule → CUDA source. Each launch becomes one
 * kernel whose blocks are dealt to its segments by the block ranges in the argument
 * block (seg_end); a segment calls the row template of its bin kind with the kind's
 * sizes as template arguments. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spgemm_lower.h"

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
static void seg_call(text *t, int kind, int g, int p, int phase, int threads, int index,
                     const char *lb)
{
    switch (kind) {
    case SDI_SG_TINY:
        text_add(t, "sg_seg_tiny<%d, %d, %d>", p, phase, threads);
        break;
    case SDI_SG_GHASH:
        text_add(t, "sg_seg_ghash<%d, %d, %d, %d>", g, p, phase, threads);
        break;
    case SDI_SG_GDENSE:
        text_add(t, "sg_seg_gdense<%d, %d, %d, %d>", g, 1 << p, phase, threads);
        break;
    case SDI_SG_CHASH:
        text_add(t, "sg_seg_chash<%d, %d, %d>", p, phase, threads);
        break;
    case SDI_SG_CDENSE:
        text_add(t, "sg_seg_cdense<%d, %d, %d>", 1 << p, phase, threads);
        break;
    case SDI_SG_GLOBAL:
        text_add(t, "sg_seg_global<%d, %d>", phase, threads);
        break;
    default: /* SDI_SG_COPY */
        text_add(t, "sg_seg_copy<%d>", threads);
        break;
    }
    text_add(t, "(a, %d, %s, sd_sg_smem);", index, lb);
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

void sdi_sg_lowered_free(sdi_sg_lowered *l)
{
    if (l == NULL)
        return;
    sdi_free(l->source);
    sdi_free(l->names);
    memset(l, 0, sizeof *l);
}

sd_status sdi_spgemm_lower(const sdi_sg_schedule *s, sdi_sg_lowered *out)
{
    text t = {0};
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(t.buf);                                                                   \
        sdi_sg_lowered_free(out);                                                          \
    } while (0)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: out is NULL");
    memset(out, 0, sizeof *out);
    if (s == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spgemm lower: schedule is NULL");
    /* The key: the launch shapes only (threads, then kind/lanes/size/phase per segment). */
    int32_t shape[SDI_SG_MAX_LAUNCHES * (2 + 4 * SD_SG_MAX_SEGS)];
    size_t ns = 0;
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        shape[ns++] = L->threads;
        shape[ns++] = L->nsegs;
        for (int q = 0; q < L->nsegs; q++) {
            shape[ns++] = L->segs[q].kind;
            shape[ns++] = L->segs[q].g;
            shape[ns++] = L->segs[q].p;
            shape[ns++] = L->segs[q].phase;
        }
    }
    sdi_hash128 h = sdi_hash_bytes(shape, ns * sizeof shape[0], 0x5347454d4dull);
    snprintf(out->hex, sizeof out->hex, "%016llx", (unsigned long long)h.lo);
    out->nkernels = s->nlaunches;
    out->names = sdi_malloc_array((size_t)(s->nlaunches > 0 ? s->nlaunches : 1),
                                  sizeof *out->names);
    SD_CHECK_ALLOC(out->names, "kernel names");
    text_add(&t, "// generated by src/lower/spgemm_lower.c: SpGEMM launches %s\n", out->hex);
    text_add(&t, "#include \"spgemm_scan.cuh\"\n");
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        snprintf(out->names[l], SDI_SG_KERNEL_NAME, "sd_spgemm_%s_l%d", out->hex, l);
        int kind[SD_SG_MAX_SEGS], g[SD_SG_MAX_SEGS], p[SD_SG_MAX_SEGS], ph[SD_SG_MAX_SEGS];
        for (int q = 0; q < L->nsegs; q++) {
            kind[q] = L->segs[q].kind;
            g[q] = L->segs[q].g;
            p[q] = L->segs[q].p;
            ph[q] = L->segs[q].phase;
        }
        kernel_text(&t, out->names[l], L->threads, L->nsegs, kind, g, p, ph);
    }
    if (t.failed) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the SpGEMM source");
    }
    out->source = t.buf;
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
    text_add(&t, "#include \"spgemm_scan.cuh\"\n");
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
