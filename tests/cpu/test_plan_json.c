/* tests/cpu/test_plan_json.c: a plan's JSON form reads back to the identical plan, and the
 * plan read back lowers to the identical program (docs/ARCHITECTURE.md "JSON forms of a
 * plan"): for the matrices of tests/data, a few of the shared matrices and some generated
 * ones, for SpMV, SpMM (K = 8, 32, 256) and SpGEMM (A·A), every family's default plan and
 * every plan of its level-1 sweep — the first round's plans and more. Every family of the
 * table must be reached. Also the table itself, and plan JSON the reader must refuse, each
 * refusal naming the member. */
#include <stddef.h>
#include <unistd.h>

#include "analysis/plan_stats.h"
#include "gen/gen.h"
#include "plan/family.h"
#include "plan/spgemm.h"
#include "sdt.h"

static const char *const data_files[] = {"symmetric.mtx", "skew.mtx",      "pattern.mtx",   "integer.mtx",
                                         "dense_row.mtx", "empty_rows.mtx", "one_entry.mtx", "one_by_one.mtx",
                                         "no_entries.mtx", "small.mtx.gz"};
static const char *const shared_files[] = {"bcsstk13", "plsk1919", "Franz6", "cage8", "1138_bus"};
static const char *const generated[] = {"banded:n=2000,bw=5", "stencil2d:n=40", "powerlaw:rows=4000,deg=6",
                                        "bimodal:rows=3000,short=3,long=400,frac=0.02"};
#define COUNT(a) ((int)(sizeof a / sizeof a[0]))
#define SD_FREE_ALL ((void)0) /* SD_TRY below frees nothing */

/* Plans of each table entry that round-tripped and lowered (over every matrix). */
static int g_lowered[64];
static int g_plans[3];

/* ------------------------------------------------------------------ the task */
typedef struct {
    sd_csr a;
    sdi_gpu_props gpu;
    sd_features features;
    sdi_spmv_stats spmv;
    sdi_spmm_stats spmm;
    sdi_sg_rowinfo rows; /* of C = A·A (square A) */
    sdi_sg_summary sg;
    sdi_sg_limits lim;
    sdi_task t;
} fixture;

static void fixture_free(fixture *fx)
{
    sdi_sg_rowinfo_host_free(&fx->rows);
    sd_csr_free(&fx->a);
    memset(fx, 0, sizeof *fx);
}

/* The task of op (K k) on fx's matrix with every statistic a family may read. */
static sd_status fixture_task(fixture *fx, int op, int k)
{
    memset(&fx->t, 0, sizeof fx->t);
    fx->t.op = op;
    fx->t.k = op == SD_OP_SPMM ? k : 1;
    fx->t.a = &fx->a;
    fx->t.gpu = &fx->gpu;
    SD_TRY(sd_analyze(&fx->a, (sd_op)op, &fx->features));
    fx->t.features = &fx->features;
    fx->t.spmv = &fx->spmv;
    fx->t.spmm = &fx->spmm;
    if (op == SD_OP_SPGEMM) {
        fx->t.sg_rows = &fx->rows;
        fx->t.sg = &fx->sg;
        fx->t.sg_lim = &fx->lim;
    }
    return SD_OK;
}

static bool fixture_open(fixture *fx, const char *what, const sd_csr *from)
{
    memset(fx, 0, sizeof *fx);
    fx->a = *from;
    sd_status s = sdi_gpu_profile("H200", &fx->gpu);
    if (s == SD_OK)
        s = sdi_spmv_stats_compute(&fx->a, &fx->spmv);
    if (s == SD_OK)
        sdi_spmm_stats_compute(&fx->a, &fx->spmm);
    if (s == SD_OK && fx->a.rows == fx->a.cols) {
        s = sdi_sg_rowinfo_host(&fx->a, &fx->a, &fx->rows); /* the offline planner's analysis */
        if (s == SD_OK) {
            sdi_sg_summarize(&fx->rows, &fx->sg);
            sdi_sg_limits_from_props(&fx->gpu, &fx->lim);
        }
    }
    SDT_CHECK(s == SD_OK, "%s: statistics: %s", what, sd_last_error());
    if (s != SD_OK)
        fixture_free(fx);
    return s == SD_OK;
}

/* ------------------------------------------------------------------ comparisons */
static char *plan_text(const sdi_plan *p)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_plan_json(p, &j);
    char *text = NULL;
    (void)sdi_json_take(&j, &text); /* NULL on failure; the writer is released either way */
    return text;
}

static char *format_text(const sdi_devfmt *f)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_format_json(f, &j);
    char *text = NULL;
    (void)sdi_json_take(&j, &text); /* NULL on failure; the writer is released either way */
    return text;
}

static char *schedule_text(const sdi_sg_schedule *s)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_sg_schedule_json(s, &j);
    char *text = NULL;
    (void)sdi_json_take(&j, &text); /* NULL on failure; the writer is released either way */
    return text;
}

static bool same_bytes(const void *a, const void *b, size_t n)
{
    if (n == 0)
        return true;
    if (a == NULL || b == NULL)
        return a == b;
    return memcmp(a, b, n) == 0;
}

static bool same_string(const char *a, const char *b)
{
    return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

/* The compile request of a SpMV / SpMM program: template, macros in order, arch, fast. */
static bool same_request(const sdi_lowered *x, const sdi_lowered *y)
{
    sdi_macro mx[SDI_LOW_MAX_MACROS], my[SDI_LOW_MAX_MACROS];
    sdi_jit_request rx, ry;
    memset(&rx, 0, sizeof rx);
    memset(&ry, 0, sizeof ry);
    sd_status sx = sdi_lowered_jit_request(x, NULL, mx, &rx);
    sd_status sy = sdi_lowered_jit_request(y, NULL, my, &ry);
    if (sx != sy)
        return false;
    if (sx != SD_OK)
        return true;
    if (!same_string(rx.template_name, ry.template_name) || !same_string(rx.source, ry.source) ||
        !same_string(rx.arch, ry.arch) || !same_string(rx.kernel_name, ry.kernel_name) || rx.fast != ry.fast ||
        rx.rdc != ry.rdc || rx.maxrreg != ry.maxrreg || rx.link != ry.link || rx.nmacros != ry.nmacros)
        return false;
    for (int i = 0; i < rx.nmacros; i++)
        if (!same_string(rx.macros[i].name, ry.macros[i].name) || !same_string(rx.macros[i].value, ry.macros[i].value))
            return false;
    return true;
}

/* Whether two lowerings are the same program: template, kernels, macros, arrays (names,
 * sizes, roles, host contents, value sources), launches, format, costs; for SpGEMM the
 * schedule and every compile unit's source. Names the first difference in *why. */
static bool same_lowered(const sdi_lowered *x, const sdi_lowered *y, const char **why)
{
#define DIFF(cond, what)                                                                   \
    do {                                                                                   \
        if (cond) {                                                                        \
            *why = what;                                                                   \
            return false;                                                                  \
        }                                                                                  \
    } while (0)
    DIFF(x->op != y->op || x->rows != y->rows || x->cols != y->cols || x->k != y->k || x->nnz != y->nnz, "shape");
    DIFF(strcmp(x->template_name, y->template_name) != 0, "template");
    DIFF(x->nkernels != y->nkernels, "kernel count");
    for (int i = 0; i < x->nkernels && i < SDI_LOW_MAX_KERNELS; i++)
        DIFF(strcmp(x->kname[i], y->kname[i]) != 0, "kernel name");
    DIFF(x->nmacros != y->nmacros, "macro count");
    for (int i = 0; i < x->nmacros && i < SDI_LOW_MAX_MACROS; i++)
        DIFF(strcmp(x->macro_name[i], y->macro_name[i]) != 0 || strcmp(x->macro_value[i], y->macro_value[i]) != 0,
             "macro");
    DIFF(!same_request(x, y), "compile request");
    DIFF(x->narrays != y->narrays, "array count");
    for (int i = 0; i < x->narrays && i < SDI_LOW_MAX_ARRAYS; i++) {
        const sdi_low_array *p = &x->arr[i], *q = &y->arr[i];
        DIFF(strcmp(p->name, q->name) != 0, "array name");
        DIFF(p->bytes != q->bytes || p->host_bytes != q->host_bytes || p->role != q->role, "array size or role");
        DIFF(!same_bytes(p->host, q->host, p->host_bytes), "array host contents");
        DIFF(p->fmt_array != q->fmt_array || p->nslots != q->nslots, "array value source");
        DIFF(!same_bytes(p->src, q->src, (size_t)(p->nslots > 0 ? p->nslots : 0) * sizeof *p->src),
             "array value map");
    }
    DIFF(x->nlaunches != y->nlaunches, "launch count");
    for (int i = 0; i < x->nlaunches && i < SDI_LOW_MAX_LAUNCHES; i++) {
        const sdi_low_launch *p = &x->launch[i], *q = &y->launch[i];
        DIFF(p->kernel != q->kernel || memcmp(p->grid, q->grid, sizeof p->grid) != 0 ||
                 memcmp(p->block, q->block, sizeof p->block) != 0 || p->dyn_smem != q->dyn_smem ||
                 p->grid_stride != q->grid_stride || p->nargs != q->nargs,
             "launch shape");
        for (int k = 0; k < p->nargs && k < SDI_LOW_MAX_ARGS; k++)
            DIFF(p->args[k].kind != q->args[k].kind || p->args[k].index != q->args[k].index ||
                     p->args[k].value != q->args[k].value,
                 "launch argument");
    }
    DIFF(x->has_fmt != y->has_fmt, "format presence");
    if (x->has_fmt) {
        char *fx = format_text(&x->fmt), *fy = format_text(&y->fmt);
        bool same = fx != NULL && fy != NULL && strcmp(fx, fy) == 0 && x->fmt.n_arrays == y->fmt.n_arrays;
        for (int i = 0; same && i < x->fmt.n_arrays; i++) {
            const sdi_fmt_array *p = &x->fmt.arr[i], *q = &y->fmt.arr[i];
            same = p->host_count == q->host_count && p->elem_size == q->elem_size &&
                   same_bytes(p->data, q->data, (size_t)p->host_count * (size_t)p->elem_size);
        }
        sdi_free(fx);
        sdi_free(fy);
        DIFF(!same, "format");
    }
    DIFF(x->bytes_value != y->bytes_value || x->bytes_meta != y->bytes_meta || x->bytes_work != y->bytes_work ||
             x->slots != y->slots || x->smem != y->smem || x->long_rows != y->long_rows || x->chunks != y->chunks,
         "costs");
    /* SpGEMM: the schedule and its units */
    const sdi_sg_schedule *s = &x->sg, *r = &y->sg;
    DIFF(s->m != r->m || s->n != r->n || s->nbinrows != r->nbinrows || s->nempty != r->nempty ||
             s->nbins != r->nbins || s->nlaunches != r->nlaunches || s->ub_total != r->ub_total ||
             s->out_ub != r->out_ub || s->eager_cap != r->eager_cap || s->need_rowlo != r->need_rowlo ||
             s->gwidth != r->gwidth || s->gslots != r->gslots || s->gparts != r->gparts || s->grows != r->grows ||
             s->ntiles != r->ntiles || s->u_total != r->u_total || s->u_max != r->u_max ||
             s->ws_bytes != r->ws_bytes || s->fast != r->fast || s->warp_brow != r->warp_brow ||
             s->bt_gather != r->bt_gather || strcmp(s->config_text, r->config_text) != 0,
         "schedule");
    DIFF(!same_bytes(s->binrows, r->binrows, (size_t)s->nbinrows * sizeof *s->binrows), "schedule rows");
    DIFF(!same_bytes(s->ub, r->ub, s->ub != NULL || r->ub != NULL ? ((size_t)s->m + 1) * sizeof *s->ub : 0),
         "staging offsets");
    if (s->nlaunches > 0 || s->nbins > 0) {
        char *tx = schedule_text(s), *ty = schedule_text(r);
        bool same = tx != NULL && ty != NULL && strcmp(tx, ty) == 0;
        sdi_free(tx);
        sdi_free(ty);
        DIFF(!same, "schedule JSON");
    }
    const sdi_sg_lowered *u = &x->sg_units, *v = &y->sg_units;
    DIFF(u->nkernels != v->nkernels || u->nunits != v->nunits || u->fast != v->fast || strcmp(u->hex, v->hex) != 0,
         "units");
    DIFF(!same_bytes(u->unit_of, v->unit_of, (size_t)u->nkernels * sizeof *u->unit_of), "unit of launch");
    for (int i = 0; i < u->nunits; i++) {
        const sdi_sg_unit *p = &u->units[i], *q = &v->units[i];
        DIFF(strcmp(p->name, q->name) != 0 || !same_string(p->source, q->source) ||
                 !same_string(p->link_source, q->link_source) || p->nparts != q->nparts || p->maxrreg != q->maxrreg,
             "unit source");
        for (int k = 0; k < p->nparts && k < SD_SG_MAX_SEGS; k++)
            DIFF(!same_string(p->parts[k], q->parts[k]), "unit part");
    }
    return true;
#undef DIFF
}

/* ------------------------------------------------------------------ one plan */
/* p → JSON → plan: identical (sdi_plan_equal and byte for byte), the same JSON again, and
 * the plan read back lowers to the program p lowers to. */
static void check_plan(const sdi_task *t, const sdi_plan *p, const char *what)
{
    char label[SDI_PLAN_TEXT], line[SDI_PLAN_TEXT];
    sdi_plan_label(p, label, sizeof label);
    sdi_plan_describe(p, line, sizeof line);
    const sdi_family *f = sdi_plan_family(p);
    SDT_CHECK(f != NULL && f->op == t->op, "%s: plan of family %d", what, (int)p->family);
    if (f == NULL)
        return;
    g_plans[t->op]++;
    char want[SDI_PLAN_TEXT];
    snprintf(want, sizeof want, "%s.%s", t->op == SD_OP_SPMV ? "spmv" : t->op == SD_OP_SPMM ? "spmm" : "spgemm",
             f->name);
    SDT_CHECK(strcmp(label, want) == 0, "%s: label '%s', expected '%s'", what, label, want);
    SDT_CHECK(strncmp(line, f->name, strlen(f->name)) == 0, "%s: description '%s'", what, line);

    char *text = plan_text(p);
    SDT_CHECK(text != NULL, "%s: %s: no JSON", what, line);
    if (text == NULL)
        return;
    sdi_jvalue v;
    sdi_plan back;
    memset(&back, 0x5a, sizeof back); /* the reader sets every byte */
    bool parsed = sdi_json_parse(text, -1, &v) == SD_OK;
    sd_status rs = parsed ? sdi_plan_from_json(&v, &back) : SD_ERR_PARSE;
    if (parsed)
        sdi_jvalue_free(&v);
    SDT_CHECK(rs == SD_OK, "%s: %s: read back: %s\n    %s", what, line, sd_last_error(), text);
    if (rs != SD_OK) {
        sdi_free(text);
        return;
    }
    SDT_CHECK(sdi_plan_equal(p, &back), "%s: %s: not the same plan after its JSON", what, line);
    SDT_CHECK(memcmp(p, &back, sizeof back) == 0, "%s: %s: not the same bytes after its JSON", what, line);
    char *again = plan_text(&back);
    SDT_CHECK(again != NULL && strcmp(text, again) == 0, "%s: %s: JSON differs when written again:\n    %s\n    %s",
              what, line, text, again ? again : "(none)");
    sdi_free(again);
    sdi_free(text);

    sdi_lowered lx, ly;
    sd_status sx = sdi_plan_lower(t, p, &lx);
    char ex[256];
    snprintf(ex, sizeof ex, "%s", sd_last_error());
    sd_status sy = sdi_plan_lower(t, &back, &ly);
    SDT_CHECK(sx == sy, "%s: %s: lowering gives %s, read back %s (%s / %s)", what, line, sd_status_string(sx),
              sd_status_string(sy), ex, sd_last_error());
    if (sx == SD_OK && sy == SD_OK) {
        const char *why = "";
        SDT_CHECK(same_lowered(&lx, &ly, &why), "%s: %s: the plan read back lowers to another program (%s)", what,
                  line, why);
        g_lowered[p->family]++;
    }
    if (sx == SD_OK)
        sdi_lowered_free(&lx);
    if (sy == SD_OK)
        sdi_lowered_free(&ly);
    sdi_error_clear();
}

/* Every family of the task's operator: its default plan and its level-1 sweep. */
static void check_task(const sdi_task *t, const char *what)
{
    for (int i = 0; i < sdi_family_count(); i++) {
        const sdi_family *f = sdi_family_at(i);
        if (f->op != t->op)
            continue;
        char name[160];
        snprintf(name, sizeof name, "%s %s", what, f->name);
        sdi_plan d;
        if (sdi_plan_default(t, i, &d) == SD_OK) {
            SDT_CHECK(d.op == t->op && d.family == i && d.k == t->k, "%s: default plan of op %d family %d k %d", name,
                      (int)d.op, (int)d.family, (int)d.k);
            check_plan(t, &d, name);
        }
        sdi_error_clear();
        sdi_plan_list l = {0};
        sd_status s = f->sweep(t, 1, &l);
        SDT_CHECK(s == SD_OK || s == SD_ERR_UNSUPPORTED, "%s: sweep: %s", name, sd_last_error());
        for (int j = 0; s == SD_OK && j < l.n; j++) {
            SDT_CHECK(l.v[j].op == t->op && l.v[j].family == i && l.v[j].k == t->k,
                      "%s: sweep plan %d of op %d family %d k %d", name, j, (int)l.v[j].op, (int)l.v[j].family,
                      (int)l.v[j].k);
            check_plan(t, &l.v[j], name);
        }
        sdi_plan_list_free(&l);
        sdi_error_clear();
    }
}

static void check_matrix(const char *what, const sd_csr *a)
{
    fixture fx;
    if (!fixture_open(&fx, what, a))
        return;
    static const int ks[] = {8, 32, 256};
    char name[256];
    if (fixture_task(&fx, SD_OP_SPMV, 1) == SD_OK) {
        snprintf(name, sizeof name, "%s spmv", what);
        check_task(&fx.t, name);
    }
    for (int i = 0; i < COUNT(ks); i++)
        if (fixture_task(&fx, SD_OP_SPMM, ks[i]) == SD_OK) {
            snprintf(name, sizeof name, "%s spmm K=%d", what, ks[i]);
            check_task(&fx.t, name);
        }
    if (fx.a.rows == fx.a.cols && fixture_task(&fx, SD_OP_SPGEMM, 1) == SD_OK) {
        snprintf(name, sizeof name, "%s spgemm A·A", what);
        check_task(&fx.t, name);
    }
    sdi_error_clear();
    fixture_free(&fx);
}

/* ------------------------------------------------------------------ tests */
static void test_table(void)
{
    /* The order of the operators' family enums: a family's index is its id plus an offset. */
    static const int first[3] = {0, SDI_SPMV_NFAMILIES, SDI_SPMV_NFAMILIES + SDI_SPMM_NTEMPLATES};
    static const int n[3] = {SDI_SPMV_NFAMILIES, SDI_SPMM_NTEMPLATES, SDI_SPGEMM_NFAMILIES};
    SDT_CHECK(sdi_family_count() == first[2] + n[2], "%d families", sdi_family_count());
    for (int op = 0; op < 3; op++)
        for (int id = 0; id < n[op]; id++) {
            int i = sdi_family_of(op, id);
            const sdi_family *f = sdi_family_at(i);
            SDT_CHECK(i == first[op] + id && f != NULL && f->op == op && f->id == id, "op %d id %d: index %d", op,
                      id, i);
            if (f == NULL)
                continue;
            SDT_CHECK(sdi_family_find(op, f->name) == i, "%s by name", f->name);
            SDT_CHECK(f->layout != NULL && f->decomposition != NULL && f->defaults != NULL && f->sweep != NULL &&
                          f->check != NULL && f->lower != NULL && f->dataflow != NULL && f->uses_atomics != NULL &&
                          f->vo_label != NULL && f->rank != NULL,
                      "%s: a hook is missing", f->name);
            const char *names[] = {op == SD_OP_SPMV   ? sdi_spmv_family_name(id)
                                   : op == SD_OP_SPMM ? sdi_spmm_template_name(id)
                                                      : sdi_spgemm_family_name(id)};
            SDT_CHECK(strcmp(f->name, names[0]) == 0, "entry %d is '%s', the operator names it '%s'", i, f->name,
                      names[0]);
        }
    SDT_CHECK(sdi_family_at(-1) == NULL && sdi_family_at(sdi_family_count()) == NULL, "out of range");
    SDT_CHECK(sdi_family_find(SD_OP_SPMV, "csr_row") < 0 && sdi_family_of(SD_OP_SPGEMM, 99) < 0, "misses");

    sdi_plan_list l = {0};
    sdi_plan p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < 100; i++) {
        p.k = i;
        SDT_OK(sdi_plan_list_push(&l, &p));
    }
    SDT_CHECK(l.n == 100 && l.v[57].k == 57, "list of %d", l.n);
    sdi_plan_list_free(&l);
    SDT_CHECK(l.v == NULL && l.n == 0 && l.cap == 0, "freed list");
}

static void test_data_matrices(void)
{
    for (int i = 0; i < COUNT(data_files); i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", SD_TEST_DATA_DIR, data_files[i]);
        sd_csr a;
        sd_status s = sd_csr_read(path, &a);
        SDT_CHECK(s == SD_OK, "%s: %s", path, sd_last_error());
        if (s == SD_OK)
            check_matrix(data_files[i], &a); /* takes a */
    }
    for (int i = 0; i < COUNT(generated); i++) {
        sd_csr a;
        SDT_OK(sdi_gen(generated[i], 7, &a));
        check_matrix(generated[i], &a);
    }
}

static void test_shared_matrices(void)
{
    int found = 0;
    for (int i = 0; i < COUNT(shared_files); i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/suitesparse/%s.mtx.gz", SD_MATRICES_DIR, shared_files[i]);
        if (access(path, R_OK) != 0)
            continue;
        sd_csr a;
        sd_status s = sd_csr_read(path, &a);
        SDT_CHECK(s == SD_OK, "%s: %s", path, sd_last_error());
        if (s == SD_OK) {
            check_matrix(shared_files[i], &a);
            found++;
        }
    }
    if (found == 0)
        printf("  (no shared matrices under %s/suitesparse)\n", SD_MATRICES_DIR);
}

/* Every family of the table lowered at least one plan that round-tripped. */
static void test_every_family_reached(void)
{
    for (int i = 0; i < sdi_family_count(); i++) {
        const sdi_family *f = sdi_family_at(i);
        SDT_CHECK(g_lowered[i] > 0, "family %s of op %d: no plan lowered", f->name, (int)f->op);
    }
    printf("  plans: %d SpMV, %d SpMM, %d SpGEMM\n", g_plans[0], g_plans[1], g_plans[2]);
}

/* Plan JSON the reader refuses, each naming the member. */
static void test_refused(void)
{
    /* A good plan to start from: csr_split's default on a generated matrix. */
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=2000,deg=6", 3, &a));
    fixture fx;
    if (!fixture_open(&fx, "refused", &a))
        return;
    SDT_OK(fixture_task(&fx, SD_OP_SPMM, 32));
    sdi_plan p;
    int idx = sdi_family_find(SD_OP_SPMM, "csr_split");
    SDT_OK(sdi_plan_default(&fx.t, idx, &p));
    char *text = plan_text(&p), good[4096];
    SDT_CHECK(text != NULL && strlen(text) < sizeof good, "no JSON");
    if (text == NULL || strlen(text) >= sizeof good) {
        sdi_free(text);
        fixture_free(&fx);
        return;
    }
    snprintf(good, sizeof good, "%s", text);
    sdi_free(text);
    const sdi_family *f = sdi_family_at(idx);
    char layout[64], spmv_family[64];
    snprintf(layout, sizeof layout, "\"layout\":\"%s\"", f->layout);
    snprintf(spmv_family, sizeof spmv_family, "\"family\":\"%s\"", f->name);
    static const struct {
        const char *from, *to, *member;
    } edits[] = {
        {"\"format\":1", "\"format\":7", "'format'"},
        {"\"format\":1,", "", "'format'"},
        {"\"op\":\"spmm\"", "\"op\":\"spmx\"", "'op'"},
        {"\"k\":32,", "", "'k'"},
        {"\"k\":32", "\"k\":0.5", "'k'"},
        {"@family", "\"family\":\"merge\"", "'family'"},  /* a family of SpMV */
        {"@family", "\"family\":\"nosuch\"", "'family'"}, /* no family at all */
        {"@layout", "\"layout\":\"dia\"", "'R.layout'"},
        {"\"row_order\":\"natural\"", "\"row_order\":\"rcm\"", "'R.row_order'"},
        {"\"col_renumber\":\"none\"", "\"col_renumber\":7", "'R.col_renumber'"},
        {"\"decomposition\":", "\"decomposition\":\"x\",\"was\":", "'S.decomposition'"},
        {"\"dataflow\":", "\"dataflow\":\"x\",\"was\":", "'S.dataflow'"},
        {"\"theta\":", "\"theta\":5,\"was\":", "'theta'"},
        {"\"theta\":", "\"was\":", "'theta'"},
        {"\"warps\":", "\"warpz\":", "'theta'"},
        {"\"template\":\"csr_split\"", "\"template\":\"csr_row\"", "'theta'"},
    };
    for (int i = 0; i < COUNT(edits); i++) {
        const char *from = edits[i].from;
        if (strcmp(from, "@family") == 0)
            from = spmv_family;
        else if (strcmp(from, "@layout") == 0)
            from = layout;
        const char *at = strstr(good, from);
        SDT_CHECK(at != NULL, "edit %d: '%s' not in %s", i, from, good);
        if (at == NULL)
            continue;
        char bad[8192];
        const size_t off = (size_t)(at - good);
        snprintf(bad, sizeof bad, "%.*s%s%s", (int)off, good, edits[i].to, good + off + strlen(from));
        sdi_jvalue v;
        sdi_plan back;
        if (sdi_json_parse(bad, -1, &v) != SD_OK) {
            SDT_CHECK(0, "edit %d: not JSON: %s", i, bad);
            continue;
        }
        sd_status s = sdi_plan_from_json(&v, &back);
        sdi_jvalue_free(&v);
        SDT_CHECK(s == SD_ERR_PARSE && strstr(sd_last_error(), edits[i].member) != NULL,
                  "edit %d: %s, '%s' (expected SD_ERR_PARSE naming %s)\n    %s", i, sd_status_string(s),
                  sd_last_error(), edits[i].member, bad);
        sdi_plan zero;
        memset(&zero, 0, sizeof zero);
        SDT_CHECK(memcmp(&back, &zero, sizeof back) == 0, "edit %d: a refused plan is zeroed", i);
        sdi_error_clear();
    }
    sdi_jvalue v;
    sdi_plan back;
    SDT_OK(sdi_json_parse("[1,2]", -1, &v));
    SDT_STATUS(sdi_plan_from_json(&v, &back), SD_ERR_PARSE);
    sdi_jvalue_free(&v);
    sdi_error_clear();
    fixture_free(&fx);
}

int main(void)
{
    sdt_init("test_plan_json");
    SDT_RUN(test_table);
    SDT_RUN(test_data_matrices);
    SDT_RUN(test_shared_matrices);
    SDT_RUN(test_every_family_reached);
    SDT_RUN(test_refused);
    return sdt_finish();
}
