/* src/plan/config_json.c: the JSON form of each operator's configuration, written and read
 * from one field table per operator, so that a configuration read back is the one written
 * (docs/ARCHITECTURE.md "JSON forms of a plan"). The kernel cache stores configurations in
 * this form, never as struct bytes. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../core/json_parse.h"
#include "spgemm.h"
#include "spmm.h"
#include "spmv.h"

#define SD_FREE_ALL ((void)0) /* nothing here owns memory across an SD_TRY */

typedef struct {
    const char *key;
    size_t off;
    int wide; /* 1: int64_t, else int32_t */
} cfg_field;

#define F32(T, name) {#name, offsetof(T, name), 0}
#define F64(T, name) {#name, offsetof(T, name), 1}
static const cfg_field spmm_fields[] = {
    F32(sdi_spmm_config, k),          F32(sdi_spmm_config, warps),
    F32(sdi_spmm_config, klanes),     F32(sdi_spmm_config, nzpar),
    F32(sdi_spmm_config, vec),        F32(sdi_spmm_config, coarsen),
    F32(sdi_spmm_config, regcap),     F32(sdi_spmm_config, split_threshold),
    F32(sdi_spmm_config, chunk),      F32(sdi_spmm_config, split_mode),
    F32(sdi_spmm_config, long_nzpar), F32(sdi_spmm_config, win_rows),
    F32(sdi_spmm_config, win_cap),    F32(sdi_spmm_config, cw_width),
    F32(sdi_spmm_config, block),      F32(sdi_spmm_config, pcsr_v),
    F32(sdi_spmm_config, pcsr_s),     F32(sdi_spmm_config, pcsr_bound),
    F32(sdi_spmm_config, pcsr_group), F32(sdi_spmm_config, rp64),
};
static const cfg_field spgemm_fields[] = {
    F32(sdi_spgemm_config, threads),         F32(sdi_spgemm_config, tiny_max),
    F32(sdi_spgemm_config, ghash_max_lcap),  F32(sdi_spgemm_config, chash_max_lcap),
    F32(sdi_spgemm_config, load_pct),        F32(sdi_spgemm_config, gdense_max_lw),
    F32(sdi_spgemm_config, dense_pct),       F32(sdi_spgemm_config, one_phase_max_u),
    F32(sdi_spgemm_config, fuse),            F32(sdi_spgemm_config, out_ub),
    F32(sdi_spgemm_config, bt_gather),       F32(sdi_spgemm_config, force_kind),
    F32(sdi_spgemm_config, force_p),         F32(sdi_spgemm_config, force_g),
    F32(sdi_spgemm_config, min_lanes),       F32(sdi_spgemm_config, fast_compile),
    F32(sdi_spgemm_config, warp_brow),       F32(sdi_spgemm_config, cta_u),
    F64(sdi_spgemm_config, ws_budget),       F64(sdi_spgemm_config, chunk_rows),
};
#undef F32
#undef F64
#define NFIELDS(t) ((int)(sizeof t / sizeof t[0]))

static void fields_write(const void *cfg, const cfg_field *f, int n, sdi_json *j)
{
    for (int i = 0; i < n; i++) {
        const char *p = (const char *)cfg + f[i].off;
        int64_t v;
        if (f[i].wide)
            memcpy(&v, p, sizeof v);
        else {
            int32_t v32;
            memcpy(&v32, p, sizeof v32);
            v = v32;
        }
        sdi_json_key(j, f[i].key);
        sdi_json_int(j, (long long)v);
    }
}

/* Every field of the table from v (all present: an entry written by another layout of the
 * configuration does not read as this one); SD_ERR_PARSE names the field. */
static sd_status fields_read(const sdi_jvalue *v, const cfg_field *f, int n, const char *what, void *cfg)
{
    for (int i = 0; i < n; i++) {
        const sdi_jvalue *m = sdi_jget(v, f[i].key);
        if (m == NULL || m->type != SDI_JNUMBER)
            return SDI_ERR(SD_ERR_PARSE, "%s configuration: field '%s' is missing or not a number", what,
                           f[i].key);
        const double x = m->number;
        const double lo = f[i].wide ? -9007199254740992.0 : (double)INT32_MIN;
        const double hi = f[i].wide ? 9007199254740992.0 : (double)INT32_MAX;
        if (x != floor(x) || x < lo || x > hi)
            return SDI_ERR(SD_ERR_PARSE, "%s configuration: field '%s' = %g is not a %s integer", what,
                           f[i].key, x, f[i].wide ? "64-bit" : "32-bit");
        char *p = (char *)cfg + f[i].off;
        if (f[i].wide) {
            int64_t w = (int64_t)x;
            memcpy(p, &w, sizeof w);
        } else {
            int32_t w = (int32_t)x;
            memcpy(p, &w, sizeof w);
        }
    }
    return SD_OK;
}

static sd_status check_object(const sdi_jvalue *v, const char *what)
{
    if (v == NULL || v->type != SDI_JOBJECT)
        return SDI_ERR(SD_ERR_PARSE, "%s configuration: not a JSON object", what);
    return SD_OK;
}

void sdi_spmm_config_json(const sdi_spmm_config *c, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "template");
    sdi_json_string(j, sdi_spmm_template_name(c->tmpl));
    fields_write(c, spmm_fields, NFIELDS(spmm_fields), j);
    sdi_json_key(j, "ktile"); /* derived: for readers of reports, not read back */
    sdi_json_int(j, sdi_spmm_ktile(c));
    sdi_json_end_object(j);
}

sd_status sdi_spmm_config_from_json(const sdi_jvalue *v, sdi_spmm_config *out)
{
    memset(out, 0, sizeof *out);
    SD_TRY(check_object(v, "SpMM"));
    const char *name = sdi_jget_string(v, "template", NULL);
    out->tmpl = name != NULL ? sdi_spmm_template_from_name(name) : -1;
    if (out->tmpl < 0)
        return SDI_ERR(SD_ERR_PARSE, "SpMM configuration: unknown template '%s'", name ? name : "(none)");
    return fields_read(v, spmm_fields, NFIELDS(spmm_fields), "SpMM", out);
}

void sdi_spgemm_config_json(const sdi_spgemm_config *c, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "family");
    sdi_json_string(j, sdi_spgemm_family_name(c->family));
    fields_write(c, spgemm_fields, NFIELDS(spgemm_fields), j);
    sdi_json_end_object(j);
}

sd_status sdi_spgemm_config_from_json(const sdi_jvalue *v, sdi_spgemm_config *out)
{
    memset(out, 0, sizeof *out);
    SD_TRY(check_object(v, "SpGEMM"));
    const char *name = sdi_jget_string(v, "family", NULL);
    out->family = name != NULL ? sdi_spgemm_family_from_name(name) : -1;
    if (out->family < 0)
        return SDI_ERR(SD_ERR_PARSE, "SpGEMM configuration: unknown family '%s'", name ? name : "(none)");
    return fields_read(v, spgemm_fields, NFIELDS(spgemm_fields), "SpGEMM", out);
}

/* SpMV's JSON carries its one-line form, which names every non-zero field
 * (sdi_spmv_config_describe): reading that line is exact. */
sd_status sdi_spmv_config_from_json(const sdi_jvalue *v, sdi_spmv_config *out)
{
    memset(out, 0, sizeof *out);
    SD_TRY(check_object(v, "SpMV"));
    const char *text = sdi_jget_string(v, "text", NULL);
    if (text == NULL)
        return SDI_ERR(SD_ERR_PARSE, "SpMV configuration: no 'text' member");
    if (sdi_spmv_config_parse(text, out) != SD_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", sd_last_error());
        return SDI_ERR(SD_ERR_PARSE, "SpMV configuration: %s", why);
    }
    return SD_OK;
}
