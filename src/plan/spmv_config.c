/* src/plan/spmv_config.c: what SpMV plans share outside their families
 * (src/plan/families/spmv_*.c): the families' names through the table, and the
 * configuration's text and JSON forms. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"
#include "spmv.h"

const char *sdi_spmv_family_name(int family)
{
    const sdi_family *f = sdi_family_at(sdi_family_of(SD_OP_SPMV, family));
    return f != NULL ? f->name : "unknown";
}

int sdi_spmv_family_from_name(const char *name)
{
    const sdi_family *f = name != NULL ? sdi_family_at(sdi_family_find(SD_OP_SPMV, name)) : NULL;
    return f != NULL ? f->id : -1;
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
