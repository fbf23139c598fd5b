/* src/plan/families/spmm_shared.c: code the SpMM families share (spmm_shared.h): the rules
 * every configuration follows, the sweep list, the generic family hooks, the lowering
 * helpers, and the block representations that bsr, bell and bsr_tc have in common. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../analysis/analysis.h"
#include "../../formats/formats.h"
#include "../../formats/spmm_formats.h"
#include "spmm_shared.h"

extern const sdi_spmm_ops sdi_spmm_ops_csr_row, sdi_spmm_ops_csr_split, sdi_spmm_ops_csr_window,
    sdi_spmm_ops_bsr, sdi_spmm_ops_bell, sdi_spmm_ops_pcsr, sdi_spmm_ops_col_window,
    sdi_spmm_ops_bsr_tc;

/* By template id (the order of sdi_spmm_template). */
static const sdi_spmm_ops *const ops_table[SDI_SPMM_NTEMPLATES] = {
    &sdi_spmm_ops_csr_row, &sdi_spmm_ops_csr_split, &sdi_spmm_ops_csr_window,
    &sdi_spmm_ops_bsr,     &sdi_spmm_ops_bell,      &sdi_spmm_ops_pcsr,
    &sdi_spmm_ops_col_window, &sdi_spmm_ops_bsr_tc};

const sdi_spmm_ops *sdi_spmm_ops_of(int tmpl)
{
    return tmpl >= 0 && tmpl < SDI_SPMM_NTEMPLATES ? ops_table[tmpl] : NULL;
}

/* ------------------------------------------------------------------ rules */

bool sdi_spmm_is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

int sdi_spmm_next_pow2(int64_t x)
{
    int p = 1;
    while (p < x && p < (1 << 30))
        p <<= 1;
    return p;
}

void sdi_spmm_k_shape(int k, int max_acc, int *vec, int *kl, int *co)
{
    int v = k % 4 == 0 ? 4 : (k % 2 == 0 ? 2 : 1);
    int kv = (k + v - 1) / v;
    if (kv <= 32) {
        *vec = v;
        *kl = sdi_spmm_next_pow2(kv);
        *co = 1;
        return;
    }
    int c = (kv + 31) / 32;
    int cmax = max_acc / v;
    if (c > cmax)
        c = cmax;
    if (c < 1)
        c = 1;
    *vec = v;
    *kl = 32;
    *co = c;
}

int sdi_spmm_pick_nzpar(int kl, double row_mean)
{
    int g = sdi_spmm_next_pow2((int64_t)ceil(row_mean > 1 ? row_mean : 1));
    if (g < kl)
        g = kl;
    if (g > 32)
        g = 32;
    int nz = g / kl;
    return nz < 1 ? 1 : nz;
}

/* Register cap from the accumulators a thread keeps (plus about 40 registers of
 * addresses, loads in flight and loop state): 64 for the light variants (8 CTAs of 128
 * threads per SM), more for BSR(16) and wide windows instead of spilling. */
int sdi_spmm_regcap_for(const sdi_spmm_config *c)
{
    const sdi_spmm_ops *o = sdi_spmm_ops_of(c->tmpl);
    int acc = o != NULL && o->acc != NULL ? o->acc(c) : c->coarsen * c->vec;
    int need = acc + 40;
    return need <= 64 ? 64 : need <= 96 ? 96 : need <= 128 ? 128 : need <= 168 ? 168 : 255;
}

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            return SDI_ERR(SD_ERR_INVALID_ARG, __VA_ARGS__);                               \
    } while (0)

sd_status sdi_spmm_check_lanes(const sdi_spmm_config *c, const char *n)
{
    CHECK(c->vec == 1 || c->vec == 2 || c->vec == 4, "%s: vec = %d (1, 2 or 4)", n, c->vec);
    CHECK(c->k % c->vec == 0, "%s: K = %d is not a multiple of vec = %d", n, c->k, c->vec);
    CHECK(sdi_spmm_is_pow2(c->klanes) && c->klanes <= 32, "%s: klanes = %d", n, c->klanes);
    CHECK(c->coarsen * c->vec <= 32, "%s: %d accumulators per lane (at most 32)", n,
          c->coarsen * c->vec);
    return SD_OK;
}

sd_status sdi_spmm_check_group(const sdi_spmm_config *c, const char *n)
{
    CHECK(sdi_spmm_is_pow2(c->nzpar) && c->klanes * c->nzpar <= 32,
          "%s: group %d×%d exceeds a warp", n, c->klanes, c->nzpar);
    return SD_OK;
}

/* ------------------------------------------------------------------ sweeps */

/* The light register cap of a sweep member (sdi_spmm_cfgs_push keeps it): 32 registers
 * and 8 floats of B in flight per lane (SD_INFLIGHT, sdi_spmm_common_macros), full
 * occupancy instead of 64 and 50 %. Offered where the grid has many waves of short rows:
 * rows ≥ SPMM_LIGHT_ROWS, K ≥ 32 with one vector of accumulators per lane (the row-wise
 * kernels fill 64 registers there; at K = 8 they use about 35 anyway, and the member only
 * took search budget from csr_window). As a rule for every matrix it lost on the real set
 * (our SpMM time +8.5 %: small matrices need the loads in flight, not more warps); as a
 * member it won up to 25 % at K = 32/128 on the paper-60 twins and luxembourg_osm (H200,
 * `sparseditto bench --set paper60,real --ops spmm32,spmm128`). */
bool sdi_spmm_light_fits(const sdi_spmm_config *c, const sdi_spmm_stats *st)
{
    return st->rows >= SPMM_LIGHT_ROWS && c->k >= 32 && c->coarsen * c->vec <= 4;
}

sd_status sdi_spmm_cfgs_push(sdi_spmm_cfgs *l, const sdi_spmm_config *cin,
                             const sdi_spmm_stats *st)
{
    sdi_spmm_config fixed = *cin;
    if (fixed.regcap != SPMM_REGCAP_LIGHT)
        fixed.regcap = sdi_spmm_regcap_for(&fixed); /* sweep members follow the rule's cap */
    const sdi_spmm_config *c = &fixed;
    if (sdi_spmm_config_check(c, st) != SD_OK) {
        sdi_error_clear();
        return SD_OK; /* illegal members of a sweep are dropped */
    }
    for (int i = 0; i < l->n; i++)
        if (memcmp(&l->v[i], c, sizeof *c) == 0)
            return SD_OK;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        sdi_spmm_config *v = sdi_realloc_array(l->v, (size_t)cap, sizeof *v);
        if (v == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for SpMM candidates");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *c;
    return SD_OK;
}

void sdi_spmm_cfgs_free(sdi_spmm_cfgs *l)
{
    sdi_free(l->v);
    memset(l, 0, sizeof *l);
}

int sdi_spmm_sweep_nw(int level) { return level >= 2 ? 3 : 2; }

const int *sdi_spmm_sweep_warps(int level)
{
    static const int warps_small[] = {4, 8};
    static const int warps_wide[] = {2, 4, 8};
    return level >= 2 ? warps_wide : warps_small;
}

/* ------------------------------------------------------------------ family hooks */

void sdi_spmm_plan_of(const sdi_spmm_config *c, sdi_plan *out)
{
    memset(out, 0, sizeof *out);
    out->op = SD_OP_SPMM;
    out->k = c->k;
    out->family = sdi_family_of(SD_OP_SPMM, c->tmpl);
    out->row_order = SDI_ROW_ORDER_NATURAL;
    out->col_renumber = SDI_COL_RENUMBER_NONE;
    out->p.spmm = *c;
}

sd_status sdi_spmm_hook_defaults(const sdi_task *t, int tmpl, sdi_plan *out)
{
    memset(out, 0, sizeof *out);
    sdi_spmm_config c;
    sd_status s = sdi_spmm_config_default(tmpl, t->k, t->spmm, &c);
    if (s != SD_OK)
        return s;
    sdi_spmm_plan_of(&c, out);
    return SD_OK;
}

sd_status sdi_spmm_hook_sweep(const sdi_task *t, int tmpl, int level, sdi_plan_list *out)
{
    /* The old enumeration of one template took its first 64 members. */
    enum { CAP = 64 };
    if (t->k < 1 || t->k > 65536)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm: K = %d outside 1..65536", t->k);
    sdi_spmm_cfgs l = {0};
    sd_status s = sdi_spmm_ops_of(tmpl)->sweep(t->a, t->k, t->spmm, level, &l);
    for (int i = 0; i < l.n && i < CAP && s == SD_OK; i++) {
        sdi_plan p;
        sdi_spmm_plan_of(&l.v[i], &p);
        s = sdi_plan_list_push(out, &p);
    }
    sdi_spmm_cfgs_free(&l);
    return s;
}

sd_status sdi_spmm_hook_check(const sdi_task *t, const sdi_plan *p)
{
    if (p->op != SD_OP_SPMM || p->k != p->p.spmm.k)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm plan: op %d, K %d for a configuration of K %d",
                       p->op, p->k, p->p.spmm.k);
    return sdi_spmm_config_check(&p->p.spmm, t->spmm);
}

sd_status sdi_spmm_hook_lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    memset(out, 0, sizeof *out);
    const sdi_spmm_config *cfg = &p->p.spmm;
    const sd_csr *a = t->a;
    if (a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm lowering: no matrix");
    sd_status s = sdi_spmm_hook_check(t, p);
    if (s != SD_OK)
        return s;
    double t0 = sdi_now();
    out->op = SD_OP_SPMM;
    out->rows = a->rows;
    out->cols = a->cols;
    out->k = cfg->k;
    out->nnz = a->nnz;
    int64_t span = (int64_t)(a->rows > a->cols ? a->rows : a->cols) + 1;
    int big = span * (int64_t)cfg->k + cfg->k >= ((int64_t)1 << 31);
    s = sdi_spmm_ops_of(cfg->tmpl)->lower(out, a, cfg, big);
    if (s != SD_OK) {
        sdi_lowered_free(out);
        return s;
    }
    /* M_value, M_meta and W: the arrays by role */
    out->bytes_value = out->bytes_meta = out->bytes_work = 0;
    for (int i = 0; i < out->narrays; i++) {
        const sdi_low_array *x = &out->arr[i];
        if (x->role == SDI_LOW_VALUE)
            out->bytes_value += (int64_t)x->bytes;
        else if (x->role == SDI_LOW_META)
            out->bytes_meta += (int64_t)x->bytes;
        else
            out->bytes_work += (int64_t)x->bytes;
    }
    out->build_ms = (sdi_now() - t0) * 1e3;
    return SD_OK;
}

sd_status sdi_spmm_lower_config(const sd_csr *a, const sdi_spmm_stats *st,
                                const sdi_spmm_config *c, sdi_lowered *out)
{
    memset(out, 0, sizeof *out);
    if (sdi_spmm_ops_of(c->tmpl) == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm: unknown template %d", c->tmpl);
    sdi_task t;
    memset(&t, 0, sizeof t);
    t.op = SD_OP_SPMM;
    t.k = c->k;
    t.a = a;
    t.spmm = st;
    sdi_plan p;
    sdi_spmm_plan_of(c, &p);
    return sdi_spmm_hook_lower(&t, &p, out);
}

double sdi_spmm_feature(const sdi_task *t, const char *name)
{
    int i = sdi_feature_index(name);
    return t->features != NULL && i >= 0 ? t->features->values[i] : 0;
}

/* ------------------------------------------------------------------ lowering */

void sdi_spmm_macro(sd_status *s, sdi_lowered *l, const char *name, int value)
{
    if (*s == SD_OK)
        *s = sdi_lowered_add_macro(l, name, "%d", value);
}

static int regcap_minb(const sdi_spmm_config *c, int threads)
{
    int cap = c->regcap > 0 ? c->regcap : 64;
    int minb = 65536 / (threads * cap);
    return minb < 1 ? 1 : minb;
}

sd_status sdi_spmm_common_macros(sdi_lowered *l, const sdi_spmm_config *c, int threads, int big)
{
    sd_status s = SD_OK;
    sdi_spmm_macro(&s, l, "SD_K", c->k);
    sdi_spmm_macro(&s, l, "SD_RP64", c->rp64 ? 1 : 0);
    sdi_spmm_macro(&s, l, "SD_BIG", big);
    sdi_spmm_macro(&s, l, "SD_MINB", regcap_minb(c, threads));
    /* the light cap (sdi_spmm_light_fits): fewer B loads in flight per lane, so that they fit */
    if (c->regcap > 0 && c->regcap <= 32)
        sdi_spmm_macro(&s, l, "SD_INFLIGHT", 8);
    return s;
}

/* The pattern is not part of the code (sizes are arguments), so equal θ_H and K give
 * equal kernels (memo hits). */
sd_status sdi_spmm_name_kernels(sdi_lowered *l, const char *family, int nkernels)
{
    char text[SDI_LOW_MAX_MACROS * 96];
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
    char k0[SDI_LOW_NAME], k1[SDI_LOW_NAME];
    snprintf(k0, sizeof k0, "sd_spmm_%s_%s", family, hex);
    snprintf(k1, sizeof k1, "sd_spmm_%s_%s_b", family, hex);
    sd_status s = sdi_lowered_add_kernel(l, k0, NULL);
    if (s == SD_OK && nkernels > 1)
        s = sdi_lowered_add_kernel(l, k1, NULL);
    if (s == SD_OK)
        s = sdi_lowered_add_macro(l, "SD_KNAME", "%s", k0);
    if (s == SD_OK && nkernels > 1)
        s = sdi_lowered_add_macro(l, "SD_KNAME2", "%s", k1);
    return s;
}

sd_status sdi_spmm_add_array(sdi_lowered *l, const char *name, void *host, size_t bytes,
                             int role, int owned, int64_t *src, int64_t nslots, int *index)
{
    int i = -1;
    sd_status s = sdi_lowered_add_array(l, name, role, host, host != NULL ? bytes : 0, bytes,
                                        owned, &i);
    if (s != SD_OK) {
        sdi_free(src);
        return s;
    }
    l->arr[i].fmt_array = -1;
    l->arr[i].src = src;
    l->arr[i].nslots = role == SDI_LOW_VALUE ? nslots : 0;
    if (index)
        *index = i;
    return SD_OK;
}

sd_status sdi_spmm_rp_array(sdi_lowered *l, const char *name, const int64_t *rp, int64_t n,
                            int rp64, int *index)
{
    if (rp64)
        return sdi_spmm_add_array(l, name, (void *)rp, (size_t)n * 8, SDI_LOW_META, 0, NULL, 0,
                                  index);
    int32_t *r = sdi_malloc_array(n > 0 ? (size_t)n : 1, sizeof *r);
    if (r == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for 32-bit %s", name);
    for (int64_t i = 0; i < n; i++)
        r[i] = (int32_t)rp[i];
    return sdi_spmm_add_array(l, name, r, (size_t)n * 4, SDI_LOW_META, 1, NULL, 0, index);
}

sd_status sdi_spmm_csr_arrays(sdi_lowered *l, const sd_csr *a, int rp64, int *irp, int *ici,
                              int *iva)
{
    sd_status s = sdi_spmm_rp_array(l, "rowptr", a->rowptr, (int64_t)a->rows + 1, rp64, irp);
    if (s == SD_OK)
        s = sdi_spmm_add_array(l, "colind", a->colind, (size_t)a->nnz * 4, SDI_LOW_META, 0,
                               NULL, 0, ici);
    if (s == SD_OK)
        s = sdi_spmm_add_array(l, "vals", a->vals, (size_t)a->nnz * 4, SDI_LOW_VALUE, 0, NULL,
                               a->nnz, iva);
    return s;
}

sdi_low_launch *sdi_spmm_add_launch(sdi_lowered *l, int kernel, int64_t gx, int gy, int threads)
{
    sdi_low_launch *x = &l->launch[l->nlaunches++];
    memset(x, 0, sizeof *x);
    x->kernel = kernel;
    x->grid[0] = (unsigned)gx;
    x->grid[1] = (unsigned)gy;
    x->grid[2] = 1;
    x->block[0] = (unsigned)threads;
    x->block[1] = x->block[2] = 1;
    return x;
}

static void push_arg(sdi_low_launch *x, int kind, int index, int64_t value)
{
    if (x->nargs < SDI_LOW_MAX_ARGS)
        x->args[x->nargs++] = (sdi_low_arg){kind, index, value};
}

void sdi_spmm_arg_array(sdi_low_launch *x, int index) { push_arg(x, SDI_LOW_ARG_ARRAY, index, 0); }
void sdi_spmm_arg_in(sdi_low_launch *x) { push_arg(x, SDI_LOW_ARG_IN, -1, 0); }
void sdi_spmm_arg_out(sdi_low_launch *x) { push_arg(x, SDI_LOW_ARG_OUT, -1, 0); }
void sdi_spmm_arg_null(sdi_low_launch *x) { push_arg(x, SDI_LOW_ARG_NULL, -1, 0); }
void sdi_spmm_arg_i32(sdi_low_launch *x, int64_t v) { push_arg(x, SDI_LOW_ARG_I32, -1, v); }
void sdi_spmm_arg_i64(sdi_low_launch *x, int64_t v) { push_arg(x, SDI_LOW_ARG_I64, -1, v); }

/* ------------------------------------------------------------------ blocks (bsr, bell, bsr_tc) */

int sdi_spmm_blocks_acc(const sdi_spmm_config *c)
{
    return c->block * c->coarsen * c->vec + c->block;
}

sd_status sdi_spmm_blocks_check(const sdi_spmm_config *c, const char *n)
{
    CHECK(c->block == 2 || c->block == 4 || c->block == 8 || c->block == 16,
          "%s: block = %d (2, 4, 8 or 16)", n, c->block);
    CHECK(c->block * c->coarsen * c->vec <= 64, "%s: %d accumulators per lane (at most 64)", n,
          c->block * c->coarsen * c->vec);
    return SD_OK;
}

void sdi_spmm_blocks_describe(const sdi_spmm_config *c, const char *n, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%d k=%d w=%d kl=%d v=%d co=%d", n, c->block, c->k, c->warps,
             c->klanes, c->vec, c->coarsen);
}

void sdi_spmm_blocks_shape(int k, const sdi_spmm_stats *st, sdi_spmm_config *c)
{
    (void)st;
    int vec, kl, co;
    c->block = 4;
    sdi_spmm_k_shape(k, 64 / 4 < 16 ? 64 / 4 : 16, &vec, &kl, &co);
    c->vec = vec;
    c->klanes = kl;
    c->coarsen = co;
}

sd_status sdi_spmm_blocks_sweep(int tmpl, const sd_csr *a, int k, const sdi_spmm_stats *st,
                                int level, sdi_spmm_cfgs *l)
{
    /* block templates: only block sizes whose padding is acceptable */
    sdi_spmm_config base, c;
    sd_status s = sdi_spmm_config_default(tmpl, k, st, &base);
    if (s != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    const int *wl = sdi_spmm_sweep_warps(level);
    int nw = sdi_spmm_sweep_nw(level);
    static const int blocks[] = {2, 4, 8, 16};
    for (int bi = 0; bi < 4; bi++) {
        int b = blocks[bi];
        int64_t nb = 0, widest = 0;
        if ((s = sdi_spmm_blocks_count(a, b, b, &nb, &widest)) != SD_OK)
            return s;
        double fill = a->nnz > 0 ? (double)nb * b * b / (double)a->nnz : 0;
        if (tmpl == SDI_SPMM_BELL)
            fill = a->nnz > 0 ? (double)((a->rows + b - 1) / b) * (double)widest * b * b /
                                    (double)a->nnz
                              : 0;
        if (nb == 0 || fill > (level >= 2 ? 8.0 : 3.0))
            continue;
        c = base;
        c.block = b;
        int vec, kl, co;
        sdi_spmm_k_shape(k, 64 / b < 16 ? 64 / b : 16, &vec, &kl, &co);
        c.vec = vec;
        c.klanes = kl;
        c.coarsen = co;
        for (int w = 0; w < (level == 0 ? 1 : nw); w++) {
            c.warps = level == 0 ? base.warps : wl[w];
            if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
                return s;
        }
        if (level == 0)
            break; /* the smallest acceptable block */
    }
    return SD_OK;
}

sd_status sdi_spmm_block_arrays(sdi_lowered *l, sdi_spmm_blocks *bk, int32_t brows, int rp64,
                                bool with_rowptr, size_t nslots, int *ibp, int *ibc, int *ibv)
{
    *ibp = -1;
    sd_status s;
    if (with_rowptr) {
        if ((s = sdi_spmm_rp_array(l, "browptr", bk->browptr, (int64_t)brows + 1, rp64, ibp)) !=
            SD_OK)
            return s;
        if (rp64) {
            l->arr[*ibp].owned = 1;
            bk->browptr = NULL;
        }
    }
    s = sdi_spmm_add_array(l, "bcolidx", bk->bcolidx, (size_t)bk->nblocks * 4, SDI_LOW_META, 1,
                           NULL, 0, ibc);
    bk->bcolidx = NULL;
    if (s != SD_OK)
        return s;
    s = sdi_spmm_add_array(l, "bval", bk->val, nslots * 4, SDI_LOW_VALUE, 1, bk->src,
                           (int64_t)nslots, ibv);
    bk->val = NULL;
    bk->src = NULL;
    if (s != SD_OK)
        return s;
    l->slots = (int64_t)nslots;
    l->atomics = 0;
    l->chunks = bk->nblocks;
    return SD_OK;
}

sd_status sdi_spmm_blocks_lower(sdi_lowered *l, const sd_csr *a, const sdi_spmm_config *c, int big)
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
    snprintf(l->template_name, sizeof l->template_name, "%s", "spmm_bsr.cuh");
    s = sdi_spmm_common_macros(l, c, threads, big);
    sdi_spmm_macro(&s, l, "SD_WARPS", c->warps);
    sdi_spmm_macro(&s, l, "SD_KL", c->klanes);
    sdi_spmm_macro(&s, l, "SD_V", c->vec);
    sdi_spmm_macro(&s, l, "SD_CO", c->coarsen);
    sdi_spmm_macro(&s, l, "SD_BM", b);
    sdi_spmm_macro(&s, l, "SD_BN", b);
    SD_TRY(s);
    SD_TRY(sdi_spmm_name_kernels(l, ell ? "bell" : "bsr", 1));
    int ibp, ibc, ibv;
    SD_TRY(sdi_spmm_block_arrays(l, &bk, brows, c->rp64, !ell,
                                 (size_t)bk.nblocks * (size_t)b * (size_t)b, &ibp, &ibc, &ibv));
    int ellw = ell ? (int)(bk.nblocks / (brows > 0 ? brows : 1)) : 0;
    if (brows > 0) {
        sdi_low_launch *x = sdi_spmm_add_launch(l, 0, ((int64_t)brows + gpc - 1) / gpc,
                                                sdi_spmm_ktiles(c), threads);
        if (ell)
            sdi_spmm_arg_null(x);
        else
            sdi_spmm_arg_array(x, ibp);
        sdi_spmm_arg_array(x, ibc);
        sdi_spmm_arg_array(x, ibv);
        sdi_spmm_arg_in(x);
        sdi_spmm_arg_out(x);
        sdi_spmm_arg_i32(x, a->rows);
        sdi_spmm_arg_i32(x, a->cols);
        sdi_spmm_arg_i32(x, brows);
        sdi_spmm_arg_i32(x, ellw);
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}
