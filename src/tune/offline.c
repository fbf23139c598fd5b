/* src/tune/offline.c: the planner without a GPU (`sparseditto plan` / `compile` offline):
 * the search's analysis and ranking, the first round's plans of the first `branches`
 * families, each lowered through its family (with its bounds) and, when asked, compiled
 * with NVRTC for the target's architecture — everything up to measurement. */
#include <stdio.h>
#include <string.h>

#include "../lower/spgemm_units.h"
#include "search.h"


static void result_init(sdi_tune_result *out, sd_op op, int k, int compile)
{
    memset(out, 0, sizeof *out);
    out->ours_trial = -1;
    out->vendor_best = -1;
    out->op = op;
    out->k = op == SD_OP_SPMM ? k : 1;
    out->offline_compiled = compile != 0;
}

static sdi_trial *new_trial(sdi_tune_result *out, const sdi_search *s, const sdi_plan *p)
{
    sdi_trial *tr = &out->trials[out->ntrials++];
    memset(tr, 0, sizeof *tr);
    tr->round = 1;
    sdi_candidate c;
    sdi_search_candidate(s, p, &c);
    sdi_candidate_family(&c, tr->family, sizeof tr->family);
    sdi_candidate_describe(&c, tr->config, sizeof tr->config);
    return tr;
}

/* One plan's entry: its lowering (SpGEMM: the schedule, whose launches carry their
 * residency, as `sparseditto plan` prints it) and its bounds. */
static void plan_json(sdi_json *plans, const sdi_trial *tr, const sdi_lowered *low,
                      const sdi_plan_bounds *b)
{
    sdi_json_begin_object(plans);
    sdi_json_key(plans, "family");
    sdi_json_string(plans, tr->family);
    sdi_json_key(plans, "config");
    sdi_json_string(plans, tr->config);
    sdi_json_key(plans, "lowering");
    if (low->op == SD_OP_SPGEMM)
        sdi_sg_schedule_json(&low->sg, plans);
    else
        sdi_lowered_json(low, plans);
    sdi_json_key(plans, "bounds");
    sdi_plan_bounds_json(b, plans);
    sdi_json_end_object(plans);
}

/* A trial's end: stopped before measurement (SD_ERR_NO_DEVICE) or refused / failed. */
static void settle(sdi_tune_result *out, sdi_trial *tr, sd_status s)
{
    out->cubins_compiled += tr->cubins_compiled;
    out->cubins_cached += tr->cubins_cached;
    tr->status = s == SD_OK ? SD_ERR_NO_DEVICE : s;
    if (s != SD_OK) {
        snprintf(tr->detail, sizeof tr->detail, "%.190s", sd_last_error());
        out->n_refused += s == SD_ERR_UNSUPPORTED;
        out->n_failed += s != SD_ERR_UNSUPPORTED;
    }
}

/* ------------------------------------------------------------------ SpMV / SpMM */

static sd_status dense_one(sdi_search *s, const sdi_plan *p, const char *arch, int compile,
                           sdi_trial *tr, sdi_json *plans)
{
    sdi_lowered low;
    memset(&low, 0, sizeof low);
    sd_status st = sdi_plan_lower(&s->task, p, &low);
    if (st == SD_OK && plans != NULL) {
        sdi_plan_bounds b;
        sdi_plan_bounds_compute(low.bytes_value, low.bytes_meta, low.bytes_work, s->op, s->k,
                                s->a->rows, s->a->cols, s->a->nnz, s->task.gpu, &b);
        plan_json(plans, tr, &low, &b);
    }
    if (st == SD_OK && compile && low.nlaunches > 0) {
        sdi_macro macros[SDI_LOW_MAX_MACROS];
        sdi_jit_request req;
        sdi_cubin cub;
        st = sdi_lowered_jit_request(&low, arch, macros, &req);
        if (st == SD_OK)
            st = sdi_jit_compile(&req, &cub);
        if (st == SD_OK) {
            tr->compile_ms = cub.compile_ms;
            tr->cubins_cached = cub.from_cache;
            tr->cubins_compiled = !cub.from_cache;
            sdi_cubin_free(&cub);
        }
    }
    sdi_lowered_free(&low);
    return st;
}

sd_status sdi_tune_offline(const sd_csr *a, sd_op op, int k, const sdi_gpu_props *gpu, int branches,
                           int compile, sdi_tune_result *out, sdi_json *plans)
{
    sdi_search *s = NULL;
#define SD_FREE_ALL sdi_free(s)
    result_init(out, op, k, compile);
    if (op == SD_OP_SPGEMM)
        return sdi_tune_spgemm_offline(a, NULL, -1, gpu, branches, compile, out, plans);
    if (op != SD_OP_SPMV && op != SD_OP_SPMM)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "plan: unknown operator %d", (int)op);
    double t_start = sdi_now();
    s = sdi_calloc(1, sizeof *s);
    SD_CHECK_ALLOC(s, "the planner");
    /* The search's hooks read the GPU from a context; a stack context carries the
     * profile (nothing in the offline path touches a device). */
    sd_context fake;
    memset(&fake, 0, sizeof fake);
    fake.props = *gpu;
    s->ctx = &fake;
    s->a = a;
    s->op = op;
    s->k = out->k;
    s->r = out;
    s->ops_of = &sdi_search_op_dense;
    s->task.op = op;
    s->task.k = out->k;
    s->task.a = a;
    s->task.gpu = &fake.props;
    s->task.features = &out->features;
    double t0 = sdi_now();
    SD_TRY(sdi_analyze(a, op, &out->features));
    SD_TRY(s->ops_of->stats(s));
    out->ms_analysis = (sdi_now() - t0) * 1e3;
    t0 = sdi_now();
    SD_TRY(sdi_rank(&out->features, op, k, &out->ranking));
    out->ms_rank = (sdi_now() - t0) * 1e3;
    int fams[SDI_SEARCH_MAX_FAMILIES];
    const int nf = sdi_search_ranked(&s->task, &out->ranking, true, fams, SDI_SEARCH_MAX_FAMILIES);
    if (branches <= 0)
        branches = 3;
    char arch[SDI_GPU_ARCH_TEXT];
    sdi_gpu_arch(gpu, arch);
    if (plans != NULL)
        sdi_json_begin_array(plans);
    for (int b = 0; b < nf && b < branches && out->ntrials < SDI_TUNE_MAX_TRIALS; b++) {
        sdi_plan_list v;
        SD_TRY(sdi_search_plans(s, fams[b], 0, &v));
        for (int i = 0; i < v.n && out->ntrials < SDI_TUNE_MAX_TRIALS; i++) {
            sdi_trial *tr = new_trial(out, s, &v.v[i]);
            double tl = sdi_now();
            sd_status st = dense_one(s, &v.v[i], arch, compile, tr, plans);
            out->ms_synthesis += (sdi_now() - tl) * 1e3 - tr->compile_ms;
            out->ms_compile += tr->compile_ms;
            settle(out, tr, st);
            if (st == SD_OK)
                snprintf(tr->detail, sizeof tr->detail, "lowered%s; not measured (no GPU)",
                         compile ? " and compiled" : "");
            sdi_error_clear();
        }
        sdi_plan_list_free(&v);
    }
    if (plans != NULL)
        sdi_json_end_array(plans);
    out->ms_total = (sdi_now() - t_start) * 1e3;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ SpGEMM */

/* The sources the offline path compiled so far: a search compiles a unit once (the memo),
 * whichever plans share it, and so does the offline path. */
typedef struct {
    char **src;
    int n, cap;
} offline_units;

static void offline_units_free(offline_units *d)
{
    for (int i = 0; i < d->n; i++)
        sdi_free(d->src[i]);
    sdi_free(d->src);
    memset(d, 0, sizeof *d);
}

static sd_status offline_compile_one(const sdi_jit_request *req, offline_units *done, double *ms,
                                     int *fresh, int *cached)
{
    const char *text = req->source != NULL ? req->source : req->template_name;
    for (int i = 0; i < done->n; i++)
        if (strcmp(done->src[i], text) == 0)
            return SD_OK;
    if (done->n == done->cap) {
        int cap = done->cap > 0 ? 2 * done->cap : 16;
        char **ns = sdi_realloc_array(done->src, (size_t)cap, sizeof *ns);
        if (ns == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the unit list");
        done->src = ns;
        done->cap = cap;
    }
    const size_t len = strlen(text) + 1;
    char *copy = sdi_malloc(len);
    if (copy == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the unit list");
    memcpy(copy, text, len);
    sdi_cubin cub;
    sd_status s = sdi_jit_compile(req, &cub);
    if (s != SD_OK) {
        sdi_free(copy);
        return s;
    }
    *ms += cub.compile_ms;
    *cached += cub.from_cache;
    sdi_cubin_free(&cub);
    done->src[done->n++] = copy;
    (*fresh)++;
    return SD_OK;
}

/* NVRTC for the units of low not compiled yet (and the scan, the first time), as the
 * executable's creation would compile them: *ms sums their compile times, *fresh counts
 * the units new to this run (the scan aside), *cubins and *cached the cubins NVRTC
 * compiled and those read from the JIT cache (the scan included). */
static sd_status offline_compile(const sdi_sg_lowered *low, const char *arch, offline_units *done,
                                 double *ms, int *fresh, int *cubins, int *cached)
{
    sdi_jit_request req;
    sdi_spgemm_scan_request(&req);
    req.arch = arch;
    int scan_fresh = 0, unit_fresh = 0;
    *cached = 0;
    sd_status s = offline_compile_one(&req, done, ms, &scan_fresh, cached);
    for (int u = 0; s == SD_OK && u < low->nunits; u++) {
        sdi_spgemm_unit_request(low, u, &req);
        req.arch = arch;
        s = offline_compile_one(&req, done, ms, &unit_fresh, cached);
    }
    *fresh += unit_fresh;
    *cubins = scan_fresh + unit_fresh - *cached;
    return s;
}

static sd_status spgemm_one(const sdi_search *s, const sdi_plan *p, const char *arch, int compile,
                            offline_units *done, sdi_trial *tr, sdi_json *plans)
{
    sdi_lowered low;
    memset(&low, 0, sizeof low);
    sd_status st = sdi_plan_lower(&s->task, p, &low);
    if (st == SD_OK && plans != NULL) {
        const sd_csr *a = s->a, *bb = s->bb;
        int64_t value = a->nnz * 4 + (s->b != NULL ? s->b->nnz * 4 : 0);
        int64_t meta = ((int64_t)a->rows + 1) * 8 + a->nnz * 4 +
                       (bb != a ? ((int64_t)bb->rows + 1) * 8 + bb->nnz * 4 : 0);
        sdi_plan_bounds pb;
        sdi_plan_bounds_compute(value, meta, low.sg.ws_bytes, SD_OP_SPGEMM, 1, a->rows, a->cols,
                                a->nnz, s->task.gpu, &pb);
        plan_json(plans, tr, &low, &pb);
    }
    double compile_ms = 0;
    int fresh = 0;
    if (st == SD_OK && compile)
        st = offline_compile(&low.sg_units, arch, done, &compile_ms, &fresh, &tr->cubins_compiled,
                             &tr->cubins_cached);
    const int nlaunch = low.sg_units.nkernels, nunits = low.sg_units.nunits;
    sdi_lowered_free(&low);
    tr->compile_ms = compile_ms;
    if (st == SD_OK) {
        if (compile)
            snprintf(tr->detail, sizeof tr->detail,
                     "lowered and compiled: %d launches in %d units, %d new to this plan "
                     "(the others shared with earlier plans); not measured (no GPU)",
                     nlaunch, nunits, fresh);
        else
            snprintf(tr->detail, sizeof tr->detail,
                     "lowered: %d launches in %d units; not measured (no GPU)", nlaunch, nunits);
    }
    return st;
}

sd_status sdi_tune_spgemm_offline(const sd_csr *a, const sd_csr *b, int aat,
                                  const sdi_gpu_props *gpu, int branches, int compile,
                                  sdi_tune_result *out, sdi_json *plans)
{
    sdi_search *s = NULL;
    sdi_sg_rowinfo ri;
    memset(&ri, 0, sizeof ri);
    offline_units done = {0};
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        if (s != NULL)                                                                     \
            sd_csr_free(&s->at);                                                           \
        sdi_free(s);                                                                       \
        sdi_sg_rowinfo_host_free(&ri);                                                     \
        offline_units_free(&done);                                                         \
    } while (0)
    result_init(out, SD_OP_SPGEMM, 1, compile);
    double t_start = sdi_now();
    s = sdi_calloc(1, sizeof *s);
    SD_CHECK_ALLOC(s, "the planner");
    sd_context fake;
    memset(&fake, 0, sizeof fake);
    fake.props = *gpu;
    s->ctx = &fake;
    s->a = a;
    s->b = b;
    s->aat = aat;
    s->op = SD_OP_SPGEMM;
    s->k = 1;
    s->r = out;
    s->ops_of = &sdi_search_op_spgemm;
    SD_TRY(sdi_spgemm_second_operand(a, b, &s->aat, &s->at, &s->bb));
    out->aat = s->aat;
    out->general_b = b != NULL;
    SD_TRY(sdi_spgemm_output_check(a, s->bb, sdi_search_product_name(b, s->aat), gpu));
    double t0 = sdi_now();
    SD_TRY(sdi_analyze(a, SD_OP_SPGEMM, &out->features));
    SD_TRY(sdi_sg_rowinfo_host(a, s->bb, &ri));
    sdi_sg_summarize(&ri, &s->sm);
    sdi_sg_limits_from_props(gpu, &s->lim);
    s->task.op = SD_OP_SPGEMM;
    s->task.k = 1;
    s->task.a = a;
    s->task.gpu = &fake.props;
    s->task.features = &out->features;
    s->task.sg_rows = &ri;
    s->task.sg = &s->sm;
    s->task.sg_lim = &s->lim;
    out->products = s->sm.u_total;
    out->nnz_c = -1; /* not computed without a reference */
    out->ms_analysis = (sdi_now() - t0) * 1e3;
    t0 = sdi_now();
    SD_TRY(sdi_rank(&out->features, SD_OP_SPGEMM, 1, &out->ranking));
    out->ms_rank = (sdi_now() - t0) * 1e3;
    int fams[SDI_SEARCH_MAX_FAMILIES];
    const int nf = sdi_search_ranked(&s->task, &out->ranking, false, fams, SDI_SEARCH_MAX_FAMILIES);
    if (branches <= 0)
        branches = 3;
    /* The candidates compiled as the search's first round would compile them. */
    SD_TRY(sdi_spgemm_search_fast_level(&s->sm, &s->search_fast));
    char arch[SDI_GPU_ARCH_TEXT];
    sdi_gpu_arch(gpu, arch);
    if (plans != NULL)
        sdi_json_begin_array(plans);
    for (int bi = 0; bi < nf && bi < branches && out->ntrials < SDI_TUNE_MAX_TRIALS; bi++) {
        sdi_plan p;
        sd_status st = sdi_plan_default(&s->task, fams[bi], &p);
        if (st != SD_OK) { /* recorded as refused, as the search would meet it */
            memset(&p, 0, sizeof p);
            p.op = SD_OP_SPGEMM;
            p.k = 1;
            p.family = fams[bi];
            p.p.spgemm.family = sdi_family_at(fams[bi])->id;
        }
        p.p.spgemm.fast_compile = s->search_fast;
        sdi_trial *tr = new_trial(out, s, &p);
        double tl = sdi_now();
        if (st == SD_OK)
            st = spgemm_one(s, &p, arch, compile, &done, tr, plans);
        out->ms_synthesis += (sdi_now() - tl) * 1e3 - tr->compile_ms;
        out->ms_compile += tr->compile_ms;
        settle(out, tr, st);
        sdi_error_clear();
    }
    if (plans != NULL)
        sdi_json_end_array(plans);
    out->ms_total = (sdi_now() - t_start) * 1e3;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}
