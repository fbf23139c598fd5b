/* src/formats/fmt_common.c: the format descriptor: array table, byte counts (M_rep),
 * JSON description, freeing, fill limits, and value refresh by rebuilding. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "formats.h"

static const char *const kind_names[SDI_FMT_NKINDS] = {
    "csr", "rowblocks", "merge", "coo", "ell", "sell", "bsr", "tiles16", "dia",
};

const char *sdi_fmt_kind_name(int kind)
{
    return kind >= 0 && kind < SDI_FMT_NKINDS ? kind_names[kind] : "unknown";
}

int sdi_format_find(const sdi_devfmt *f, const char *name)
{
    for (int i = 0; i < f->n_arrays; i++)
        if (strcmp(f->arr[i].name, name) == 0)
            return i;
    return -1;
}

const sdi_fmt_array *sdi_format_array(const sdi_devfmt *f, const char *name)
{
    int i = sdi_format_find(f, name);
    return i < 0 ? NULL : &f->arr[i];
}

int64_t sdi_format_bytes(const sdi_devfmt *f, sdi_fmt_role role)
{
    int64_t total = 0;
    for (int i = 0; i < f->n_arrays; i++)
        if (f->arr[i].role == (int32_t)role)
            total += f->arr[i].count * f->arr[i].elem_size;
    return total;
}

void sdi_format_free(sdi_devfmt *f)
{
    if (f == NULL)
        return;
    for (int i = 0; i < f->n_arrays; i++)
        if (f->arr[i].owned)
            sdi_free(f->arr[i].data);
    memset(f, 0, sizeof *f);
}

sd_status sdi_format_add(sdi_devfmt *f, const char *name, void *data, int64_t count,
                         int64_t host_count, int32_t elem_size, sdi_fmt_role role, int owned)
{
    if (f->n_arrays >= SDI_FMT_MAX_ARRAYS || strlen(name) >= SDI_FMT_NAME) {
        if (owned)
            sdi_free(data);
        return SDI_ERR(SD_ERR_INTERNAL, "format %s: array table full or name '%s' too long",
                       sdi_fmt_kind_name(f->kind), name);
    }
    sdi_fmt_array *a = &f->arr[f->n_arrays++];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->data = data;
    a->count = count;
    a->host_count = host_count;
    a->elem_size = elem_size;
    a->role = (int32_t)role;
    a->owned = owned;
    return SD_OK;
}

sd_status sdi_format_check_fill(const char *what, int64_t slots, int64_t nnz, double max_fill)
{
    if (max_fill <= 0)
        max_fill = SDI_FMT_DEFAULT_FILL;
    double limit = max_fill * (double)nnz + SDI_FMT_FILL_SLACK;
    if ((double)slots > limit)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "%s would store %lld slots for %lld nonzeros (fill %.1f > limit %.1f)",
                       what, (long long)slots, (long long)nnz,
                       nnz > 0 ? (double)slots / (double)nnz : INFINITY, max_fill);
    return SD_OK;
}

static const char *role_name(int32_t r)
{
    switch (r) {
    case SDI_ROLE_META:
        return "meta";
    case SDI_ROLE_VALUE:
        return "value";
    case SDI_ROLE_WORKSPACE:
        return "workspace";
    default:
        return "host";
    }
}

void sdi_format_json(const sdi_devfmt *f, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "kind");
    sdi_json_string(j, sdi_fmt_kind_name(f->kind));
    sdi_json_key(j, "rows");
    sdi_json_int(j, f->rows);
    sdi_json_key(j, "cols");
    sdi_json_int(j, f->cols);
    sdi_json_key(j, "nnz");
    sdi_json_int(j, f->nnz);
    sdi_json_key(j, "slots");
    sdi_json_int(j, f->slots);
    sdi_json_key(j, "value_bytes");
    sdi_json_int(j, sdi_format_bytes(f, SDI_ROLE_VALUE));
    sdi_json_key(j, "meta_bytes");
    sdi_json_int(j, sdi_format_bytes(f, SDI_ROLE_META));
    sdi_json_key(j, "workspace_bytes");
    sdi_json_int(j, sdi_format_bytes(f, SDI_ROLE_WORKSPACE));
    sdi_json_key(j, "arrays");
    sdi_json_begin_array(j);
    for (int i = 0; i < f->n_arrays; i++) {
        const sdi_fmt_array *a = &f->arr[i];
        sdi_json_begin_object(j);
        sdi_json_key(j, "name");
        sdi_json_string(j, a->name);
        sdi_json_key(j, "elem");
        sdi_json_int(j, a->elem_size);
        sdi_json_key(j, "count");
        sdi_json_int(j, a->count);
        sdi_json_key(j, "role");
        sdi_json_string(j, role_name(a->role));
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_end_object(j);
}

/* Rebuilds f's kind with f's parameters from a (same pattern, new values). */
static sd_status rebuild(const sdi_devfmt *f, const sd_csr *a, sdi_devfmt *out)
{
    sdi_csr_opts o = {f->rp32, f->colc, f->colc_shift};
    switch (f->kind) {
    case SDI_FMT_CSR:
        return sdi_fmt_csr(a, &o, out);
    case SDI_FMT_ROWBLOCKS:
        return sdi_fmt_rowblocks(a, &o, f->rb_cap, f->rb_max_rows, f->rb_piece, out);
    case SDI_FMT_MERGE:
        return sdi_fmt_merge(a, &o, f->mp_tile, f->mp_tiles_per_cta, out);
    case SDI_FMT_COO:
        return sdi_fmt_coo(a, out);
    case SDI_FMT_ELL:
        return sdi_fmt_ell(a, 1e30, out);
    case SDI_FMT_SELL:
        return sdi_fmt_sell(a, f->sell_c, f->sell_sigma, 1e30, out);
    case SDI_FMT_BSR:
        return sdi_fmt_bsr(a, f->bsr_b, 1e30, out);
    case SDI_FMT_TILES16:
        return sdi_fmt_tiles16(a, f->t_dense_min, f->t_coo_max, 1e30, out);
    case SDI_FMT_DIA:
        return sdi_fmt_dia(a, 1e30, f->dia_ndiag > 0 ? f->dia_ndiag : 1, out);
    default:
        return SDI_ERR(SD_ERR_INTERNAL, "format kind %d unknown", f->kind);
    }
}

sd_status sdi_format_refresh_values(sdi_devfmt *f, const sd_csr *a)
{
    if (f == NULL || a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "refresh values: NULL format or matrix");
    if (a->rows != f->rows || a->cols != f->cols || a->nnz != f->nnz)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "refresh values: matrix %dx%d (%lld nnz) is not the format's %dx%d "
                       "(%lld nnz)",
                       a->rows, a->cols, (long long)a->nnz, f->rows, f->cols,
                       (long long)f->nnz);
    sdi_devfmt g;
    sd_status s = rebuild(f, a, &g);
    if (s != SD_OK)
        return s;
    for (int i = 0; i < f->n_arrays; i++) {
        sdi_fmt_array *dst = &f->arr[i];
        if (dst->role != SDI_ROLE_VALUE)
            continue;
        int k = sdi_format_find(&g, dst->name);
        if (k < 0 || g.arr[k].count != dst->count || g.arr[k].host_count != dst->host_count) {
            sdi_format_free(&g);
            return SDI_ERR(SD_ERR_INVALID_ARG,
                           "refresh values: array %s differs: not the same pattern", dst->name);
        }
        if (dst->owned && g.arr[k].owned) {
            memcpy(dst->data, g.arr[k].data, (size_t)dst->host_count * (size_t)dst->elem_size);
        } else {
            if (dst->owned)
                sdi_free(dst->data);
            dst->data = g.arr[k].data;
            dst->owned = g.arr[k].owned;
            g.arr[k].owned = 0; /* moved */
        }
    }
    sdi_format_free(&g);
    return SD_OK;
}
