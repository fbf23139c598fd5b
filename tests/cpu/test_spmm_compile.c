/* tests/cpu/test_spmm_compile.c: every SpMM template variant compiles with NVRTC for sm_90
 * (no GPU needed): each template's default at K ∈ {1, 3, 8, 32, 33, 128, 256, 300}, the
 * three split dataflows, a raised and the light register cap, every sweep axis and
 * ParamSpMM's (F, V, S) space with its W and group variants, deduplicated by kernel name
 * (the name hashes the code's macros); each cubin must hold its kernels' names and compile
 * without warnings. The light cap's sweep members: test_light_members; the segments'
 * atomic-sum finish's workspace, reproducibility flag and sweep members:
 * test_segatomic_lowering.
 * SD_SPMM_COMPILE_ALL=1 compiles every sweep member at every K (several minutes). */
#include <stdlib.h>

#include "core/sdi.h"

#include "gen/gen.h"
#include "plan/families/spmm_shared.h"
#include "plan/spmm.h"
#include "sdt.h"

/* c lowered for a through its family, with a's statistics. */
static sd_status lower_cfg(const sd_csr *a, const sdi_spmm_config *c, sdi_lowered *l)
{
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    return sdi_spmm_lower_config(a, &st, c, l);
}

/* The variants to compile, deduplicated by kernel name (lowered descriptions kept). */
#define MAX_VARIANTS 2048
typedef struct {
    char desc[160];
    sdi_lowered l;
    int tmpl;
    sd_status status;
    char error[512];
    int found[2];
    int warned;
    char log[400];
    double ms;
} variant;
static variant *vars;
static int nvars;

static void add_variant(const sd_csr *a, const sdi_spmm_config *cfg)
{
    char desc[160];
    sdi_spmm_config_describe(cfg, desc, sizeof desc);
    sdi_lowered l;
    sd_status s = lower_cfg(a, cfg, &l);
    SDT_CHECK(s == SD_OK, "lowering %s: %s", desc, sd_last_error());
    if (s != SD_OK)
        return;
    for (int i = 0; i < nvars; i++)
        if (strcmp(vars[i].l.kname[0], l.kname[0]) == 0) {
            sdi_lowered_free(&l);
            return;
        }
    if (nvars == MAX_VARIANTS) {
        sdi_lowered_free(&l);
        return;
    }
    variant *v = &vars[nvars++];
    memset(v, 0, sizeof *v);
    snprintf(v->desc, sizeof v->desc, "%s", desc);
    v->l = l;
    v->tmpl = cfg->tmpl;
}

static bool cubin_has(const sdi_cubin *c, const char *name)
{
    size_t n = strlen(name);
    const char *p = c->cubin;
    for (size_t i = 0; i + n <= c->size; i++)
        if (p[i] == name[0] && memcmp(p + i, name, n) == 0 && (i + n == c->size || p[i + n] == 0))
            return true;
    return false;
}

/* Compiles vars[i] (thread-safe: results stay in the variant). */
static void compile_variant(variant *v)
{
    sdi_macro macros[SDI_LOW_MAX_MACROS];
    sdi_jit_request req;
    v->status = sdi_lowered_jit_request(&v->l, NULL, macros, &req);
    if (v->status != SD_OK) {
        snprintf(v->error, sizeof v->error, "%s", sd_last_error());
        return;
    }
    req.arch = "sm_90";
    sdi_cubin cubin;
    memset(&cubin, 0, sizeof cubin);
    v->status = sdi_jit_compile(&req, &cubin);
    if (v->status != SD_OK) {
        snprintf(v->error, sizeof v->error, "%s", sd_last_error());
        return;
    }
    v->ms = cubin.compile_ms;
    for (int k = 0; k < v->l.nkernels; k++)
        v->found[k] = cubin_has(&cubin, v->l.kname[k]);
    if (cubin.log != NULL && strstr(cubin.log, "warning") != NULL) {
        v->warned = 1;
        snprintf(v->log, sizeof v->log, "%s", cubin.log);
    }
    sdi_cubin_free(&cubin);
}

/* Every code path of every template: defaults at each K, the three split dataflows, a
 * raised register cap, the θ_H axes of each sweep at a vector-friendly and an odd K,
 * and the ParamSpMM space (whole with SD_SPMM_COMPILE_ALL=1). */
static void collect(const sd_csr *skewed, const sd_csr *blocky, bool all)
{
    static const int ks[] = {1, 3, 8, 32, 33, 128, 256, 300};
    sdi_spmm_stats st, stb;
    sdi_spmm_stats_compute(skewed, &st);
    sdi_spmm_stats_compute(blocky, &stb);
    for (int q = 0; q < 8; q++) {
        int k = ks[q];
        for (int t = 0; t < SDI_SPMM_NTEMPLATES; t++) {
            sdi_spmm_config c;
            const bool blocks = t == SDI_SPMM_BSR || t == SDI_SPMM_BELL || t == SDI_SPMM_BSR_TC ||
                                t == SDI_SPMM_COL_WINDOW;
            if (sdi_spmm_config_default(t, k, blocks ? &stb : &st, &c) == SD_OK)
                add_variant(blocks ? blocky : skewed, &c);
        }
        sdi_spmm_config c;
        if (sdi_spmm_config_default(SDI_SPMM_CSR_SPLIT, k, &st, &c) == SD_OK) {
            c.split_mode = 1 - c.split_mode;
            add_variant(skewed, &c);
            c.split_mode = SDI_SPLIT_SEGMENTS;
            c.nzpar = 1;
            c.chunk = c.split_threshold = 32;
            add_variant(skewed, &c);
            c.split_mode = SDI_SPLIT_SEGATOMIC;
            add_variant(skewed, &c);
        }
        if (sdi_spmm_config_default(SDI_SPMM_CSR_ROW, k, &st, &c) == SD_OK) {
            c.regcap = 128;
            add_variant(skewed, &c);
        }
        /* the light cap (32 registers, 8 floats of B in flight) of the row-wise templates */
        static const int light[] = {SDI_SPMM_CSR_ROW, SDI_SPMM_CSR_WINDOW, SDI_SPMM_CSR_SPLIT};
        for (int t = 0; t < 3; t++)
            if (sdi_spmm_config_default(light[t], k, &st, &c) == SD_OK) {
                c.regcap = 32;
                add_variant(skewed, &c);
            }
        const bool sweep = all || k == 8 || k == 33 || k == 256;
        if (sweep)
            for (int which = 0; which < 2; which++) {
                const sd_csr *m = which ? blocky : skewed;
                sdi_spmm_config *cs = NULL;
                int n = 0;
                SDT_OK(sdi_spmm_enumerate(m, k, all ? 0 : ~(1u << SDI_SPMM_PCSR), 1, 0, &cs, &n));
                for (int i = 0; i < n; i++)
                    add_variant(m, &cs[i]);
                sdi_free(cs);
            }
        sdi_spmm_config *pc = NULL;
        int n = 0;
        SDT_OK(sdi_spmm_enumerate_pcsr(skewed, k, 1, &pc, &n));
        for (int i = 0; i < n; i++) {
            const sdi_spmm_config *p = &pc[i];
            /* every (F, V, S) at W = 4 and the full group; other W and groups once */
            bool pick = all || (k == 32 || k == 300)
                            ? (p->warps == 4 && p->pcsr_group == 32) ||
                                  (p->coarsen == 1 && p->pcsr_v == 2 && p->pcsr_s == 1)
                            : false;
            if (all || pick)
                add_variant(skewed, p);
        }
        sdi_free(pc);
    }
}

static void test_compile_all(void)
{
    sd_csr a, blocky;
    sd_status s = sdi_gen("bimodal:rows=512,short=4,long=300,frac=0.05", sdt_seed, &a);
    SDT_CHECK(s == SD_OK, "generator: %s", sd_last_error());
    if (s != SD_OK)
        return;
    s = sdi_gen("blockdiag:n=512,b=16", sdt_seed, &blocky);
    SDT_CHECK(s == SD_OK, "generator: %s", sd_last_error());
    if (s != SD_OK) {
        sd_csr_free(&a);
        return;
    }
    vars = sdi_calloc(MAX_VARIANTS, sizeof *vars);
    SDT_CHECK(vars != NULL, "out of memory");
    if (vars == NULL) {
        sd_csr_free(&a);
        sd_csr_free(&blocky);
        return;
    }
    const bool all = getenv("SD_SPMM_COMPILE_ALL") != NULL;
    collect(&a, &blocky, all);
    double t0 = sdi_now();
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < nvars; i++)
        compile_variant(&vars[i]);
    double wall = sdi_now() - t0;
    int per_template[SDI_SPMM_NTEMPLATES] = {0};
    double ms = 0;
    for (int i = 0; i < nvars; i++) {
        variant *v = &vars[i];
        SDT_CHECK(v->status == SD_OK, "%s (%s) does not compile: %s", v->desc, v->l.kname[0],
                  v->error);
        if (v->status == SD_OK) {
            per_template[v->tmpl]++;
            ms += v->ms;
            for (int k = 0; k < v->l.nkernels; k++)
                SDT_CHECK(v->found[k], "%s: cubin lacks kernel %s", v->desc, v->l.kname[k]);
            SDT_CHECK(!v->warned, "%s: NVRTC warnings: %s", v->desc, v->log);
        }
        sdi_lowered_free(&v->l);
    }
    for (int t = 0; t < SDI_SPMM_NTEMPLATES; t++) {
        SDT_CHECK(per_template[t] > 0, "template %s: nothing compiled", sdi_spmm_template_name(t));
        printf("  %-10s %d variants\n", sdi_spmm_template_name(t), per_template[t]);
    }
    printf("  %d distinct kernels compiled for sm_90 (%.1f s of NVRTC, %.1f s wall)%s\n", nvars,
           ms / 1e3, wall, all ? "" : "; SD_SPMM_COMPILE_ALL=1 compiles every sweep member");
    sdi_free(vars);
    vars = NULL;
    nvars = 0;
    sd_csr_free(&a);
    sd_csr_free(&blocky);
}

/* Many rows of short rows (≥ 50,000) with one vector of accumulators per lane at K ≥ 32:
 * csr_row and csr_window offer their default at the light cap (32 registers) first after
 * it, csr_split last; not with fewer rows, at K = 8, or with more accumulators (K = 256: two
 * vectors). */
static void test_light_members(void)
{
    static const int32_t rows[] = {60000, 40000};
    static const int ks[] = {32, 8, 128, 256};
    for (int r = 0; r < 2; r++) {
        sd_csr a;
        SDT_OK(sdi_csr_alloc(&a, rows[r], 1000, rows[r]));
        for (int32_t i = 0; i <= rows[r]; i++)
            a.rowptr[i] = i;
        for (int32_t i = 0; i < rows[r]; i++) {
            a.colind[i] = i % 1000;
            a.vals[i] = 1.0f;
        }
        for (int q = 0; q < 4; q++) {
            static const int tm[] = {SDI_SPMM_CSR_ROW, SDI_SPMM_CSR_WINDOW, SDI_SPMM_CSR_SPLIT};
            for (int t = 0; t < 3; t++) {
                sdi_spmm_config *v = NULL;
                int n = 0;
                SDT_OK(sdi_spmm_enumerate(&a, ks[q], 1u << tm[t], 1, 0, &v, &n));
                int at = -1, count = 0;
                for (int i = 0; i < n; i++)
                    if (v[i].regcap == 32) {
                        at = i;
                        count++;
                    }
                const bool want = r == 0 && ks[q] >= 32 && ks[q] != 256;
                SDT_CHECK(count == (want ? 1 : 0), "%s K = %d, %d rows: %d light members",
                          sdi_spmm_template_name(tm[t]), ks[q], rows[r], count);
                if (want && count == 1)
                    SDT_CHECK(tm[t] == SDI_SPMM_CSR_SPLIT ? at == n - 1 : at == 1,
                              "%s K = %d: the light member is at %d of %d",
                              sdi_spmm_template_name(tm[t]), ks[q], at, n);
                sdi_free(v);
            }
        }
        sd_csr_free(&a);
    }
}

/* Segments with atomic sums (SEGATOMIC): one sum slot per segment (half the ordered
 * finish's workspace), a reproducible program where no row crosses a segment boundary, and
 * the sweep's members: both finishes per segment length, 8-entry segments with atomic sums
 * only. */
static size_t ws_bytes(const sdi_lowered *l)
{
    for (int i = 0; i < l->narrays; i++)
        if (strcmp(l->arr[i].name, "ws") == 0)
            return l->arr[i].bytes;
    return 0;
}

static void test_segatomic_lowering(void)
{
    /* 100 rows of 4 entries, then (long) one row of 100: 8-entry segments cut only it */
    for (int long_row = 0; long_row < 2; long_row++) {
        const int32_t rows = 100 + long_row;
        const int64_t nnz = 400 + 100 * long_row;
        sd_csr a;
        SDT_OK(sdi_csr_alloc(&a, rows, 200, nnz));
        for (int32_t i = 0; i <= 100; i++)
            a.rowptr[i] = 4 * (int64_t)i;
        if (long_row)
            a.rowptr[101] = nnz;
        for (int32_t i = 0; i < rows; i++)
            for (int64_t e = a.rowptr[i]; e < a.rowptr[i + 1]; e++) {
                a.colind[e] = (int32_t)(e - a.rowptr[i]);
                a.vals[e] = 1.0f;
            }
        sdi_spmm_stats st;
        sdi_spmm_stats_compute(&a, &st);
        sdi_spmm_config c;
        SDT_OK(sdi_spmm_config_default(SDI_SPMM_CSR_SPLIT, 32, &st, &c));
        c.nzpar = 1;
        c.chunk = c.split_threshold = 8;
        const int64_t nseg = (nnz + 7) / 8;
        for (int mode = SDI_SPLIT_SEGMENTS; mode <= SDI_SPLIT_SEGATOMIC; mode++) {
            c.split_mode = mode;
            SDT_OK(sdi_spmm_config_check(&c, &st));
            sdi_lowered l;
            SDT_OK(lower_cfg(&a, &c, &l));
            const size_t want = (size_t)nseg * (mode == SDI_SPLIT_SEGATOMIC ? 1 : 2) * 32 * 4;
            SDT_CHECK(ws_bytes(&l) == want, "mode %d: ws %zu bytes, want %zu", mode,
                      ws_bytes(&l), want);
            const int det = mode == SDI_SPLIT_SEGMENTS || !long_row;
            SDT_CHECK((!l.atomics) == det, "mode %d, long row %d: deterministic %d", mode,
                      long_row, !l.atomics);
            char desc[160];
            sdi_spmm_config_describe(&c, desc, sizeof desc);
            SDT_CHECK(strstr(desc, mode == SDI_SPLIT_SEGATOMIC ? "segatomic" : "segments") != NULL,
                      "description '%s'", desc);
            sdi_lowered_free(&l);
        }
        if (long_row) { /* the sweep's segment members */
            sdi_spmm_config *v = NULL;
            int n = 0, atomic8 = 0, ordered8 = 0, atomic32 = 0, ordered32 = 0;
            SDT_OK(sdi_spmm_enumerate(&a, 32, 1u << SDI_SPMM_CSR_SPLIT, 1, 0, &v, &n));
            for (int i = 0; i < n; i++) {
                if (!sdi_spmm_split_segmented(&v[i]))
                    continue;
                const bool at = v[i].split_mode == SDI_SPLIT_SEGATOMIC;
                atomic8 += at && v[i].chunk == 8;
                ordered8 += !at && v[i].chunk == 8;
                atomic32 += at && v[i].chunk == 32;
                ordered32 += !at && v[i].chunk == 32;
            }
            SDT_CHECK(atomic8 == 1 && ordered8 == 0 && atomic32 == 1 && ordered32 == 1,
                      "segment members: 8 entries %d atomic / %d ordered, 32 entries %d / %d",
                      atomic8, ordered8, atomic32, ordered32);
            sdi_free(v);
        }
        sd_csr_free(&a);
    }
}

/* A kernel that cannot compile is reported with its name and the NVRTC log. */
static void test_compile_error_reported(void)
{
    sdi_macro m[] = {{"SD_K", "8"}, {"SD_KNAME", "sd_spmm_broken"}};
    sdi_jit_request req;
    memset(&req, 0, sizeof req);
    req.template_name = "spmm_csr_row.cuh"; /* θ_H macros missing */
    req.macros = m;
    req.nmacros = 2;
    req.arch = "sm_90";
    req.kernel_name = "sd_spmm_broken";
    sdi_cubin c;
    memset(&c, 0, sizeof c);
    SDT_STATUS(sdi_jit_compile(&req, &c), SD_ERR_COMPILE);
    SDT_CHECK(strstr(sd_last_error(), "sd_spmm_broken") != NULL, "message '%s'", sd_last_error());
    sdi_cubin_free(&c);
}

int main(void)
{
    sdt_init("test_spmm_compile");
    SDT_RUN(test_compile_error_reported);
    SDT_RUN(test_light_members);
    SDT_RUN(test_segatomic_lowering);
    SDT_RUN(test_compile_all);
    return sdt_finish();
}
