/* src/plan/spmm_config.c: the SpMM configuration's non-family code: template names, the
 * description, derived sizes, the legality every configuration shares, the default θ_H's
 * common start and the enumeration over templates. What differs per template is the
 * family's (src/plan/families/spmm_*.c, through sdi_spmm_ops). */
#include <stdio.h>
#include <string.h>

#include "families/spmm_shared.h"
#include "spmm.h"

const char *sdi_spmm_template_name(int tmpl)
{
    const sdi_spmm_ops *o = sdi_spmm_ops_of(tmpl);
    return o != NULL ? o->fam->name : "unknown";
}

int sdi_spmm_template_from_name(const char *name)
{
    for (int t = 0; t < SDI_SPMM_NTEMPLATES; t++)
        if (name != NULL && strcmp(name, sdi_spmm_ops_of(t)->fam->name) == 0)
            return t;
    return -1;
}

int sdi_spmm_ktile(const sdi_spmm_config *c)
{
    const sdi_spmm_ops *o = sdi_spmm_ops_of(c->tmpl);
    if (o != NULL && o->ktile != NULL)
        return o->ktile(c);
    return c->klanes * c->vec * c->coarsen;
}

int sdi_spmm_ktiles(const sdi_spmm_config *c)
{
    int t = sdi_spmm_ktile(c);
    return t > 0 ? (c->k + t - 1) / t : 0;
}

bool sdi_spmm_split_segmented(const sdi_spmm_config *c)
{
    return c->tmpl == SDI_SPMM_CSR_SPLIT &&
           (c->split_mode == SDI_SPLIT_SEGMENTS || c->split_mode == SDI_SPLIT_SEGATOMIC);
}

void sdi_spmm_config_describe(const sdi_spmm_config *c, char *buf, size_t cap)
{
    const sdi_spmm_ops *o = sdi_spmm_ops_of(c->tmpl);
    const char *n = sdi_spmm_template_name(c->tmpl);
    if (o != NULL && o->describe != NULL)
        o->describe(c, n, buf, cap);
    else
        snprintf(buf, cap, "%s k=%d w=%d kl=%d nz=%d v=%d co=%d", n, c->k, c->warps,
                 c->klanes, c->nzpar, c->vec, c->coarsen);
    if (c->regcap != 0 && c->regcap != 64) {
        size_t l = strlen(buf);
        if (l < cap)
            snprintf(buf + l, cap - l, " reg=%d", c->regcap);
    }
}

/* ------------------------------------------------------------------ legality */

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            return SDI_ERR(SD_ERR_INVALID_ARG, __VA_ARGS__);                               \
    } while (0)

sd_status sdi_spmm_config_check(const sdi_spmm_config *c, const sdi_spmm_stats *st)
{
    const sdi_spmm_ops *o = sdi_spmm_ops_of(c->tmpl);
    CHECK(o != NULL, "spmm: unknown template %d", c->tmpl);
    const char *n = o->fam->name;
    CHECK(c->k >= 1 && c->k <= 65536, "%s: K = %d outside 1..65536", n, c->k);
    CHECK(sdi_spmm_is_pow2(c->warps) && c->warps <= 16, "%s: warps = %d (1, 2, 4, 8 or 16)", n,
          c->warps);
    CHECK(c->regcap == 0 || (c->regcap >= 32 && c->regcap <= 255), "%s: regcap = %d", n,
          c->regcap);
    CHECK(c->coarsen >= 1 && c->coarsen <= 16, "%s: coarsen = %d outside 1..16", n, c->coarsen);
    if (st != NULL) {
        CHECK(c->rp64 || st->nnz < ((int64_t)1 << 31),
              "%s: nnz %lld needs 64-bit row pointers", n, (long long)st->nnz);
    }
    sd_status s = o->check_mapping != NULL ? o->check_mapping(c, n) : sdi_spmm_check_lanes(c, n);
    if (s != SD_OK)
        return s;
    int tiles = sdi_spmm_ktiles(c);
    CHECK(tiles >= 1 && tiles <= 65535, "%s: %d K tiles (at most 65535)", n, tiles);
    return o->check != NULL ? o->check(c, n) : SD_OK;
}

/* ------------------------------------------------------------------ defaults */

sd_status sdi_spmm_config_default(int tmpl, int k, const sdi_spmm_stats *st,
                                  sdi_spmm_config *out)
{
    memset(out, 0, sizeof *out);
    out->tmpl = tmpl;
    out->k = k;
    out->warps = 4;
    out->regcap = 64;
    out->rp64 = st->nnz >= ((int64_t)1 << 31);
    if (k < 1 || k > 65536)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm: K = %d outside 1..65536", k);
    const sdi_spmm_ops *o = sdi_spmm_ops_of(tmpl);
    if (o == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm: unknown template %d", tmpl);
    int vec, kl, co;
    sdi_spmm_k_shape(k, 16, &vec, &kl, &co);
    out->vec = vec;
    out->klanes = kl;
    out->coarsen = co;
    o->shape(k, st, out);
    out->regcap = sdi_spmm_regcap_for(out);
    return sdi_spmm_config_check(out, st);
}

/* ------------------------------------------------------------------ enumeration */

sd_status sdi_spmm_enumerate(const sd_csr *a, int k, uint32_t tmpl_mask, int level, int cap,
                             sdi_spmm_config **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (k < 1 || k > 65536)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmm: K = %d outside 1..65536", k);
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    sdi_spmm_cfgs per[SDI_SPMM_NTEMPLATES];
    memset(per, 0, sizeof per);
    sd_status s = SD_OK;
    for (int t = 0; t < SDI_SPMM_NTEMPLATES && s == SD_OK; t++)
        if (tmpl_mask == 0 || (tmpl_mask & (1u << t)))
            s = sdi_spmm_ops_of(t)->sweep(a, k, &st, level, &per[t]);
    sdi_spmm_cfgs all = {0};
    /* Round-robin so that a small cap still covers every template. */
    for (int round = 0; s == SD_OK; round++) {
        bool any = false;
        for (int t = 0; t < SDI_SPMM_NTEMPLATES && s == SD_OK; t++) {
            if (round >= per[t].n)
                continue;
            any = true;
            if (cap > 0 && all.n >= cap)
                break;
            s = sdi_spmm_cfgs_push(&all, &per[t].v[round], &st);
        }
        if (!any || (cap > 0 && all.n >= cap))
            break;
    }
    for (int t = 0; t < SDI_SPMM_NTEMPLATES; t++)
        sdi_spmm_cfgs_free(&per[t]);
    if (s != SD_OK) {
        sdi_spmm_cfgs_free(&all);
        return s;
    }
    *out = all.v;
    *n = all.n;
    return SD_OK;
}
