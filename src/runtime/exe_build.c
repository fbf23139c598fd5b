/* src/runtime/exe_build.c: making an executable (runtime/executable.h): a lowered SpMV /
 * SpMM program compiled through the memo and the JIT cache, loaded and uploaded; a SpGEMM
 * schedule over its device operands; a cuSPARSE variant; an agent kernel. */
#include <string.h>
#include <unistd.h>

#include "device_memory.h"
#include "executable.h"
#include "memo.h"

static void exe_init(sdi_executable *out, int kind, int op, int k, int rows, int cols)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->op = op;
    out->k = k;
    out->rows = rows;
    out->cols = cols;
    out->in_buf = out->out_buf = -1;
}

const char *sdi_exe_arch(const sd_context *ctx, int op)
{
    return op == SD_OP_SPMV && ctx->arch[0] ? ctx->arch : NULL;
}

/* Compiles (memoised) and loads the program's kernels. */
static sd_status load_kernels(sd_context *ctx, sdi_executable *e)
{
#define SD_FREE_ALL /* the caller frees what was built */
    const sdi_lowered *l = &e->low;
    sdi_macro macros[SDI_LOW_MAX_MACROS];
    sdi_jit_request req;
    SD_TRY(sdi_lowered_jit_request(l, sdi_exe_arch(ctx, l->op), macros, &req));
    const sdi_cubin *cub = NULL;
    bool hit = false;
    SD_TRY(sdi_jit_get(ctx, &req, &cub, &hit));
    e->cubin_hit = hit;
    e->compile_ms = hit ? 0.0 : cub->compile_ms;
    const char *names[SDI_LOW_MAX_KERNELS];
    for (int i = 0; i < l->nkernels; i++)
        names[i] = l->kname[i];
    SD_TRY(sdi_module_load(ctx, cub->cubin, cub->size, names, l->nkernels, &e->mod));
    for (int i = 0; i < l->nkernels; i++) {
        const sdi_function *fn = sdi_module_function(&e->mod, l->kname[i]);
        if (fn == NULL)
            return SDI_ERR(SD_ERR_INTERNAL, "executable: kernel '%s' missing after load", l->kname[i]);
        e->num_regs[i] = fn->num_regs;
        e->local_bytes[i] = fn->local_bytes;
    }
    return SD_OK;
#undef SD_FREE_ALL
}

/* One launch of the lowering into the program: shared memory reserved, legality checked,
 * a grid-stride grid clamped to the CTAs that stay resident, arguments bound. */
static sd_status add_launch(sd_context *ctx, sdi_executable *e, const sdi_low_launch *x)
{
#define SD_FREE_ALL /* the caller frees what was built */
    const sdi_lowered *l = &e->low;
    if (x->kernel < 0 || x->kernel >= l->nkernels || x->nargs < 0 || x->nargs > SDI_LOW_MAX_ARGS)
        return SDI_ERR(SD_ERR_INTERNAL, "executable: a launch of kernel %d with %d arguments",
                       x->kernel, x->nargs);
    sdi_function *fn = sdi_module_function(&e->mod, l->kname[x->kernel]);
    if (fn == NULL)
        return SDI_ERR(SD_ERR_INTERNAL, "executable: kernel %s not loaded", l->kname[x->kernel]);
    unsigned grid[3] = {x->grid[0], x->grid[1], x->grid[2]};
    const int threads = (int)(x->block[0] * x->block[1] * x->block[2]);
    if (x->dyn_smem > 0)
        SD_TRY(sdi_function_reserve_smem(ctx, fn, (int)x->dyn_smem));
    SD_TRY(sdi_function_check_legal(ctx, fn, threads, x->dyn_smem));
    if (x->grid_stride) { /* no more CTAs than stay resident (registers count here) */
        int per_sm = 0;
        SD_TRY(sdi_function_resident_ctas(ctx, fn, threads, x->dyn_smem, &per_sm));
        const long long resident = (long long)per_sm * ctx->props.sm_count;
        if (resident >= 1 && resident < (long long)grid[0])
            grid[0] = (unsigned)resident;
    }
    sdi_arg args[SDI_LOW_MAX_ARGS];
    for (int q = 0; q < x->nargs; q++) {
        const sdi_low_arg *g = &x->args[q];
        memset(&args[q], 0, sizeof args[q]);
        switch (g->kind) {
        case SDI_LOW_ARG_ARRAY:
            if (g->index < 0 || g->index >= l->narrays)
                return SDI_ERR(SD_ERR_INTERNAL, "executable: %s argument %d: no array %d",
                               l->kname[x->kernel], q, g->index);
            args[q] = sdi_arg_buffer(g->index); /* buffer i is array i */
            break;
        case SDI_LOW_ARG_IN: args[q] = sdi_arg_buffer(e->in_buf); break;
        case SDI_LOW_ARG_OUT: args[q] = sdi_arg_buffer(e->out_buf); break;
        case SDI_LOW_ARG_I32: args[q] = sdi_arg_i32((int32_t)g->value); break;
        case SDI_LOW_ARG_I64: args[q] = sdi_arg_i64(g->value); break;
        default:
            args[q].kind = SDI_ARG_PTR;
            args[q].buffer = -1;
            args[q].v.ptr = NULL;
            break;
        }
    }
    return sdi_program_add_launch(&e->prog, fn, grid, x->block, x->dyn_smem, args, x->nargs);
#undef SD_FREE_ALL
}

sd_status sdi_exe_create_program(sd_context *ctx, sdi_lowered *low, bool use_graph,
                                 sdi_executable *out)
{
    if (out == NULL || low == NULL) {
        sdi_lowered_free(low);
        return SDI_ERR(SD_ERR_INVALID_ARG, "executable: out or lowering is NULL");
    }
    exe_init(out, SDI_EXE_PROGRAM, low->op, low->k > 0 ? low->k : 1, low->rows, low->cols);
    out->low = *low; /* moved in */
    memset(low, 0, sizeof *low);
#define SD_FREE_ALL sdi_exe_free(out)
    if (ctx == NULL || (out->op != SD_OP_SPMV && out->op != SD_OP_SPMM)) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_INVALID_ARG, "executable: no context, or not a SpMV / SpMM program");
    }
    const double t0 = sdi_now();
    sdi_program_init(&out->prog);
    const sdi_lowered *l = &out->low;
    if (l->nlaunches > 0)
        SD_TRY(load_kernels(ctx, out));
    /* The arrays, in order (buffer i is array i): zero-filled on the device, host
     * contents copied over. */
    for (int i = 0; i < l->narrays; i++) {
        const sdi_low_array *a = &l->arr[i];
        int idx = -1;
        SD_TRY(sdi_program_alloc_buffer(ctx, &out->prog, a->name, a->bytes, &idx));
        if (idx != i) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "executable: array %s is buffer %d, not %d", a->name,
                           idx, i);
        }
        if (a->role != SDI_LOW_WORK && a->host != NULL && a->host_bytes > 0)
            SD_TRY(sdi_copy_to_device(ctx, out->prog.buffers[i].dev, a->host, a->host_bytes,
                                      a->name));
    }
    out->in_bytes = (size_t)l->cols * (size_t)out->k * sizeof(float);
    out->out_bytes = (size_t)l->rows * (size_t)out->k * sizeof(float);
    SD_TRY(sdi_program_bind_buffer(&out->prog, "in", NULL, out->in_bytes, &out->in_buf));
    SD_TRY(sdi_program_bind_buffer(&out->prog, "out", NULL, out->out_bytes, &out->out_buf));
    for (int i = 0; i < l->nlaunches; i++)
        SD_TRY(add_launch(ctx, out, &l->launch[i]));
    /* A graph issues in 1.3 us what a plain launch issues in 3.5 (program.h). */
    out->prog.use_graph = use_graph;
    out->load_ms = (sdi_now() - t0) * 1e3 - out->compile_ms;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_exe_create_spgemm(sd_context *ctx, sdi_spgemm_operands *ops, bool owns_ops,
                                sdi_lowered *low, sdi_executable *out)
{
    if (out == NULL || low == NULL || ops == NULL) {
        sdi_lowered_free(low);
        if (owns_ops)
            sdi_spgemm_operands_destroy(ops);
        return SDI_ERR(SD_ERR_INVALID_ARG, "executable: out, operands or lowering is NULL");
    }
    exe_init(out, SDI_EXE_SPGEMM, SD_OP_SPGEMM, 1, low->sg.m, low->sg.n);
    out->low = *low; /* moved in: the units stay (the kernel cache stores them) */
    memset(low, 0, sizeof *low);
    out->sg_ops = ops;
    out->sg_owns_ops = owns_ops;
#define SD_FREE_ALL sdi_exe_free(out)
    const double t0 = sdi_now();
    /* The schedule moves on into the executor (built once, not twice). */
    SD_TRY(sdi_spgemm_exec_adopt(ctx, ops, &out->low.sg, &out->low.sg_units, &out->sg));
    const sdi_spgemm_exec_info *in = sdi_spgemm_exec_get_info(out->sg);
    out->compile_ms = in->compile_ms;
    out->cubin_hit = in->compile_ms == 0;
    out->load_ms = (sdi_now() - t0) * 1e3 - out->compile_ms;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_exe_create_vendor(sd_context *ctx, const sd_csr *a, int op, int k, const char *name,
                                bool plain, sdi_executable *out)
{
    exe_init(out, SDI_EXE_VENDOR, op, op == SD_OP_SPMM ? k : 1, a ? a->rows : 0, a ? a->cols : 0);
    const double t0 = sdi_now();
    const sdi_vendor_options vo = {.no_graph = plain};
    sd_status s = sdi_vendor_create_ex(ctx, a, (sd_op)op, k, name, &vo, &out->vendor);
    if (s != SD_OK) {
        sdi_exe_free(out);
        return s;
    }
    out->load_ms = (sdi_now() - t0) * 1e3;
    return SD_OK;
}

sd_status sdi_exe_create_vendor_spgemm(sd_context *ctx, const sd_csr *a, const sd_csr *b, int aat,
                                       const char *name, sdi_executable *out)
{
    exe_init(out, SDI_EXE_VENDOR_SPGEMM, SD_OP_SPGEMM, 1, a ? a->rows : 0,
             b ? b->cols : (a ? (aat == 1 ? a->rows : a->cols) : 0));
    const double t0 = sdi_now();
    sd_status s = sdi_vendor_spgemm_create(ctx, a, b, aat, name, &out->vendor_sg);
    if (s != SD_OK) {
        sdi_exe_free(out);
        return s;
    }
    out->load_ms = (sdi_now() - t0) * 1e3;
    return SD_OK;
}

sd_status sdi_exe_create_agent(sd_context *ctx, const char *so_path, bool unlink_after,
                               const sd_csr *a, int op, int k, sdi_executable *out)
{
    (void)ctx;
    exe_init(out, SDI_EXE_AGENT, op, op == SD_OP_SPMM ? k : 1, a ? a->rows : 0, a ? a->cols : 0);
    if (op != SD_OP_SPMV && op != SD_OP_SPMM) {
        memset(out, 0, sizeof *out);
        return SDI_ERR(SD_ERR_UNSUPPORTED, "executable: agent kernels cover SpMV and SpMM");
    }
#define SD_FREE_ALL sdi_exe_free(out)
    const double t0 = sdi_now();
    SD_TRY(sdi_harness_load(so_path, &out->agent));
    /* Mapped: the file is no longer needed (no file outlives a crash later on). */
    if (unlink_after)
        unlink(so_path);
    SD_TRY(sdi_harness_prepare(&out->agent, a, (sd_op)op, k));
    out->load_ms = (sdi_now() - t0) * 1e3;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_lowered_precompile(sd_context *ctx, const sdi_lowered *const *list, int n, int *nfailed,
                                 double *wall_s)
{
    int failed = 0;
    const double t0 = sdi_now();
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : failed)
    for (int i = 0; i < n; i++) {
        sdi_macro macros[SDI_LOW_MAX_MACROS];
        sdi_jit_request req;
        const sdi_cubin *c = NULL;
        if (sdi_lowered_jit_request(list[i], sdi_exe_arch(ctx, list[i]->op), macros, &req) != SD_OK ||
            sdi_jit_get(ctx, &req, &c, NULL) != SD_OK) {
            sdi_log(1, "precompiling %s: %s", list[i]->kname[0], sd_last_error());
            failed++;
        }
    }
    *nfailed = failed;
    *wall_s = sdi_now() - t0;
    return ctx->broken ? SDI_ERR(SD_ERR_CUDA, "%s", ctx->broken_reason) : SD_OK;
}
