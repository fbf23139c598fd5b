/* src/runtime/spgemm_measure.c: the SpGEMM validation rule and measurement protocol over a
 * producer of C (ours or cuSPARSE's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_memory.h"
#include "spgemm_exec.h"

/* ------------------------------------------------------------------ measurement */
typedef struct {
    sdi_spgemm_produce_fn fn;
    void *arg;
    sd_device_csr c;
    int have;
    const sdi_reference *ref;
    sdi_validation *val;
} measure_state;

static sd_status measure_run(sd_context *ctx, void *p, cudaStream_t st)
{
    (void)ctx;
    measure_state *m = p;
    if (m->have)
        sdi_spgemm_output_free(&m->c, st);
    m->have = 0;
    sd_status s = m->fn(m->arg, st, &m->c);
    if (s == SD_OK)
        m->have = 1;
    return s;
}

static sd_status measure_check(sd_context *ctx, void *p)
{
    measure_state *m = p;
    if (!m->have)
        return SDI_ERR(SD_ERR_INTERNAL, "spgemm measure: no output to check");
    return sdi_spgemm_check(ctx, m->ref, &m->c, m->val);
}

sd_status sdi_spgemm_check(sd_context *ctx, const sdi_reference *ref, const sd_device_csr *c,
                           sdi_validation *val)
{
    sdi_validation local;
    if (val == NULL)
        val = &local;
    memset(val, 0, sizeof *val);
    if (c->rows != ref->c.rows || c->cols != ref->c.cols) {
        snprintf(val->reason, sizeof val->reason, "C is %dx%d, want %dx%d", c->rows, c->cols,
                 ref->c.rows, ref->c.cols);
        return SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
    }
    /* The validation rule first (docs/ARCHITECTURE.md "Validation"; it sorts before
     * comparing). A pass on the device means C's
     * structure equals the sorted reference's entry for entry, so its columns strictly
     * increase and the host pass below, a copy of C and a loop over it per candidate
     * (0.65 GB for R-MAT scale 16), would only repeat that. */
    sd_status s = sdi_check_spgemm_output(ctx, ref, c->rows, c->cols, c->nnz, c->rowptr, 8, c->colind,
                                          c->vals, val);
    if (s != SD_OK || val->device)
        return s;
    /* Our promise beyond the rule: columns strictly increase in every row. */
    int64_t *rp = sdi_malloc_array((size_t)c->rows + 1, sizeof *rp);
    int32_t *ci = sdi_malloc_array((size_t)(c->nnz > 0 ? c->nnz : 1), sizeof *ci);
    s = rp && ci ? SD_OK : SDI_ERR(SD_ERR_OUT_OF_MEMORY, "host copy of C");
    if (s == SD_OK)
        s = sdi_copy_to_host(ctx, rp, c->rowptr, ((size_t)c->rows + 1) * 8, "C row pointers");
    if (s == SD_OK && c->nnz > 0)
        s = sdi_copy_to_host(ctx, ci, c->colind, (size_t)c->nnz * 4, "C columns");
    for (int32_t i = 0; s == SD_OK && i < c->rows; i++)
        for (int64_t q = rp[i] + 1; q < rp[i + 1]; q++)
            if (ci[q] <= ci[q - 1]) {
                val->ok = false;
                snprintf(val->reason, sizeof val->reason, "row %d: columns not sorted (%d after %d)",
                         i, ci[q], ci[q - 1]);
                s = SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
                break;
            }
    sdi_free(rp);
    sdi_free(ci);
    return s;
}

sd_status sdi_spgemm_measure(sd_context *ctx, const char *name, sdi_spgemm_produce_fn fn,
                             void *arg, const sdi_reference *ref, sdi_timing *t,
                             sdi_validation *val, int64_t *nnz_c, const sdi_screen *sc,
                             sdi_measured *how)
{
    measure_state m;
    memset(&m, 0, sizeof m);
    m.fn = fn;
    m.arg = arg;
    m.ref = ref;
    m.val = val;
    sd_status s = sdi_measure_screened(ctx, name, measure_run, &m, ref ? measure_check : NULL, &m, sc, t,
                                       how);
    if (nnz_c != NULL)
        *nnz_c = m.have ? m.c.nnz : -1;
    if (m.have)
        sdi_spgemm_output_free(&m.c, ctx->stream);
    sd_status q = sdi_stream_sync(ctx, "after measuring", name);
    return s != SD_OK ? s : q;
}
