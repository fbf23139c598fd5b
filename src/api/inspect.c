/* src/api/inspect.c: the public mirrors of `sparseditto rank` and `sparseditto plan`
 * (sd_rank, sd_plan, sd_json_free) and two host-matrix helpers the bindings need
 * (sd_csr_transpose, sd_csr_hash). Each returns what the CLI prints, as JSON text the
 * caller owns, so bindings need no command-line round trip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/gpu.h"
#include "model/energy.h"
#include "model/rank.h"
#include "runtime/runtime.h"
#include "tune/tune.h"

/* Hands the writer's finished buffer to the caller (*out) and empties the writer. */
static sd_status take_json(sdi_json *j, char **out)
{
    sd_status s = sdi_json_finish(j);
    if (s != SD_OK)
        return s;
    *out = j->buf;
    j->buf = NULL;
    j->len = j->cap = 0;
    return SD_OK;
}

static sd_status check_task(const char *fn, const sd_csr *a, sd_op op, int k, char **out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: out is NULL", fn);
    *out = NULL;
    if (a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: a is NULL", fn);
    if (op != SD_OP_SPMV && op != SD_OP_SPMM && op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: unknown operator %d", fn, (int)op);
    if (op == SD_OP_SPMM && k <= 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "%s: SpMM needs k >= 1 (got %d)", fn, k);
    if (op == SD_OP_SPMM && k > 65536)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "%s: k = %d is beyond 65536", fn, k);
    return SD_OK;
}

sd_status sd_rank(const sd_csr *a, sd_op op, int k, const char *model_path, char **json_out)
{
    sdi_energy_model m;
    sdi_json j;
    memset(&m, 0, sizeof m);
    sdi_json_init(&j, 0);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_energy_model_free(&m);                                                         \
        sdi_json_free(&j);                                                                 \
    } while (0)
    SD_TRY(check_task("sd_rank", a, op, k, json_out));
    if (op != SD_OP_SPMM)
        k = 1;
    if (model_path != NULL) {
        sd_status s = sdi_energy_load(model_path, &m);
        if (s != SD_OK) {
            sdi_error_prefix("sd_rank");
            SD_FREE_ALL;
            return s;
        }
    }
    sd_features f;
    SD_TRY(sd_analyze(a, op, &f));
    sdi_ranking r;
    sd_status s = model_path != NULL ? sdi_rank_energy(&m, &f, op, k, &r) : sdi_rank(&f, op, k, &r);
    if (s != SD_OK) {
        sdi_error_prefix("sd_rank");
        SD_FREE_ALL;
        return s;
    }
    /* The object of `sparseditto rank --json`, less "file". */
    sdi_json_begin_object(&j);
    sdi_ranking_report_json(&j, op, k, f.shape_class, model_path, &r);
    sdi_json_end_object(&j);
    SD_TRY(take_json(&j, json_out));
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sd_plan(const sd_csr *a, sd_op op, int k, const char *gpu, int branches,
                  char **json_out)
{
    sdi_tune_result *r = NULL;
    sdi_json plans, j;
    sdi_json_init(&plans, 0);
    sdi_json_init(&j, 0);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_tune_result_free(r); /* accepts NULL */                                      \
        sdi_free(r);                                                                       \
        sdi_json_free(&plans);                                                             \
        sdi_json_free(&j);                                                                 \
    } while (0)
    SD_TRY(check_task("sd_plan", a, op, k, json_out));
    if (branches < 0 || branches > 16)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_plan: branches must be in 0..16 (got %d)", branches);
    /* As the CLI: the named profile, else device 0 when usable, else the H200 profile. */
    sdi_gpu_props props;
    sd_status s = SD_ERR_NO_DEVICE;
    if (gpu == NULL)
        s = sdi_runtime_gpu_props(0, &props);
    if (s != SD_OK) {
        sdi_error_clear();
        s = sdi_gpu_profile(gpu != NULL ? gpu : "H200", &props);
        if (s != SD_OK) {
            sdi_error_prefix("sd_plan");
            return s;
        }
    }
    r = sdi_calloc(1, sizeof *r);
    SD_CHECK_ALLOC(r, "the plan record");
    /* SpGEMM: C = A·A for square A, A·Aᵀ otherwise (aat −1), as sd_compile. */
    s = op == SD_OP_SPGEMM ? sdi_tune_spgemm_offline(a, NULL, -1, &props, branches, 0, r, &plans)
                           : sdi_tune_offline(a, op, k, &props, branches, 0, r, &plans);
    if (s == SD_OK)
        s = sdi_json_finish(&plans);
    if (s != SD_OK) {
        sdi_error_prefix("sd_plan");
        SD_FREE_ALL;
        return s;
    }
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "gpu");
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "name");
    sdi_json_string(&j, props.name);
    sdi_json_key(&j, "from_device");
    sdi_json_bool(&j, props.from_device != 0);
    sdi_json_end_object(&j);
    sdi_json_key(&j, "plans"); /* what `sparseditto plan --json` prints */
    sdi_json_raw(&j, plans.buf);
    sdi_json_key(&j, "record"); /* ranking, trials and times by stage */
    sdi_tune_result_json(r, &j);
    sdi_json_end_object(&j);
    SD_TRY(take_json(&j, json_out));
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

void sd_json_free(char *json)
{
    sdi_free(json);
}

sd_status sd_csr_transpose(const sd_csr *a, sd_csr *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_csr_transpose: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_csr_transpose: a is NULL");
    sd_status s = sdi_csr_check_structure(a);
    if (s == SD_OK)
        s = sdi_csr_transpose(a, out);
    if (s != SD_OK)
        sdi_error_prefix("sd_csr_transpose");
    return s;
}

sd_status sd_csr_hash(const sd_csr *a, int with_values, char hex[33])
{
    if (hex == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_csr_hash: hex is NULL");
    hex[0] = '\0';
    if (a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_csr_hash: a is NULL");
    sd_status s = sdi_csr_check_structure(a);
    if (s != SD_OK) {
        sdi_error_prefix("sd_csr_hash");
        return s;
    }
    sdi_hash128 h = sdi_pattern_hash(a);
    if (with_values && a->nnz > 0) /* the values hashed with the pattern's hash as seed */
        h = sdi_hash_bytes(a->vals, (size_t)a->nnz * sizeof *a->vals, h.lo ^ h.hi);
    sdi_hash_hex(h, hex);
    return SD_OK;
}
