/* src/runtime/lowered.c: building a lowered plan (the families' lowering helpers), freeing
 * it, following new values, its compile request and its JSON. Host code only. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../formats/spmm_formats.h"
#include "lowered.h"

/* ------------------------------------------------------------------ building */
sd_status sdi_lowered_add_macro(sdi_lowered *l, const char *name, const char *fmt, ...)
{
    if (l->nmacros >= SDI_LOW_MAX_MACROS)
        return SDI_ERR(SD_ERR_INTERNAL, "lowering: more than %d macros (at %s)",
                       SDI_LOW_MAX_MACROS, name);
    if (strlen(name) >= sizeof l->macro_name[0])
        return SDI_ERR(SD_ERR_INTERNAL, "lowering: macro name %s is longer than %zu characters",
                       name, sizeof l->macro_name[0] - 1);
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(l->macro_value[l->nmacros], sizeof l->macro_value[0], fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof l->macro_value[0])
        return SDI_ERR(SD_ERR_INTERNAL, "lowering: the value of macro %s is longer than %zu "
                       "characters", name, sizeof l->macro_value[0] - 1);
    snprintf(l->macro_name[l->nmacros], sizeof l->macro_name[0], "%s", name);
    l->nmacros++;
    return SD_OK;
}

sd_status sdi_lowered_add_array(sdi_lowered *l, const char *name, int role, void *host,
                                size_t host_bytes, size_t bytes, int owned, int *index)
{
    if (index != NULL)
        *index = -1;
    if (l->narrays >= SDI_LOW_MAX_ARRAYS || strlen(name) >= sizeof l->arr[0].name ||
        host_bytes > bytes) {
        if (owned)
            sdi_free(host); /* ownership passed with the call */
        if (host_bytes > bytes)
            return SDI_ERR(SD_ERR_INTERNAL, "lowering: array %s has %zu host bytes for %zu "
                           "device bytes", name, host_bytes, bytes);
        return SDI_ERR(SD_ERR_INTERNAL, "lowering: array %s: more than %d arrays or a name "
                       "longer than %zu characters", name, SDI_LOW_MAX_ARRAYS,
                       sizeof l->arr[0].name - 1);
    }
    sdi_low_array *a = &l->arr[l->narrays];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->host = host;
    a->bytes = bytes;
    a->host_bytes = host != NULL ? host_bytes : 0;
    a->role = role;
    a->owned = owned;
    a->fmt_array = -1;
    /* What the plan costs: M_value, M_meta and the workspace W, by role. */
    if (role == SDI_LOW_VALUE)
        l->bytes_value += (int64_t)bytes;
    else if (role == SDI_LOW_META)
        l->bytes_meta += (int64_t)bytes;
    else
        l->bytes_work += (int64_t)bytes;
    if (index != NULL)
        *index = l->narrays;
    l->narrays++;
    return SD_OK;
}

sd_status sdi_lowered_add_kernel(sdi_lowered *l, const char *name, int *index)
{
    for (int i = 0; i < l->nkernels; i++)
        if (strcmp(l->kname[i], name) == 0) {
            if (index != NULL)
                *index = i;
            return SD_OK;
        }
    if (l->nkernels >= SDI_LOW_MAX_KERNELS || strlen(name) >= sizeof l->kname[0])
        return SDI_ERR(SD_ERR_INTERNAL, "lowering: kernel %s: more than %d kernels or a name "
                       "longer than %zu characters", name, SDI_LOW_MAX_KERNELS,
                       sizeof l->kname[0] - 1);
    snprintf(l->kname[l->nkernels], sizeof l->kname[0], "%s", name);
    if (index != NULL)
        *index = l->nkernels;
    l->nkernels++;
    return SD_OK;
}

static int low_role(int fmt_role)
{
    return fmt_role == SDI_ROLE_VALUE ? SDI_LOW_VALUE
                                      : fmt_role == SDI_ROLE_WORKSPACE ? SDI_LOW_WORK : SDI_LOW_META;
}

/* Host-only and empty arrays stay in the format only: nothing to upload or bind (a launch
 * passes a null pointer for them, as for an absent array). */
static bool fmt_on_device(const sdi_fmt_array *fa)
{
    return fa->role != SDI_ROLE_HOST && fa->count > 0;
}

sd_status sdi_lowered_adopt_format(sdi_lowered *l, sdi_devfmt *f, int *index_of)
{
    if (l->has_fmt)
        return SDI_ERR(SD_ERR_INTERNAL, "lowering: a second format");
    int n = 0;
    for (int i = 0; i < f->n_arrays; i++)
        n += fmt_on_device(&f->arr[i]);
    if (l->narrays + n > SDI_LOW_MAX_ARRAYS)
        return SDI_ERR(SD_ERR_INTERNAL, "lowering: the format's %d arrays exceed %d", n,
                       SDI_LOW_MAX_ARRAYS - l->narrays);
    /* Checked first: from here nothing fails, so f is either taken whole or left as it is. */
#define SD_FREE_ALL
    for (int i = 0; i < f->n_arrays; i++) {
        const sdi_fmt_array *fa = &f->arr[i];
        if (index_of != NULL)
            index_of[i] = -1;
        if (!fmt_on_device(fa))
            continue;
        const size_t bytes = (size_t)fa->count * (size_t)fa->elem_size;
        const bool work = fa->role == SDI_ROLE_WORKSPACE;
        const size_t host_bytes = work ? 0 : (size_t)fa->host_count * (size_t)fa->elem_size;
        int idx = -1;
        SD_TRY(sdi_lowered_add_array(l, fa->name, low_role(fa->role), work ? NULL : fa->data,
                                     host_bytes, bytes, 0, &idx));
        l->arr[idx].fmt_array = i;
        if (index_of != NULL)
            index_of[i] = idx;
    }
#undef SD_FREE_ALL
    l->fmt = *f; /* the arrays point into it: the data pointers move with it */
    l->has_fmt = true;
    memset(f, 0, sizeof *f);
    return SD_OK;
}

int sdi_lowered_find_array(const sdi_lowered *l, const char *name)
{
    for (int i = 0; i < l->narrays; i++)
        if (strcmp(l->arr[i].name, name) == 0)
            return i;
    return -1;
}

void sdi_lowered_free(sdi_lowered *l)
{
    if (l == NULL)
        return;
    for (int i = 0; i < l->narrays; i++) {
        if (l->arr[i].owned)
            sdi_free(l->arr[i].host);
        sdi_free(l->arr[i].src);
    }
    if (l->has_fmt)
        sdi_format_free(&l->fmt);
    sdi_sg_schedule_free(&l->sg);
    sdi_sg_lowered_free(&l->sg_units);
    memset(l, 0, sizeof *l);
}

sd_status sdi_lowered_refresh(sdi_lowered *l, const sd_csr *a)
{
    if (a == NULL || (a->nnz > 0 && a->vals == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "refresh: no values");
    if (l->has_fmt) {
        /* Owned value arrays refilled in place, borrowed ones re-pointed at a's values:
         * the lowering's arrays follow the format's. */
        sd_status s = sdi_format_refresh_values(&l->fmt, a);
        if (s != SD_OK)
            return s;
        for (int i = 0; i < l->narrays; i++) {
            sdi_low_array *x = &l->arr[i];
            if (x->fmt_array < 0 || x->role != SDI_LOW_VALUE)
                continue;
            const sdi_fmt_array *fa = &l->fmt.arr[x->fmt_array];
            x->host = fa->data;
            x->host_bytes = (size_t)fa->host_count * (size_t)fa->elem_size;
        }
    }
    for (int i = 0; i < l->narrays; i++) {
        sdi_low_array *x = &l->arr[i];
        if (x->role != SDI_LOW_VALUE || x->fmt_array >= 0)
            continue;
        if (x->src != NULL) {
            sdi_spmm_gather_values(x->src, x->nslots, a->vals, x->host);
        } else if (x->owned) {
            memcpy(x->host, a->vals, (size_t)x->nslots * sizeof(float));
        } else {
            x->host = (void *)a->vals; /* borrowed: point at the new values */
        }
    }
    return SD_OK;
}

sd_status sdi_lowered_jit_request(const sdi_lowered *l, const char *arch, sdi_macro *macros,
                                  sdi_jit_request *req)
{
    memset(req, 0, sizeof *req);
    if (l->op == SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "a SpGEMM program is one request per launch unit "
                       "(sdi_spgemm_unit_request)");
    if (l->nlaunches == 0 || l->nkernels == 0)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "an empty program (no launches) compiles nothing");
    for (int i = 0; i < l->nmacros; i++) {
        macros[i].name = l->macro_name[i];
        macros[i].value = l->macro_value[i];
    }
    req->template_name = l->template_name;
    req->macros = macros;
    req->nmacros = l->nmacros;
    req->arch = arch;
    /* The kernel named in messages: SpMM's first, SpMV's last launched (as they were). */
    const int k = l->op == SD_OP_SPMM ? 0 : l->launch[l->nlaunches - 1].kernel;
    req->kernel_name = l->kname[k >= 0 && k < l->nkernels ? k : 0];
    return SD_OK;
}

/* ------------------------------------------------------------------ JSON */
static const char *role_name(int role)
{
    return role == SDI_LOW_VALUE ? "value" : role == SDI_LOW_WORK ? "work" : "meta";
}

static const char *arg_name(int kind)
{
    switch (kind) {
    case SDI_LOW_ARG_ARRAY: return "array";
    case SDI_LOW_ARG_IN: return "in";
    case SDI_LOW_ARG_OUT: return "out";
    case SDI_LOW_ARG_NULL: return "null";
    case SDI_LOW_ARG_I32: return "i32";
    default: return "i64";
    }
}

static void json_dim3(sdi_json *j, const char *key, const unsigned d[3])
{
    sdi_json_key(j, key);
    sdi_json_begin_array(j);
    for (int i = 0; i < 3; i++)
        sdi_json_int(j, d[i]);
    sdi_json_end_array(j);
}

static void json_spgemm(const sdi_lowered *l, sdi_json *j)
{
    sdi_json_key(j, "schedule");
    sdi_sg_schedule_json(&l->sg, j);
    sdi_json_key(j, "shapes");
    sdi_json_string(j, l->sg_units.hex);
    sdi_json_key(j, "units");
    sdi_json_begin_array(j);
    for (int u = 0; u < l->sg_units.nunits; u++)
        sdi_json_string(j, l->sg_units.units[u].name);
    sdi_json_end_array(j);
    sdi_json_key(j, "config");
    sdi_json_string(j, l->sg.config_text);
}

void sdi_lowered_json(const sdi_lowered *l, sdi_json *j)
{
    sdi_json_begin_object(j);
    if (l->op == SD_OP_SPGEMM) {
        json_spgemm(l, j);
        sdi_json_end_object(j);
        return;
    }
    sdi_json_key(j, "template");
    sdi_json_string(j, l->template_name);
    sdi_json_key(j, "kernels");
    sdi_json_begin_array(j);
    for (int i = 0; i < l->nkernels; i++)
        sdi_json_string(j, l->kname[i]);
    sdi_json_end_array(j);
    sdi_json_key(j, "macros");
    sdi_json_begin_object(j);
    for (int i = 0; i < l->nmacros; i++) {
        sdi_json_key(j, l->macro_name[i]);
        sdi_json_string(j, l->macro_value[i]);
    }
    sdi_json_end_object(j);
    sdi_json_key(j, "arrays");
    sdi_json_begin_array(j);
    for (int i = 0; i < l->narrays; i++) {
        const sdi_low_array *a = &l->arr[i];
        sdi_json_begin_object(j);
        sdi_json_key(j, "name");
        sdi_json_string(j, a->name);
        sdi_json_key(j, "role");
        sdi_json_string(j, role_name(a->role));
        sdi_json_key(j, "bytes");
        sdi_json_int(j, (int64_t)a->bytes);
        sdi_json_key(j, "host_bytes");
        sdi_json_int(j, (int64_t)a->host_bytes);
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_key(j, "launches");
    sdi_json_begin_array(j);
    for (int i = 0; i < l->nlaunches; i++) {
        const sdi_low_launch *x = &l->launch[i];
        sdi_json_begin_object(j);
        sdi_json_key(j, "kernel");
        sdi_json_string(j, x->kernel >= 0 && x->kernel < l->nkernels ? l->kname[x->kernel] : "");
        json_dim3(j, "grid", x->grid);
        json_dim3(j, "block", x->block);
        if (x->dyn_smem > 0) {
            sdi_json_key(j, "dyn_smem");
            sdi_json_int(j, x->dyn_smem);
        }
        if (x->grid_stride) {
            sdi_json_key(j, "grid_stride");
            sdi_json_bool(j, true);
        }
        sdi_json_key(j, "args");
        sdi_json_begin_array(j);
        for (int q = 0; q < x->nargs; q++) {
            const sdi_low_arg *g = &x->args[q];
            if (g->kind == SDI_LOW_ARG_ARRAY && g->index >= 0 && g->index < l->narrays)
                sdi_json_string(j, l->arr[g->index].name);
            else if (g->kind == SDI_LOW_ARG_I32 || g->kind == SDI_LOW_ARG_I64)
                sdi_json_int(j, g->value);
            else
                sdi_json_string(j, arg_name(g->kind));
        }
        sdi_json_end_array(j);
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_key(j, "bytes");
    sdi_json_begin_object(j);
    sdi_json_key(j, "value");
    sdi_json_int(j, l->bytes_value);
    sdi_json_key(j, "meta");
    sdi_json_int(j, l->bytes_meta);
    sdi_json_key(j, "work");
    sdi_json_int(j, l->bytes_work);
    sdi_json_end_object(j);
    sdi_json_key(j, "slots");
    sdi_json_int(j, l->slots);
    sdi_json_key(j, "padding_ratio");
    sdi_json_number(j, l->nnz > 0 ? (double)l->slots / (double)l->nnz : 0.0);
    sdi_json_key(j, "smem");
    sdi_json_int(j, l->smem);
    sdi_json_key(j, "build_ms");
    sdi_json_number(j, l->build_ms);
    if (l->has_fmt) {
        sdi_json_key(j, "format");
        sdi_format_json(&l->fmt, j);
    }
    sdi_json_end_object(j);
}
