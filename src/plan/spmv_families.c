/* src/plan/spmv_families.c: the SpMV plan families: names, the config's text and JSON
 * forms, row statistics and structure probes, legality with static shared-memory bounds,
 * the default θ_H of each family and the candidate sweeps. */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/formats.h"
#include "spgemm.h"
#include "spmv.h"

static const char *const fam_names[SDI_SPMV_NFAMILIES] = {
    "csr_vec", "csr_adaptive", "merge", "tiny", "sell", "ell", "bsr", "tiles16", "coo", "dia",
};

const char *sdi_spmv_family_name(int family)
{
    return family >= 0 && family < SDI_SPMV_NFAMILIES ? fam_names[family] : "unknown";
}

int sdi_spmv_family_from_name(const char *name)
{
    for (int f = 0; name != NULL && f < SDI_SPMV_NFAMILIES; f++)
        if (strcmp(name, fam_names[f]) == 0)
            return f;
    return -1;
}

/* ------------------------------------------------------------------ text and JSON */
typedef struct {
    const char *key;
    size_t off;
    int flag; /* printed as a bare word when 1 */
} field_desc;

#define F(k, m) {k, offsetof(sdi_spmv_config, m), 0}
#define FLAG(k, m) {k, offsetof(sdi_spmv_config, m), 1}
static const field_desc fields[] = {
    F("t", block),   F("vw", vw),         F("vec", vec),      F("u", unroll),
    F("ipt", ipt),   F("tpc", tiles_per_cta), F("cap", cap),  F("maxr", maxr),
    F("piece", piece), F("C", c),         F("sigma", sigma),  F("tpr", tpr),
    F("rpt", rpt),   F("b", b),           F("g", g),          F("dense", dense_min),
    F("coo", coo_max), F("chunk", chunk), F("xwin", xwin),    FLAG("rp32", rp32),
    F("colc", colc), F("cshift", colc_shift), FLAG("stream", stream), FLAG("xs", xsmem),
};
#undef F
#undef FLAG
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

static int32_t *field_ptr(sdi_spmv_config *c, int i)
{
    return (int32_t *)((char *)c + fields[i].off);
}
static int32_t field_get(const sdi_spmv_config *c, int i)
{
    return *(const int32_t *)((const char *)c + fields[i].off);
}

void sdi_spmv_config_describe(const sdi_spmv_config *c, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    size_t o = (size_t)snprintf(buf, cap, "%s", sdi_spmv_family_name(c->family));
    for (int i = 0; i < NFIELDS && o < cap; i++) {
        int32_t v = field_get(c, i);
        if (v == 0)
            continue;
        if (fields[i].flag && v == 1)
            o += (size_t)snprintf(buf + o, cap - o, " %s", fields[i].key);
        else
            o += (size_t)snprintf(buf + o, cap - o, " %s=%d", fields[i].key, (int)v);
    }
}

sd_status sdi_spmv_config_parse(const char *text, sdi_spmv_config *out)
{
    if (text == NULL || out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config: NULL text or output");
    memset(out, 0, sizeof *out);
    char word[64];
    const char *p = text;
    int first = 1;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        size_t n = 0;
        while (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != ',')
            n++;
        if (n >= sizeof word)
            return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config: word too long in '%s'", text);
        memcpy(word, p, n);
        word[n] = '\0';
        p += n;
        if (first) {
            out->family = sdi_spmv_family_from_name(word);
            if (out->family < 0)
                return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config: unknown family '%s'", word);
            first = 0;
            continue;
        }
        char *eq = strchr(word, '=');
        const char *val = "1";
        if (eq != NULL) {
            *eq = '\0';
            val = eq + 1;
        }
        int i;
        for (i = 0; i < NFIELDS; i++)
            if (strcmp(word, fields[i].key) == 0)
                break;
        if (i == NFIELDS)
            return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config: unknown key '%s'", word);
        char *end = NULL;
        long v = strtol(val, &end, 10);
        if (end == val || *end != '\0' || v < INT32_MIN || v > INT32_MAX)
            return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config: bad value '%s' for %s", val, word);
        *field_ptr(out, i) = (int32_t)v;
    }
    if (first)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config: empty text");
    return SD_OK;
}

void sdi_spmv_config_json(const sdi_spmv_config *c, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "family");
    sdi_json_string(j, sdi_spmv_family_name(c->family));
    for (int i = 0; i < NFIELDS; i++) {
        int32_t v = field_get(c, i);
        if (v == 0)
            continue;
        sdi_json_key(j, fields[i].key);
        sdi_json_int(j, v);
    }
    char line[SDI_SPMV_CONFIG_TEXT];
    sdi_spmv_config_describe(c, line, sizeof line);
    sdi_json_key(j, "text");
    sdi_json_string(j, line);
    sdi_json_end_object(j);
}

/* ------------------------------------------------------------------ statistics */
/* Occupied b×b blocks for b = 2, 4, 8, 16 (blocks[lb]) and the nonzeros in 16×16 tiles of
 * ≥ 128: one block census per 16-row block row (a single merge of its rows). */
static void block_counts(const sd_csr *a, int64_t blocks[5], int64_t *dense_nnz)
{
    const int64_t nbr = ((int64_t)a->rows + 15) / 16;
    int64_t b2 = 0, b4 = 0, b8 = 0, b16 = 0, dense = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : b2, b4, b8, b16, dense)
    for (int64_t br = 0; br < nbr; br++) {
        sdi_block_census c;
        sdi_csr_block_census(a, br, 128, &c);
        b2 += c.occ[1];
        b4 += c.occ[2];
        b8 += c.occ[3];
        b16 += c.occ[4];
        dense += c.dense_nnz;
    }
    blocks[1] = b2;
    blocks[2] = b4;
    blocks[3] = b8;
    blocks[4] = b16;
    *dense_nnz = dense;
}

/* Distinct diagonals, capped: stops at cap + 1. */
static int count_diagonals(const sd_csr *a, int cap)
{
    int64_t set[80];
    int n = 0;
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int64_t d = (int64_t)a->colind[k] - i;
            int lo = 0, hi = n;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (set[mid] < d)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < n && set[lo] == d)
                continue;
            if (n == cap)
                return cap + 1;
            memmove(set + lo + 1, set + lo, (size_t)(n - lo) * sizeof *set);
            set[lo] = d;
            n++;
        }
    return n;
}

sd_status sdi_spmv_stats_compute(const sd_csr *a, sdi_spmv_stats *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv stats: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || a->rowptr == NULL || a->rows < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv stats: matrix is NULL or malformed");
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    double sum2 = 0;
    int64_t sell32 = 0;
    for (int64_t i = 0; i < a->rows; i++) {
        int64_t l = a->rowptr[i + 1] - a->rowptr[i];
        out->row_max = l > out->row_max ? l : out->row_max;
        out->rows_empty += l == 0;
        sum2 += (double)l * (double)l;
        int k = 0;
        while (k < 32 && ((int64_t)1 << k) <= l)
            k++;
        out->log2_hist[k]++;
    }
    for (int64_t s = 0; s < a->rows; s += 32) {
        int64_t w = 0;
        for (int64_t i = s; i < s + 32 && i < a->rows; i++) {
            int64_t l = a->rowptr[i + 1] - a->rowptr[i];
            w = l > w ? l : w;
        }
        sell32 += w * (s + 32 <= a->rows ? 32 : a->rows - s);
    }
    if (a->rows > 0) {
        out->row_mean = (double)a->nnz / a->rows;
        double var = sum2 / a->rows - out->row_mean * out->row_mean;
        out->row_cv = out->row_mean > 0 ? sqrt(var > 0 ? var : 0) / out->row_mean : 0;
        /* Quantiles from the log2 histogram: the upper edge of the bucket reached. */
        int64_t q50 = (a->rows + 1) / 2, q90 = (int64_t)ceil(0.9 * a->rows), acc = 0;
        int got50 = 0;
        for (int k = 0; k <= 32; k++) {
            acc += out->log2_hist[k];
            int64_t edge = k == 0 ? 0 : ((int64_t)1 << k) - 1;
            if (!got50 && acc >= q50) {
                out->row_q50 = edge < out->row_max ? edge : out->row_max;
                got50 = 1;
            }
            if (acc >= q90) {
                out->row_q90 = edge < out->row_max ? edge : out->row_max;
                break;
            }
        }
    }
    if (a->nnz > 0) {
        out->rho_sell32 = (double)sell32 / (double)a->nnz;
        int64_t nb[5], dense = 0;
        block_counts(a, nb, &dense);
        for (int lb = 1; lb <= 4; lb++)
            out->rho_bsr[lb] = (double)nb[lb] * (double)(1 << (2 * lb)) / (double)a->nnz;
        out->rho_tiles_dense = (double)dense / (double)a->nnz;
    }
    out->ndiag = count_diagonals(a, 64);
    out->colc_ok0 = sdi_fmt_colc_fits(a, 0);
    out->colc_ok5 = sdi_fmt_colc_fits(a, 5);
    return SD_OK;
}

/* ------------------------------------------------------------------ legality */
#define TINY_MAX_ITEMS 32768 /* rows + nnz one CTA consumes in a few microseconds */
#define DIA_MAXD 64
#define PAD_LIMIT 8.0 /* padded formats: slots ≤ PAD_LIMIT · nnz */

static int is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

int64_t sdi_spmv_static_smem(const sdi_spmv_config *c)
{
    const int64_t nw = c->block / 32;
    switch (c->family) {
    case SDI_SPMV_CSR_ADAPTIVE:
        return 4LL * c->cap + 4LL * (c->maxr + 1) + 4 + 4 * nw;
    case SDI_SPMV_MERGE:
    case SDI_SPMV_TINY:
        return 8LL * c->block * c->ipt + 4LL * c->block + 8 * nw + 8;
    case SDI_SPMV_TILES16:
        return 64 * nw;
    case SDI_SPMV_DIA:
        return 4LL * DIA_MAXD + 4LL * c->xwin;
    default:
        return 0;
    }
}

int64_t sdi_spmv_dynamic_smem(const sdi_spmv_config *c, int64_t cols)
{
    return c->family == SDI_SPMV_CSR_VEC && c->xsmem ? 4 * ((cols + 3) / 4 * 4) : 0;
}

int sdi_spmv_ctas_per_sm(const sdi_spmv_config *c, int64_t cols, const sdi_gpu_props *gpu)
{
    sdi_sg_limits lim; /* the residency rule SpGEMM's binning uses (threads, CTAs, shared memory) */
    sdi_sg_limits_from_props(gpu, &lim);
    return sdi_sg_resident_ctas(&lim, c->block,
                                sdi_spmv_static_smem(c) + sdi_spmv_dynamic_smem(c, cols));
}

#define BAD(...) SDI_ERR(SD_ERR_UNSUPPORTED, __VA_ARGS__)

sd_status sdi_spmv_config_check(const sdi_spmv_config *c, const sdi_spmv_stats *st,
                                const sdi_gpu_props *gpu)
{
    if (c == NULL || st == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config check: NULL argument");
    const int max_threads = gpu != NULL && gpu->max_threads_per_cta > 0 ? gpu->max_threads_per_cta : 1024;
    const int64_t smem_max = gpu != NULL && gpu->smem_per_cta_default > 0 ? gpu->smem_per_cta_default : 49152;
    const char *fn = sdi_spmv_family_name(c->family);
    if (c->family < 0 || c->family >= SDI_SPMV_NFAMILIES)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv config: family %d unknown", c->family);
    if (c->block < 32 || c->block > max_threads || c->block % 32 != 0)
        return BAD("%s: %d threads per CTA (a multiple of 32 up to %d)", fn, c->block, max_threads);
    int64_t smem = sdi_spmv_static_smem(c);
    if (smem > smem_max)
        return BAD("%s: %lld bytes of shared memory exceed %lld", fn, (long long)smem,
                   (long long)smem_max);
    if (c->rp32 && st->nnz > INT32_MAX)
        return BAD("%s: 32-bit row pointers cannot hold %lld nonzeros", fn, (long long)st->nnz);
    if (c->colc && c->family != SDI_SPMV_CSR_VEC)
        return BAD("%s: 16-bit column deltas exist for csr_vec only", fn);
    if (c->xsmem && c->family != SDI_SPMV_CSR_VEC)
        return BAD("%s: x in shared memory exists for csr_vec only", fn);
    if (c->stream < 0 || c->stream > 2)
        return BAD("%s: stream hint %d (0 none, 1 matrix evict-first, 2 and x evict-last)", fn,
                   c->stream);
    switch (c->family) {
    case SDI_SPMV_CSR_VEC:
        if (!is_pow2(c->vw) || c->vw > 32)
            return BAD("csr_vec: vw %d is not a power of two in [1, 32]", c->vw);
        if (c->vec != 1 && c->vec != 4)
            return BAD("csr_vec: vec %d (1 or 4)", c->vec);
        if (c->unroll < 1 || c->unroll > 8)
            return BAD("csr_vec: unroll %d out of [1, 8]", c->unroll);
        if (c->block % c->vw != 0)
            return BAD("csr_vec: %d threads per CTA not a multiple of vw %d", c->block, c->vw);
        if (c->xsmem) {
            const int64_t optin = gpu != NULL && gpu->smem_per_cta_optin > 0 ? gpu->smem_per_cta_optin : 232448;
            const int64_t dyn = sdi_spmv_dynamic_smem(c, st->cols);
            if (c->xsmem != 1)
                return BAD("csr_vec: xs %d (0 or 1)", c->xsmem);
            if (st->cols < 1 || dyn > optin)
                return BAD("csr_vec: x of %lld columns (%lld B) does not fit the %lld B of shared "
                           "memory a CTA may opt in to", (long long)st->cols, (long long)dyn,
                           (long long)optin);
            if (sdi_spmv_ctas_per_sm(c, st->cols, gpu) < 1)
                return BAD("csr_vec: x's copy leaves no room for one CTA of %d threads per SM",
                           c->block);
        }
        if (c->colc) {
            if (c->colc_shift != 0 && c->colc_shift != 5)
                return BAD("csr_vec: column delta shift %d (0 or 5)", c->colc_shift);
            if (!(c->colc_shift == 0 ? st->colc_ok0 : st->colc_ok5))
                return BAD("csr_vec: rows span more than 65536 columns (16-bit deltas)");
        }
        break;
    case SDI_SPMV_CSR_ADAPTIVE:
        if (c->block < 64)
            return BAD("csr_adaptive: at least 64 threads per CTA");
        if (c->cap < c->block || c->cap > 65536)
            return BAD("csr_adaptive: cap %d out of [threads, 65536]", c->cap);
        if (c->maxr < 1 || c->maxr > c->cap)
            return BAD("csr_adaptive: maxr %d out of [1, cap]", c->maxr);
        if (c->piece < c->cap || c->piece % 4 != 0)
            return BAD("csr_adaptive: piece %d must be a multiple of 4 and ≥ cap", c->piece);
        if (st->nnz / c->cap + st->rows / c->maxr + 2 > INT32_MAX / 4)
            return BAD("csr_adaptive: too many row blocks");
        break;
    case SDI_SPMV_MERGE:
    case SDI_SPMV_TINY:
        if (c->ipt < 1 || c->ipt > 64)
            return BAD("%s: ipt %d out of [1, 64]", fn, c->ipt);
        if (c->tiles_per_cta < 0)
            return BAD("%s: tiles per CTA %d", fn, c->tiles_per_cta);
        if (((int64_t)st->rows + st->nnz) / ((int64_t)c->block * c->ipt) + 1 > INT32_MAX)
            return BAD("%s: too many tiles", fn);
        if (c->family == SDI_SPMV_TINY && (int64_t)st->rows + st->nnz > TINY_MAX_ITEMS)
            return BAD("tiny: %lld rows + nonzeros exceed the single-CTA limit %d",
                       (long long)st->rows + st->nnz, TINY_MAX_ITEMS);
        break;
    case SDI_SPMV_SELL:
    case SDI_SPMV_ELL:
        if (!is_pow2(c->tpr) || c->tpr > 32)
            return BAD("%s: tpr %d is not a power of two in [1, 32]", fn, c->tpr);
        if (c->rpt != 1 && c->rpt != 2 && c->rpt != 4)
            return BAD("%s: rpt %d (1, 2 or 4)", fn, c->rpt);
        if (c->block % c->tpr != 0)
            return BAD("%s: threads per CTA not a multiple of tpr", fn);
        if (c->unroll < 1 || c->unroll > 8)
            return BAD("%s: unroll %d out of [1, 8]", fn, c->unroll);
        if (c->family == SDI_SPMV_SELL) {
            if (!is_pow2(c->c) || c->c < 4 || c->c > 1024 || c->c < c->rpt)
                return BAD("sell: C = %d is not a power of two in [max(4, rpt), 1024]", c->c);
            if (c->sigma < 1)
                return BAD("sell: sigma %d < 1", c->sigma);
        } else {
            double fill = st->nnz > 0 ? (double)st->row_max * st->rows / st->nnz : 0;
            if (fill > PAD_LIMIT && (double)st->row_max * st->rows > SDI_FMT_FILL_SLACK)
                return BAD("ell: padding %.1f × nnz exceeds %.0f", fill, PAD_LIMIT);
        }
        break;
    case SDI_SPMV_BSR: {
        if (c->b != 2 && c->b != 4 && c->b != 8 && c->b != 16)
            return BAD("bsr: b = %d (2, 4, 8, 16)", c->b);
        int v = c->b == 16 ? 8 : c->b == 2 ? 2 : 4;
        if (!is_pow2(c->g) || c->g > 32 || (c->g * v) % (c->b * c->b) != 0)
            return BAD("bsr: g = %d lanes (a power of two ≤ 32 with g·%d a multiple of %d)", c->g,
                       v, c->b * c->b);
        if (c->block % c->g != 0)
            return BAD("bsr: threads per CTA not a multiple of g");
        int lb = c->b == 2 ? 1 : c->b == 4 ? 2 : c->b == 8 ? 3 : 4;
        if (st->rho_bsr[lb] > PAD_LIMIT && st->rho_bsr[lb] * st->nnz > SDI_FMT_FILL_SLACK)
            return BAD("bsr(%d): padding %.1f × nnz exceeds %.0f", c->b, st->rho_bsr[lb], PAD_LIMIT);
        break;
    }
    case SDI_SPMV_TILES16:
        if (c->dense_min < 1 || c->dense_min > 257 || c->coo_max < 0 || c->coo_max >= c->dense_min)
            return BAD("tiles16: thresholds dense %d, coo %d", c->dense_min, c->coo_max);
        break;
    case SDI_SPMV_COO:
        if (c->chunk < 1 || c->chunk > 1024)
            return BAD("coo: chunk %d out of [1, 1024]", c->chunk);
        if (c->ipt != 0 && c->ipt != 1 && c->ipt != 2 && c->ipt != 4 && c->ipt != 8)
            return BAD("coo: %d entries per lane and step (0, 1, 2, 4 or 8)", c->ipt);
        break;
    case SDI_SPMV_DIA:
        if (c->rpt != 1 && c->rpt != 2 && c->rpt != 4)
            return BAD("dia: rpt %d (1, 2 or 4)", c->rpt);
        if (st->ndiag > DIA_MAXD)
            return BAD("dia: more than %d diagonals", DIA_MAXD);
        if (st->nnz > 0 && (double)st->ndiag * st->rows > PAD_LIMIT * st->nnz + SDI_FMT_FILL_SLACK)
            return BAD("dia: padding %.1f × nnz exceeds %.0f",
                       (double)st->ndiag * st->rows / st->nnz, PAD_LIMIT);
        if (c->xwin < 0 || (c->xwin > 0 && c->xwin < c->block * c->rpt))
            return BAD("dia: x window %d smaller than the CTA's rows", c->xwin);
        break;
    default:
        break;
    }
    return SD_OK;
}

/* ------------------------------------------------------------------ defaults */
static int next_pow2_i(double x)
{
    int p = 1;
    while (p < x && p < (1 << 30))
        p <<= 1;
    return p;
}

int sdi_spmv_pick_vw(const sdi_spmv_stats *st, int vec)
{
    /* Sub-warp of about the mean row length (Bell & Garland's vector kernel sized to the
     * rows): one step covers a typical row; longer rows take more steps. */
    double per_lane = vec > 0 ? vec : 1;
    int w = next_pow2_i(st->row_mean / per_lane);
    if (w > 32)
        w = 32;
    return w < 1 ? 1 : w;
}

static int working_set_exceeds_l2(const sdi_spmv_stats *st, const sdi_gpu_props *gpu)
{
    double bytes = (double)st->nnz * 8 + (double)st->rows * 12 + (double)st->cols * 4;
    double l2 = gpu != NULL && gpu->l2_bytes > 0 ? (double)gpu->l2_bytes : 60e6;
    return bytes > 2 * l2;
}

static int x_fits_l2(const sdi_spmv_stats *st, const sdi_gpu_props *gpu)
{
    double l2 = gpu != NULL && gpu->l2_bytes > 0 ? (double)gpu->l2_bytes : 60e6;
    return (double)st->cols * 4 <= 0.75 * l2;
}

sd_status sdi_spmv_config_default(int family, const sdi_spmv_stats *st, const sdi_gpu_props *gpu,
                                  sdi_spmv_config *out)
{
    if (out == NULL || st == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv default: NULL argument");
    memset(out, 0, sizeof *out);
    out->family = family;
    out->block = 256;
    const int rp32 = st->nnz <= INT32_MAX;
    const int stream = working_set_exceeds_l2(st, gpu);
    switch (family) {
    case SDI_SPMV_CSR_VEC:
        out->vec = st->row_mean >= 6 ? 4 : 1;
        out->vw = sdi_spmv_pick_vw(st, out->vec);
        out->unroll = 2;
        out->rp32 = rp32;
        out->stream = stream;
        break;
    case SDI_SPMV_CSR_ADAPTIVE:
        out->cap = 2048;
        out->maxr = 512;
        out->piece = 8192;
        out->rp32 = rp32;
        out->stream = stream;
        break;
    case SDI_SPMV_MERGE:
        out->ipt = 8;
        out->rp32 = rp32;
        out->stream = stream;
        break;
    case SDI_SPMV_TINY:
        out->block = 1024;
        out->ipt = 5;
        out->rp32 = rp32;
        break;
    case SDI_SPMV_SELL:
        out->c = 32;
        out->sigma = st->row_cv > 0.3 ? 32 * 8 : 1;
        out->tpr = st->row_mean >= 64 ? 4 : 1;
        out->rpt = 1;
        out->unroll = 4;
        out->stream = stream;
        break;
    case SDI_SPMV_ELL:
        out->tpr = st->row_mean >= 64 ? 4 : 1;
        out->rpt = 1;
        out->unroll = 4;
        out->stream = stream;
        break;
    case SDI_SPMV_BSR: {
        /* The largest block whose padding stays within 2× (else 4, the cheapest). */
        int best = 4;
        for (int lb = 4; lb >= 1; lb--)
            if (st->rho_bsr[lb] > 0 && st->rho_bsr[lb] <= 2.0) {
                best = 1 << lb;
                break;
            }
        out->b = best;
        out->g = best == 16 ? 32 : best == 8 ? 16 : best == 4 ? 8 : 4;
        out->stream = stream;
        break;
    }
    case SDI_SPMV_TILES16:
        out->block = 128;
        out->dense_min = 160;
        out->coo_max = 12;
        out->stream = stream;
        break;
    case SDI_SPMV_COO:
        out->chunk = 8;
        out->stream = stream;
        break;
    case SDI_SPMV_DIA:
        out->rpt = 1;
        out->xwin = 4096;
        out->stream = stream;
        break;
    default:
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv default: family %d unknown", family);
    }
    return SD_OK;
}

/* ------------------------------------------------------------------ enumeration */
typedef struct {
    sdi_spmv_config *v;
    int n, cap;
} cfg_list;

static sd_status push(cfg_list *l, const sdi_spmv_config *c)
{
    for (int i = 0; i < l->n; i++)
        if (memcmp(&l->v[i], c, sizeof *c) == 0)
            return SD_OK;
    if (l->n == l->cap) {
        int nc = l->cap ? 2 * l->cap : 32;
        sdi_spmv_config *nv = sdi_realloc_array(l->v, (size_t)nc, sizeof *nv);
        if (nv == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for spmv candidates");
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = *c;
    return SD_OK;
}

/* Adds c when legal (illegal sweep points are simply skipped). */
static sd_status try_push(cfg_list *l, const sdi_spmv_config *c, const sdi_spmv_stats *st,
                          const sdi_gpu_props *gpu)
{
    if (sdi_spmv_config_check(c, st, gpu) != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    return push(l, c);
}

/* The θ_H sweep of one family around its default. */
static sd_status family_sweep(int fam, const sdi_spmv_stats *st, const sdi_gpu_props *gpu,
                              int level, cfg_list *l)
{
    sdi_spmv_config d, c;
    sd_status s = sdi_spmv_config_default(fam, st, gpu, &d);
    if (s != SD_OK)
        return s;
    s = try_push(l, &d, st, gpu);
    if (s != SD_OK || level == 0)
        return s;
    /* x copied into shared memory (csr_vec) right after the default, so that a branch's
     * first sweep members include it: where x fits and the entries outnumber x's copies
     * (16 entries a column; each CTA copies x once), a gather is a bank access, not a
     * cache line's tag and sector. Whether it pays is measured (H200: as fast as
     * L1-cached gathers on mid twins, faster on a few small real matrices; `sparseditto
     * bench --set paper60,real --ops spmv`). A copy over a
     * third of an SM's shared memory leaves one or two CTAs per SM: 1024 threads keep
     * enough rows in flight. */
    if (fam == SDI_SPMV_CSR_VEC && st->cols > 0 && st->nnz >= 16LL * st->cols) {
        c = d;
        c.xsmem = 1;
        c.block = sdi_spmv_dynamic_smem(&c, st->cols) > 76 * 1024 ? 1024 : 512;
        if ((s = try_push(l, &c, st, gpu)) != SD_OK)
            return s;
        if (level >= 2) {
            for (int dw = 0; dw < 2; dw++) {
                c.vw = dw ? d.vw * 2 : d.vw / 2;
                if (c.vw >= 1 && c.vw <= 32 && (s = try_push(l, &c, st, gpu)) != SD_OK)
                    return s;
            }
            c.vw = d.vw;
            c.unroll = 4;
            if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                return s;
        }
    }
    /* The streamed matrix and x compete for L2: when x fits in ¾ of it, also try x
     * loaded evict-last (SD_STREAM 2); whether it pays is measured, not assumed. */
    if (d.stream == 1 && fam != SDI_SPMV_DIA && x_fits_l2(st, gpu)) {
        c = d;
        c.stream = 2;
        if ((s = try_push(l, &c, st, gpu)) != SD_OK)
            return s;
    }
    /* Matrices larger than L2 whose x gathers miss L1 (columns spread beyond a warp's
     * rows) wait on L2 for every slot: 8 slots in flight per thread instead of 4
     * (`bench_stream --out DIR` on the H200: 20 % less time with columns spread over
     * ±4096, 1-4 % more with local columns), so it is measured, not assumed. */
    if (d.stream >= 1 && (fam == SDI_SPMV_SELL || fam == SDI_SPMV_ELL)) {
        c = d;
        c.unroll = 8;
        if ((s = try_push(l, &c, st, gpu)) != SD_OK)
            return s;
        if (x_fits_l2(st, gpu)) {
            c.stream = 2;
            if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                return s;
        }
    }
    const int wide = level >= 2;
    switch (fam) {
    case SDI_SPMV_CSR_VEC: {
        for (int vec = 1; vec <= 4; vec += 3) {
            int w0 = sdi_spmv_pick_vw(st, vec);
            int wlo = w0 / (wide ? 4 : 2);
            for (int w = wlo > 1 ? wlo : 1; w <= w0 * (wide ? 4 : 2) && w <= 32; w *= 2) {
                c = d;
                c.vec = vec;
                c.vw = w;
                if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                    return s;
                if (wide) {
                    c.block = 128;
                    if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                        return s;
                    c.block = 512;
                    c.unroll = 4;
                    if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                        return s;
                }
            }
        }
        /* 16-bit column deltas where they pay (large matrices). */
        if (st->nnz >= (1 << 20)) {
            c = d;
            c.colc = 1;
            c.colc_shift = st->colc_ok5 ? 5 : 0;
            if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                return s;
        }
        break;
    }
    case SDI_SPMV_CSR_ADAPTIVE: {
        static const int caps[][3] = {{256, 1024, 256}, {256, 2048, 512}, {512, 4096, 1024},
                                      {128, 1024, 256}};
        for (int i = 0; i < (wide ? 4 : 3); i++) {
            c = d;
            c.block = caps[i][0];
            c.cap = caps[i][1];
            c.maxr = caps[i][2];
            c.piece = 4 * c.cap;
            if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                return s;
        }
        break;
    }
    case SDI_SPMV_MERGE: {
        static const int bi[][2] = {{256, 4}, {256, 8}, {128, 12}, {512, 4}, {256, 12}};
        for (int i = 0; i < (wide ? 5 : 3); i++) {
            c = d;
            c.block = bi[i][0];
            c.ipt = bi[i][1];
            if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                return s;
        }
        break;
    }
    case SDI_SPMV_TINY: {
        static const int bi[][2] = {{1024, 5}, {512, 10}, {256, 20}, {1024, 2}};
        for (int i = 0; i < (wide ? 4 : 2); i++) {
            c = d;
            c.block = bi[i][0];
            c.ipt = bi[i][1];
            if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                return s;
        }
        break;
    }
    case SDI_SPMV_SELL: {
        static const int cs[] = {16, 32, 64, 128, 256, 512};
        for (int i = 0; i < 6; i++) {
            if (!wide && cs[i] != 32 && cs[i] != 128)
                continue;
            for (int sorted = 0; sorted <= 1; sorted++) {
                c = d;
                c.c = cs[i];
                c.sigma = sorted ? cs[i] * 8 : 1;
                c.rpt = cs[i] >= 64 ? 4 : 1;
                if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                    return s;
                if (st->row_mean >= 16) {
                    c.tpr = st->row_mean >= 64 ? 8 : 4;
                    c.rpt = 1;
                    if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                        return s;
                }
            }
        }
        break;
    }
    case SDI_SPMV_ELL:
        c = d;
        c.rpt = 4;
        c.tpr = 1;
        if ((s = try_push(l, &c, st, gpu)) != SD_OK)
            return s;
        break;
    case SDI_SPMV_BSR:
        for (int b = 2; b <= 16; b *= 2) {
            int lb = b == 2 ? 1 : b == 4 ? 2 : b == 8 ? 3 : 4;
            if (b == d.b || st->rho_bsr[lb] > (wide ? 4.0 : 2.0))
                continue;
            c = d;
            c.b = b;
            c.g = b == 16 ? 32 : b == 8 ? 16 : b == 4 ? 8 : 4;
            if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                return s;
        }
        c = d;
        c.g = d.g * 2 <= 32 ? d.g * 2 : d.g;
        if ((s = try_push(l, &c, st, gpu)) != SD_OK)
            return s;
        break;
    case SDI_SPMV_TILES16:
        c = d;
        c.dense_min = 224;
        c.coo_max = 24;
        if ((s = try_push(l, &c, st, gpu)) != SD_OK)
            return s;
        break;
    case SDI_SPMV_COO: {
        c = d;
        c.chunk = 32;
        if ((s = try_push(l, &c, st, gpu)) != SD_OK)
            return s;
        /* Entries per lane (a scan per 32·ipt entries instead of per 32): chunks of 256 and
         * 1,024 entries per warp, as the defaults' 8 and 32 steps of 32. */
        static const int ci[][2] = {{2, 4}, {1, 8}, {8, 4}};
        for (int i = 0; i < (wide ? 3 : 2); i++) {
            c = d;
            c.chunk = ci[i][0];
            c.ipt = ci[i][1];
            if ((s = try_push(l, &c, st, gpu)) != SD_OK)
                return s;
        }
        break;
    }
    case SDI_SPMV_DIA:
        c = d;
        c.rpt = 4;
        c.xwin = 8192;
        if ((s = try_push(l, &c, st, gpu)) != SD_OK)
            return s;
        c.xwin = 0;
        if ((s = try_push(l, &c, st, gpu)) != SD_OK)
            return s;
        break;
    default:
        break;
    }
    return SD_OK;
}

sd_status sdi_spmv_enumerate(const sdi_spmv_stats *st, const sdi_gpu_props *gpu,
                             uint32_t fam_mask, int level, int cap, sdi_spmv_config **out,
                             int *n)
{
    cfg_list per[SDI_SPMV_NFAMILIES];
    memset(per, 0, sizeof per);
    sdi_spmv_config *res = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        for (int f_ = 0; f_ < SDI_SPMV_NFAMILIES; f_++)                                    \
            sdi_free(per[f_].v);                                                           \
        sdi_free(res);                                                                     \
    } while (0)
    if (out == NULL || n == NULL || st == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv enumerate: NULL argument");
    *out = NULL;
    *n = 0;
    if (fam_mask == 0)
        fam_mask = (1u << SDI_SPMV_NFAMILIES) - 1;
    int total = 0;
    for (int f = 0; f < SDI_SPMV_NFAMILIES; f++) {
        if (!(fam_mask & (1u << f)))
            continue;
        SD_TRY(family_sweep(f, st, gpu, level, &per[f]));
        total += per[f].n;
    }
    if (cap <= 0 || cap > total)
        cap = total;
    res = sdi_malloc_array((size_t)(cap > 0 ? cap : 1), sizeof *res);
    SD_CHECK_ALLOC(res, "spmv candidates");
    int k = 0;
    for (int round = 0; k < cap; round++) {
        int added = 0;
        for (int f = 0; f < SDI_SPMV_NFAMILIES && k < cap; f++)
            if (round < per[f].n) {
                res[k++] = per[f].v[round];
                added = 1;
            }
        if (!added)
            break;
    }
    for (int f = 0; f < SDI_SPMV_NFAMILIES; f++)
        sdi_free(per[f].v);
    *out = res;
    *n = k;
    return SD_OK;
#undef SD_FREE_ALL
}
