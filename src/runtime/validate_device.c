/* src/runtime/validate_device.c: CPU references for the operators (src/ref, double
 * accumulation) kept per task, and the check of a device output against them:
 * the rule of docs/ARCHITECTURE.md "Validation" (src/ref/validate.c) on the host,
 * preceded for large outputs (dense,
 * and SpGEMM's CSR) by a device-side check against a mirror of the reference. Why the
 * mirror: a search validates every candidate, and copying a 10⁸-entry output back and
 * judging it on the host cost about a second per candidate, which dominated compile time
 * on large tasks (SpGEMM: 71 s of an 89 s R-MAT compile); the device check reads back
 * 16 bytes. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/sd_validate.cuh"
#include "context.h"
#include "device_memory.h"
#include "module.h"
#include "validate_device.h"

struct sdi_ref_device {
    pthread_mutex_t lock;
    int state;              /* 0 not built yet, 1 ready, -1 unavailable: host path */
    const sd_context *ctx;  /* the context the mirror was built in */
    float *want;            /* rows × k (SpGEMM: nnz), the reference rounded to FP32 */
    float *tol;             /* the same, conservative bound (negative: host decides) */
    long long *rowptr;      /* SpGEMM: the reference's rows + 1 row pointers */
    int *col;               /* SpGEMM: its nnz column indices */
    unsigned long long *result; /* sd_validate_args.result */
    sdi_module mod;
    /* SpGEMM products whose whole mirror would crowd the device: only the row pointers stay,
     * want / tol / col hold two chunk slots (SDI_MIRROR_CHUNK entries each), refilled from
     * the reference at every check (mirror_check_streamed). */
    int streamed;
    char *stage;            /* two host slots the chunks are computed in (pinned if it could) */
    bool stage_pinned;
    cudaEvent_t ev[2];      /* a slot's last use (upload, or check kernel) */
};

static void mirror_stage_release(struct sdi_ref_device *d)
{
    for (int q = 0; q < 2; q++) {
        if (d->ev[q] != NULL)
            cudaEventDestroy(d->ev[q]);
        d->ev[q] = NULL;
    }
    if (d->stage_pinned)
        cudaFreeHost(d->stage); /* waits for the copies still reading it */
    else
        sdi_free(d->stage);
    d->stage = NULL;
    d->stage_pinned = false;
}

static void mirror_release(struct sdi_ref_device *d)
{
    mirror_stage_release(d);
    d->streamed = 0;
    sdi_device_free(d->want);
    sdi_device_free(d->tol);
    sdi_device_free(d->rowptr);
    sdi_device_free(d->col);
    sdi_device_free(d->result);
    sdi_module_unload(&d->mod);
    d->want = d->tol = NULL;
    d->rowptr = NULL;
    d->col = NULL;
    d->result = NULL;
}

static void ref_device_free(struct sdi_ref_device *d)
{
    if (d == NULL)
        return;
    mirror_release(d);
    pthread_mutex_destroy(&d->lock);
    sdi_free(d);
}

void sdi_reference_free(sdi_reference *r)
{
    if (r == NULL)
        return;
    sdi_free(r->want);
    sdi_free(r->count);
    sdi_free(r->absum);
    sdi_ref_csr_free(&r->c);
    ref_device_free(r->dev);
    memset(r, 0, sizeof *r);
}

sd_status sdi_reference_dense(const sd_csr *a, sd_op op, const float *xb, int k, int exact,
                              sdi_reference *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_reference_dense: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || xb == NULL || (op != SD_OP_SPMV && op != SD_OP_SPMM) ||
        (op == SD_OP_SPMM && k < 1))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_reference_dense: bad arguments");
    if (op == SD_OP_SPMV)
        k = 1;
    sdi_reference r;
    memset(&r, 0, sizeof r);
#define SD_FREE_ALL sdi_reference_free(&r)
    r.op = op;
    r.k = k;
    r.exact = exact;
    r.rows = a->rows;
    size_t n = (size_t)a->rows * (size_t)k;
    /* Linux grants more than it has and kills the process when the pages are touched: a
     * reference larger than the available memory is refused before it is allocated, as
     * SpGEMM's is (the delaunay_n24 twin's SpMM at K = 256: 68 GB of doubles). */
    const double need = (double)n * (double)(sizeof *r.want + sizeof *r.absum) +
                        (double)a->rows * (double)sizeof *r.count;
    long long avail = -1;
    if (!sdi_host_mem_fits(need, &avail))
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                       "the CPU reference of this %s (%d rows x %d) needs %.1f GiB of host "
                       "memory but %.1f GiB are available",
                       op == SD_OP_SPMV ? "SpMV" : "SpMM", a->rows, k, need / 1073741824.0,
                       (double)avail / 1073741824.0);
    r.want = sdi_malloc_array(n, sizeof *r.want);
    r.absum = sdi_malloc_array(n, sizeof *r.absum);
    r.count = sdi_malloc_array((size_t)a->rows, sizeof *r.count);
    SD_CHECK_ALLOC(r.want, "reference output");
    SD_CHECK_ALLOC(r.absum, "reference bounds");
    SD_CHECK_ALLOC(r.count, "reference counts");
    r.dev = sdi_calloc(1, sizeof *r.dev);
    SD_CHECK_ALLOC(r.dev, "reference device mirror");
    pthread_mutex_init(&r.dev->lock, NULL);
    if (op == SD_OP_SPMV)
        SD_TRY(sdi_ref_spmv(a, xb, r.want, r.count, r.absum));
    else
        SD_TRY(sdi_ref_spmm(a, xb, k, r.want, r.count, r.absum));
    *out = r;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_reference_spgemm(const sd_csr *a, const sd_csr *b, sdi_reference *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_reference_spgemm: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL || b == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_reference_spgemm: a or b is NULL");
    out->op = SD_OP_SPGEMM;
    out->k = 0;
    out->rows = a->rows;
    sd_status s = sdi_ref_spgemm(a, b, &out->c);
    if (s == SD_OK) {
        out->dev = sdi_calloc(1, sizeof *out->dev);
        if (out->dev == NULL)
            s = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the reference's device mirror");
        else
            pthread_mutex_init(&out->dev->lock, NULL);
    }
    if (s != SD_OK)
        sdi_reference_free(out);
    return s;
}

/* One entry of the mirror: want_f = (float)want and tol_f = bound − |want_f − want|
 * rounded towards zero (the double terms nudged by 2⁻⁵⁰ the safe way), so
 * |got − want_f| ≤ tol_f implies |got − want| ≤ bound exactly; tol_f < 0 when the rounding
 * alone uses up the bound (the host judges that entry). Exact mode: bound 0, so only
 * entries whose reference is an FP32 value pass. */
static void mirror_entry(double want, int64_t count, double absum, int exact, float *wf_out,
                         float *tf_out)
{
    const float wf = (float)want;
    const double bound = exact ? 0.0 : sdi_validation_bound(want, count, absum);
    const double left = bound * (1.0 - 0x1p-50) - fabs((double)wf - want) * (1.0 + 0x1p-50);
    float tf = -1.0f;
    if (isfinite(want) && isfinite(wf) && left >= 0.0) {
        tf = (float)left;
        if ((double)tf > left)
            tf = nextafterf(tf, 0.0f);
    }
    *wf_out = wf;
    *tf_out = tf;
}

/* Mirror entries [e0, e1) into hw / ht (and, SpGEMM, the reference's columns into hc). */
static void mirror_fill(const sdi_reference *r, int64_t e0, int64_t e1, float *hw, float *ht,
                        int32_t *hc)
{
    if (r->op == SD_OP_SPGEMM) {
        const sdi_ref_csr *c = &r->c;
#pragma omp parallel for schedule(static)
        for (int64_t e = e0; e < e1; e++) {
            mirror_entry(c->vals[e], c->count[e], c->absum[e], 0, &hw[e - e0], &ht[e - e0]);
            hc[e - e0] = c->colind[e];
        }
    } else {
        const int64_t k = r->k;
#pragma omp parallel for schedule(static)
        for (int64_t e = e0; e < e1; e++)
            mirror_entry(r->want[e], r->count[e / k], r->absum[e], r->exact, &hw[e - e0],
                         &ht[e - e0]);
    }
}

/* The mirror's parts belong to d: on failure the caller releases them (mirror_release). */
#define SD_FREE_ALL ((void)0)

/* Two host slots of `chunk` entries (want, tol and, SpGEMM, col) and their events, in d. */
static sd_status mirror_stage_alloc(sd_context *ctx, struct sdi_ref_device *d, int64_t chunk,
                                    bool sparse, bool try_pinned)
{
    const size_t bytes = 2 * (size_t)chunk * (sparse ? 12 : 8);
    d->stage_pinned = try_pinned && cudaHostAlloc((void **)&d->stage, bytes, cudaHostAllocDefault) == cudaSuccess;
    if (!d->stage_pinned) {
        (void)cudaGetLastError();
        d->stage = sdi_malloc(bytes);
        if (d->stage == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the device-check staging");
    }
    for (int q = 0; q < 2; q++)
        SD_TRY(sdi_cuda_status(ctx, cudaEventCreateWithFlags(&d->ev[q], cudaEventDisableTiming),
                               "creating an event for", "the device-check upload"));
    return SD_OK;
}

/* Entries [e0, e1) of the mirror computed into host slot q and uploaded to device offset
 * `at` (the whole mirror: e0; a streamed chunk: its slot); the slot's last use is waited for
 * first, and the upload is the slot's new last use unless the caller records a later one. */
static sd_status mirror_chunk_upload(sd_context *ctx, const sdi_reference *r, struct sdi_ref_device *d,
                                     int64_t e0, int64_t e1, int q, int64_t chunk, int64_t at)
{
    const bool sparse = r->op == SD_OP_SPGEMM;
    const size_t slot_bytes = (size_t)chunk * (sparse ? 12 : 8);
    const size_t m = (size_t)(e1 - e0);
    SD_TRY(sdi_cuda_status(ctx, cudaEventSynchronize(d->ev[q]), "waiting for",
                           "the device-check upload"));
    float *hw = (float *)(d->stage + (size_t)q * slot_bytes), *ht = hw + chunk;
    int32_t *hc = sparse ? (int32_t *)(ht + chunk) : NULL;
    mirror_fill(r, e0, e1, hw, ht, hc);
    SD_TRY(sdi_cuda_status(ctx, cudaMemcpyAsync(d->want + at, hw, m * 4, cudaMemcpyHostToDevice,
                                                ctx->stream),
                           "uploading", "the device-check reference"));
    SD_TRY(sdi_cuda_status(ctx, cudaMemcpyAsync(d->tol + at, ht, m * 4, cudaMemcpyHostToDevice,
                                                ctx->stream),
                           "uploading", "the device-check bounds"));
    if (sparse)
        SD_TRY(sdi_cuda_status(ctx, cudaMemcpyAsync(d->col + at, hc, m * 4, cudaMemcpyHostToDevice,
                                                    ctx->stream),
                               "uploading", "the device-check column indices"));
    return sdi_cuda_status(ctx, cudaEventRecord(d->ev[q], ctx->stream), "recording an event for",
                           "the device-check upload");
}

/* Builds the device mirror of r (d->lock held): want/tol per output entry, for SpGEMM
 * also the reference's structure, the result words and the check's kernel. The entries
 * are computed a chunk at a time into two pinned slots whose uploads overlap the next
 * chunk's computation: the af_shell10 twin's 1.3·10⁹ entries took 6.5 s built whole in
 * pageable memory and uploaded in one piece. Without pinned memory the slots are
 * pageable (each copy then completes before the slot is reused). An SpGEMM mirror larger
 * than a quarter of the free device memory is streamed (d->streamed): the host path it
 * replaces copied C back and compared it on the host, ~29 s a candidate for the 1.8·10⁹
 * entries of the Belcastro_mouse_gene twin; streamed, each check still computes every
 * entry's bound on the host and uploads it (that twin's candidates take ~8.5 s each on
 * the H200, ~3 s of it their three products: `sparseditto compile --gen
 * twin:name=Belcastro_mouse_gene --op spgemm --progress`), so a mirror stays resident
 * whenever it can. */
static sd_status ref_device_build(sd_context *ctx, const sdi_reference *r,
                                  struct sdi_ref_device *d)
{
    const bool sparse = r->op == SD_OP_SPGEMM;
    const int64_t n = sparse ? r->c.nnz : r->rows * (int64_t)r->k;
    const int64_t chunk = n < SDI_MIRROR_CHUNK ? (n > 0 ? n : 1) : SDI_MIRROR_CHUNK;
    if (sparse) {
        /* The mirror must not crowd the candidates being checked: at most a quarter of
         * what is free, else streamed (row pointers and two chunk slots). A quarter
         * leaves room: the mirror is 12 bytes an entry of C and C itself 8, so a resident
         * mirror means C under a sixth of the free memory, and the workspace is capped
         * at a quarter of the device's (ws_budget): under 70 % in all. An eighth would
         * stream the Belcastro_mouse_gene twin's 21 GB mirror (139 GB free on the H200). */
        const size_t rp_bytes = ((size_t)r->c.rows + 1) * 8;
        const size_t bytes = rp_bytes + (size_t)n * 12, slots = rp_bytes + 2 * (size_t)chunk * 12;
        const size_t free_b = sdi_device_free_bytes();
        d->streamed = (bytes > free_b / 4 || sdi_config_get()->streamed_mirror) && n > 0;
        if (d->streamed && slots > free_b / 4)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                           "a mirror of %zu bytes, or %zu streamed, exceeds a quarter of the %zu "
                           "free bytes", bytes, slots, free_b);
    }
    const int64_t held = d->streamed ? 2 * chunk : n; /* device entries of want / tol / col */
    if (n > 0) {
        SD_TRY(sdi_device_malloc(ctx, (void **)&d->want, (size_t)held * 4, "device-check reference"));
        SD_TRY(sdi_device_malloc(ctx, (void **)&d->tol, (size_t)held * 4, "device-check bounds"));
        if (sparse)
            SD_TRY(sdi_device_malloc(ctx, (void **)&d->col, (size_t)held * 4,
                                     "device-check column indices"));
        SD_TRY(mirror_stage_alloc(ctx, d, chunk, sparse, d->streamed || n > chunk));
    }
    if (!d->streamed) {
        for (int64_t e0 = 0, i = 0; e0 < n; e0 += chunk, i++)
            SD_TRY(mirror_chunk_upload(ctx, r, d, e0, n - e0 < chunk ? n : e0 + chunk,
                                       (int)(i & 1), chunk, e0));
        if (n > 0)
            SD_TRY(sdi_stream_sync(ctx, "the device-check upload", NULL));
        mirror_stage_release(d);
    }
    if (sparse)
        SD_TRY(sdi_device_upload(ctx, (void **)&d->rowptr, r->c.rowptr,
                                 ((size_t)r->c.rows + 1) * sizeof *r->c.rowptr,
                                 "device-check row pointers"));
    SD_TRY(sdi_device_malloc(ctx, (void **)&d->result, 2 * sizeof *d->result, "device-check result"));
    sdi_jit_request req;
    memset(&req, 0, sizeof req);
    req.template_name = "sd_validate.cuh";
    req.kernel_name = sparse ? "sd_validate_spgemm" : "sd_validate_dense";
    return sdi_module_build(ctx, &req, req.kernel_name, &d->mod);
}
#undef SD_FREE_ALL

/* The mirror of r, built on first use (d->lock held): *ready when it can check in ctx.
 * No mirror (out of device memory, ...) is not an error: the host path needs none. */
static sd_status mirror_ensure(sd_context *ctx, const sdi_reference *r, struct sdi_ref_device *d,
                               bool *ready)
{
    sd_status s = SD_OK;
    if (d->state == 0) {
        const double t0 = sdi_now();
        s = ref_device_build(ctx, r, d);
        if (s == SD_OK) {
            d->state = 1;
            d->ctx = ctx;
            sdi_log(1, "validation: device mirror of the reference built in %.1f ms%s",
                    (sdi_now() - t0) * 1e3,
                    d->streamed ? " (streamed: its entries are computed chunk by chunk at each check)"
                                : "");
        } else {
            sdi_log(1, "validation: no device mirror of the reference (%s); checking on the host",
                    sd_last_error());
            mirror_release(d);
            d->state = -1;
            /* Only a broken CUDA context stops the check; the host path covers the rest. */
            s = ctx->broken ? s : SD_OK;
            sdi_error_clear();
        }
    }
    *ready = s == SD_OK && d->state == 1 && d->ctx == ctx;
    return s;
}

/* Launches the mirror's kernel on args over `work` items (the result words accumulate). */
static sd_status mirror_launch(sd_context *ctx, struct sdi_ref_device *d, void *args, long long work)
{
    long long blocks = (work + SD_VALIDATE_THREADS - 1) / SD_VALIDATE_THREADS;
    const long long cap = 8LL * (ctx->props.sm_count > 0 ? ctx->props.sm_count : 132);
    if (blocks > cap)
        blocks = cap;
    if (blocks < 1)
        blocks = 1;
    void *params[1] = {args};
    dim3 g = {(unsigned)blocks, 1, 1}, b = {SD_VALIDATE_THREADS, 1, 1};
    return sdi_cuda_status(ctx,
                           cudaLaunchKernel((const void *)d->mod.functions[0].kernel, g, b, params, 0,
                                            ctx->stream),
                           "launching", d->mod.functions[0].name);
}

static sd_status mirror_clear(sd_context *ctx, struct sdi_ref_device *d)
{
    return sdi_cuda_status(ctx, cudaMemsetAsync(d->result, 0, 2 * sizeof *d->result, ctx->stream),
                           "clearing the device-check result", NULL);
}

/* Reads the result words back: *passed = true (val filled, n_checked entries) when
 * nothing was flagged. */
static sd_status mirror_finish(sd_context *ctx, struct sdi_ref_device *d, int64_t n_checked,
                               sdi_validation *val, bool *passed)
{
    unsigned long long res[2] = {0, 0};
    sd_status s = sdi_copy_to_host(ctx, res, d->result, sizeof res, "the device-check result");
    if (s == SD_OK && res[0] == 0) {
        unsigned bits = (unsigned)res[1];
        float worst;
        memcpy(&worst, &bits, sizeof worst);
        memset(val, 0, sizeof *val);
        val->ok = true;
        val->n_checked = n_checked;
        val->row = val->col = -1;
        val->ratio = worst; /* against the conservative bound: ≥ the exact ratio */
        val->device = true;
        *passed = true;
    }
    return s;
}

static sd_status mirror_run(sd_context *ctx, struct sdi_ref_device *d, void *args, long long work,
                            int64_t n_checked, sdi_validation *val, bool *passed)
{
    sd_status s = mirror_clear(ctx, d);
    if (s == SD_OK)
        s = mirror_launch(ctx, d, args, work);
    if (s == SD_OK)
        s = mirror_finish(ctx, d, n_checked, val, passed);
    return s;
}

/* The streamed check (d->streamed): chunk by chunk, the mirror's entries computed on the
 * host into a slot, uploaded, and checked against the same entries of the output; the
 * first launch also compares the row pointers. The next chunk is computed while the
 * device uploads and checks this one. */
static sd_status mirror_check_streamed(sd_context *ctx, const sdi_reference *r,
                                       struct sdi_ref_device *d, const sd_validate_sparse_args *whole,
                                       sdi_validation *val, bool *passed)
{
    const int64_t n = whole->nnz, chunk = SDI_MIRROR_CHUNK;
    sd_status s = mirror_clear(ctx, d);
    for (int64_t e0 = 0, i = 0; s == SD_OK && e0 < n; e0 += chunk, i++) {
        const int q = (int)(i & 1);
        const int64_t e1 = n - e0 < chunk ? n : e0 + chunk;
        s = mirror_chunk_upload(ctx, r, d, e0, e1, q, chunk, (int64_t)q * chunk);
        if (s != SD_OK)
            break;
        sd_validate_sparse_args a = *whole;
        a.got_col = whole->got_col + e0;
        a.got_val = whole->got_val + e0;
        a.want_col = d->col + (size_t)q * (size_t)chunk;
        a.want = d->want + (size_t)q * (size_t)chunk;
        a.tol = d->tol + (size_t)q * (size_t)chunk;
        a.nnz = e1 - e0;
        a.rows = i == 0 ? whole->rows : -1; /* the row pointers once */
        const long long work = i == 0 && whole->rows + 1 > a.nnz ? whole->rows + 1 : a.nnz;
        s = mirror_launch(ctx, d, &a, work);
        /* The slot is free again once its check has run. */
        if (s == SD_OK)
            s = sdi_cuda_status(ctx, cudaEventRecord(d->ev[q], ctx->stream), "recording an event for",
                                "the device check");
    }
    if (s == SD_OK)
        s = mirror_finish(ctx, d, n, val, passed);
    return s;
}

/* The device check of a dense output: *passed = true when every entry passed (val
 * filled), false when the host must judge. */
static sd_status device_check(sd_context *ctx, const sdi_reference *r, const float *d_out,
                              sdi_validation *val, bool *passed)
{
    struct sdi_ref_device *d = r->dev;
    bool ready = false;
    *passed = false;
    pthread_mutex_lock(&d->lock);
    sd_status s = mirror_ensure(ctx, r, d, &ready);
    if (s == SD_OK && ready) {
        const size_t n = (size_t)r->rows * (size_t)r->k;
        sd_validate_args a = {d_out, d->want, d->tol, (long long)n, d->result};
        s = mirror_run(ctx, d, &a, (long long)n, (int64_t)n, val, passed);
    }
    pthread_mutex_unlock(&d->lock);
    return s;
}

sd_status sdi_check_dense_output(sd_context *ctx, const sdi_reference *r, const float *d_out,
                                 sdi_validation *val)
{
    sdi_validation local;
    if (val == NULL)
        val = &local;
    memset(val, 0, sizeof *val);
    if (r == NULL || d_out == NULL || (r->op != SD_OP_SPMV && r->op != SD_OP_SPMM))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_check_dense_output: bad arguments");
    size_t n = (size_t)r->rows * (size_t)r->k;
    if (r->dev != NULL && n >= SDI_DEVICE_CHECK_MIN && !sdi_config_get()->host_validation) {
        bool passed = false;
        sd_status s = device_check(ctx, r, d_out, val, &passed);
        if (s != SD_OK || passed)
            return s;
        memset(val, 0, sizeof *val); /* flagged: the host gives the verdict */
    }
    float *got = sdi_malloc_array(n, sizeof *got);
    if (got == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the device output "
                       "(%zu floats)", n);
    sd_status s = sdi_copy_to_host(ctx, got, d_out, n * sizeof *got, "the device output");
    if (s == SD_OK) {
        if (r->exact)
            s = sdi_validate_dense_exact(got, r->want, r->rows, r->k, val);
        else
            s = sdi_validate_dense(got, r->want, r->count, r->absum, r->rows, r->k, val);
    }
    sdi_free(got);
    return s;
}

sd_status sdi_check_spgemm_output(sd_context *ctx, const sdi_reference *r, int32_t rows,
                                  int32_t cols, int64_t nnz, const void *d_rowptr,
                                  int rowptr_bytes, const int32_t *d_colind,
                                  const float *d_vals, sdi_validation *val)
{
    sdi_validation local;
    if (val == NULL)
        val = &local;
    memset(val, 0, sizeof *val);
    if (r == NULL || r->op != SD_OP_SPGEMM || d_rowptr == NULL || rows < 0 || nnz < 0 ||
        (rowptr_bytes != 4 && rowptr_bytes != 8) ||
        (nnz > 0 && (d_colind == NULL || d_vals == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_check_spgemm_output: bad arguments");
    /* Large outputs of the reference's shape: on the device first (structure and values
     * against the mirror); what it flags, and everything else, on the host. */
    if (r->dev != NULL && nnz >= SDI_DEVICE_CHECK_MIN && nnz == r->c.nnz && rows == r->c.rows &&
        cols == r->c.cols && !sdi_config_get()->host_validation) {
        struct sdi_ref_device *d = r->dev;
        bool ready = false, passed = false;
        pthread_mutex_lock(&d->lock);
        sd_status s = mirror_ensure(ctx, r, d, &ready);
        if (s == SD_OK && ready) {
            sd_validate_sparse_args a = {d_rowptr, d_colind, d_vals, d->rowptr, d->col, d->want, d->tol,
                                         (long long)rows, (long long)nnz, rowptr_bytes == 8, d->result};
            const long long work = nnz > (int64_t)rows + 1 ? (long long)nnz : (long long)rows + 1;
            s = d->streamed ? mirror_check_streamed(ctx, r, d, &a, val, &passed)
                            : mirror_run(ctx, d, &a, work, nnz, val, &passed);
        }
        pthread_mutex_unlock(&d->lock);
        if (s != SD_OK || passed)
            return s;
        memset(val, 0, sizeof *val); /* flagged: the host gives the verdict */
    }
    sd_csr got;
    memset(&got, 0, sizeof got);
    int32_t *rp32 = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sd_csr_free(&got);                                                                 \
        sdi_free(rp32);                                                                    \
    } while (0)
    SD_TRY(sdi_csr_alloc(&got, rows, cols, nnz));
    if (rowptr_bytes == 8) {
        SD_TRY(sdi_copy_to_host(ctx, got.rowptr, d_rowptr, ((size_t)rows + 1) * 8,
                                "the output row pointers"));
    } else {
        rp32 = sdi_malloc_array((size_t)rows + 1, sizeof *rp32);
        SD_CHECK_ALLOC(rp32, "output row pointers");
        SD_TRY(sdi_copy_to_host(ctx, rp32, d_rowptr, ((size_t)rows + 1) * 4,
                                "the output row pointers"));
        for (int64_t i = 0; i <= rows; i++)
            got.rowptr[i] = rp32[i];
    }
    SD_TRY(sdi_copy_to_host(ctx, got.colind, d_colind, (size_t)nnz * sizeof(int32_t),
                            "the output column indices"));
    SD_TRY(sdi_copy_to_host(ctx, got.vals, d_vals, (size_t)nnz * sizeof(float),
                            "the output values"));
    /* The rule needs a consistent structure before it can compare anything. */
    if (got.rowptr[0] != 0 || got.rowptr[rows] != nnz) {
        int64_t first = got.rowptr[0], last = got.rowptr[rows];
        SD_FREE_ALL;
        val->ok = false;
        snprintf(val->reason, sizeof val->reason,
                 "row pointers run from %lld to %lld, expected 0 to nnz = %lld",
                 (long long)first, (long long)last, (long long)nnz);
        return SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
    }
    for (int32_t i = 0; i < rows; i++)
        if (got.rowptr[i + 1] < got.rowptr[i]) {
            SD_FREE_ALL;
            val->ok = false;
            snprintf(val->reason, sizeof val->reason, "row pointers decrease at row %d", i);
            return SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
        }
    for (int64_t e = 0; e < nnz; e++)
        if (got.colind[e] < 0 || got.colind[e] >= cols) {
            SD_FREE_ALL;
            val->ok = false;
            snprintf(val->reason, sizeof val->reason,
                     "column index %d of entry %lld is outside [0, %d)", got.colind[e],
                     (long long)e, cols);
            return SDI_ERR(SD_ERR_VALIDATION, "SpGEMM output: %s", val->reason);
        }
    sd_status s = sdi_validate_spgemm(&got, &r->c, val);
    SD_FREE_ALL;
    return s;
#undef SD_FREE_ALL
}
