/* tests/cpu/test_spgemm_compile.c: every SpGEMM template variant compiles with NVRTC for
 * sm_90 (no GPU needed): the plan-time kernels, the scan, every accumulator kind × lane
 * count × size × phase at 128, 256 and 512 threads, and the launch units of each plan
 * family on a synthetic product (each one kernel, in its CUBIN, without the scan); units
 * are shared across configurations and products and deduplicated within a schedule; the
 * SPARSEDITTO_SG_WARP_BROW=0 switch; the linked form of the units (relocatable parts linked by
 * nvJitLink) and its switch. */
#define _GNU_SOURCE
#include <string.h>

#include "lower/spgemm_units.h"
#include "runtime/runtime.h"
#include "runtime/spgemm_exec.h"
#include "sdt.h"

static int compile(const char *template_name, const char *source, const char *label,
                   sdi_cubin *out)
{
    sdi_jit_request req;
    memset(&req, 0, sizeof req);
    req.template_name = template_name;
    req.source = source;
    req.arch = "sm_90";
    req.kernel_name = label;
    sd_status s = sdi_jit_compile(&req, out);
    SDT_CHECK(s == SD_OK, "%s: %s", label, sd_last_error());
    if (s == SD_OK)
        printf("  %s: %.0f ms, %zu bytes of CUBIN\n", label, out->compile_ms, out->size);
    return s == SD_OK;
}

static int cubin_has(const sdi_cubin *c, const char *name)
{
    return memmem(c->cubin, c->size, name, strlen(name) + 1) != NULL;
}

static void test_prep_and_scan(void)
{
    sdi_cubin c;
    if (compile("spgemm_prep.cuh", NULL, "spgemm_prep", &c)) {
        static const char *const names[] = {
            "sd_spgemm_prep_rowinfo",   "sd_spgemm_prep_tcount",   "sd_spgemm_prep_tscatter",
            "sd_spgemm_prep_tsort_warp", "sd_spgemm_prep_tsort_cta", "sd_spgemm_prep_tsort_long",
            "sd_spgemm_prep_gather"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            SDT_CHECK(cubin_has(&c, names[i]), "kernel %s missing", names[i]);
        sdi_cubin_free(&c);
    }
    if (compile("spgemm_scan.cuh", NULL, "spgemm_scan", &c)) {
        SDT_CHECK(cubin_has(&c, "sd_spgemm_scan"), "scan kernel missing");
        sdi_cubin_free(&c);
    }
}

static void all_variants(int threads)
{
    char *src = NULL;
    SDT_OK(sdi_spgemm_lower_all_variants(threads, &src));
    if (src == NULL)
        return;
    char label[64];
    snprintf(label, sizeof label, "spgemm_all_T%d", threads);
    sdi_cubin c;
    if (compile(NULL, src, label, &c)) {
        /* one kernel per kind × phase (long lists split in parts of SD_SG_MAX_SEGS) */
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_tiny_ph0_0"), "tiny SYM kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_ghash_ph2_0"), "ghash ONE kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_gdense_ph1_0"), "gdense NUM kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_chash_ph1_0"), "chash NUM kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_cdense_ph0_0"), "cdense SYM kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_global_ph2_0"), "global ONE kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_copy_ph0_0"), "copy kernel missing");
        sdi_cubin_free(&c);
    }
    sdi_free(src);
}

static void test_all_variants_256(void) { all_variants(256); }
static void test_all_variants_128(void) { all_variants(128); }
static void test_all_variants_512(void) { all_variants(512); }

/* A product whose rows reach every kind under the hybrid rules: tiny rows, mid rows with
 * wide spans (hash), narrow rows (dense), huge rows (CTA hash and global stripes). */
static void synth_rows(int32_t m, int32_t n, int64_t *u, int32_t *lo, int32_t *hi)
{
    for (int32_t i = 0; i < m; i++) {
        int64_t uu;
        int64_t span;
        switch (i % 8) {
        case 0: uu = 0; span = 0; break;
        case 1: uu = 5; span = 1000; break;
        case 2: uu = 30; span = 5000; break;
        case 3: uu = 200; span = 100000; break;
        case 4: uu = 3000; span = 600; break; /* narrow: dense stripe */
        case 5: uu = 1500; span = 200000; break;
        case 6: uu = 20000; span = 30000; break;
        default: uu = 400000; span = n; break; /* global */
        }
        if (i == 7)
            uu = 5; /* keep the huge rows few */
        u[i] = uu;
        lo[i] = uu > 0 ? (int32_t)((i * 7919ll) % (n - span + 1)) : -1;
        hi[i] = uu > 0 ? lo[i] + (int32_t)span - 1 : -1;
    }
}

/* The synthetic product of synth_rows with m rows, H200 limits. */
typedef struct {
    int64_t *u;
    int32_t *lo, *hi;
    sdi_sg_rowinfo ri;
    sdi_sg_limits lim;
} synth_t;

static int synth_make(synth_t *t, int32_t m)
{
    enum { N = 1 << 20 };
    memset(t, 0, sizeof *t);
    t->u = sdi_malloc_array((size_t)m, sizeof *t->u);
    t->lo = sdi_malloc_array((size_t)m, sizeof *t->lo);
    t->hi = sdi_malloc_array((size_t)m, sizeof *t->hi);
    SDT_CHECK(t->u && t->lo && t->hi, "allocation");
    if (!t->u || !t->lo || !t->hi)
        return 0;
    synth_rows(m, N, t->u, t->lo, t->hi);
    t->ri = (sdi_sg_rowinfo){.m = m, .n = N, .u = t->u, .lo = t->lo, .hi = t->hi, .b_row_max = 1000};
    sdi_gpu_props props;
    SDT_OK(sdi_gpu_profile("H200", &props));
    sdi_sg_limits_from_props(&props, &t->lim);
    return 1;
}

static void synth_free(synth_t *t)
{
    sdi_free(t->u);
    sdi_free(t->lo);
    sdi_free(t->hi);
    memset(t, 0, sizeof *t);
}

static int lower_cfg(const synth_t *t, const sdi_spgemm_config *c, sdi_sg_lowered *low)
{
    sdi_sg_schedule s;
    memset(low, 0, sizeof *low);
    sd_status st = sdi_sg_schedule_build(c, &t->lim, &t->ri, &s);
    SDT_CHECK(st == SD_OK, "schedule: %s", sd_last_error());
    if (st != SD_OK)
        return 0;
    st = sdi_spgemm_lower(&s, low);
    SDT_CHECK(st == SD_OK, "lower: %s", sd_last_error());
    SDT_CHECK(low->nkernels == s.nlaunches, "%d kernels for %d launches", low->nkernels,
              s.nlaunches);
    sdi_sg_schedule_free(&s);
    return st == SD_OK;
}

/* The unit of b named like unit u of a (-1 when none). */
static int find_unit(const sdi_sg_lowered *b, const char *name)
{
    for (int v = 0; v < b->nunits; v++)
        if (strcmp(b->units[v].name, name) == 0)
            return v;
    return -1;
}

/* Equal names mean equal sources (the name is the shape's key); returns how many units
 * of a are in b. */
static int shared_units(const sdi_sg_lowered *a, const sdi_sg_lowered *b, const char *what)
{
    int shared = 0;
    for (int u = 0; u < a->nunits; u++) {
        int v = find_unit(b, a->units[u].name);
        if (v < 0)
            continue;
        shared++;
        SDT_CHECK(strcmp(a->units[u].source, b->units[v].source) == 0,
                  "%s: unit %s differs between the lowerings", what, a->units[u].name);
    }
    return shared;
}

/* Every family on every synthetic product: each distinct unit compiles for sm_90 with its
 * one kernel and without the scan (compiled once, on its own). Units shared by families
 * are compiled once, as the memo would. */
static void test_families_lowered(void)
{
    synth_t t;
    sdi_sg_lowered low[SDI_SPGEMM_NFAMILIES];
    memset(low, 0, sizeof low);
    if (!synth_make(&t, 4096))
        goto out;
    int launches = 0, distinct = 0;
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c;
        SDT_OK(sdi_spgemm_config_default(f, &c));
        if (!lower_cfg(&t, &c, &low[f]))
            continue;
        launches += low[f].nkernels;
        for (int u = 0; u < low[f].nunits; u++) {
            const sdi_sg_unit *U = &low[f].units[u];
            SDT_CHECK(strncmp(U->name, "sd_sg_", 6) == 0 && strlen(U->name) == 22,
                      "unit name '%s'", U->name);
            SDT_CHECK(strstr(U->source, "sd_spgemm_scan") == NULL &&
                          strstr(U->source, "spgemm_scan.cuh") == NULL,
                      "%s includes the scan", U->name);
            int earlier = 0;
            for (int g = 0; g < f && !earlier; g++)
                earlier = find_unit(&low[g], U->name) >= 0;
            if (earlier)
                continue;
            distinct++;
            char label[96];
            snprintf(label, sizeof label, "%s/%s", sdi_spgemm_family_name(f), U->name);
            sdi_cubin cb;
            if (compile(NULL, U->source, label, &cb)) {
                SDT_CHECK(cubin_has(&cb, U->name), "%s: kernel missing", label);
                SDT_CHECK(!cubin_has(&cb, "sd_spgemm_scan"), "%s: the scan is compiled again",
                          label);
                sdi_cubin_free(&cb);
            }
        }
    }
    printf("  %d launches of %d families: %d distinct units\n", launches, SDI_SPGEMM_NFAMILIES,
           distinct);
    SDT_CHECK(distinct > 0 && distinct < launches, "%d distinct units of %d launches", distinct,
              launches);
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++)
        for (int g = f + 1; g < SDI_SPGEMM_NFAMILIES; g++)
            (void)shared_units(&low[f], &low[g], "families");
out:
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++)
        sdi_sg_lowered_free(&low[f]);
    synth_free(&t);
}

/* Two configurations that differ in some bins share the launches of the others,
 * byte for byte; the same configuration on two products with the same bins (other row
 * counts) shares every unit. No NVRTC. */
static void test_units_shared(void)
{
    synth_t t1, t2;
    sdi_sg_lowered a, b, c;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    int ok = synth_make(&t1, 4096);
    ok = synth_make(&t2, 8192) && ok;
    if (!ok)
        goto out;
    sdi_spgemm_config c1, c2;
    SDT_OK(sdi_spgemm_config_default(SDI_SPGEMM_HYBRID, &c1));
    c1.fuse = 0; /* a launch per bin: a changed kind leaves the others' launches alone */
    c2 = c1;
    c2.tiny_max = 8; /* rows of 9 … 32 products move from 32-entry lists to group tables */
    if (!lower_cfg(&t1, &c1, &a) || !lower_cfg(&t1, &c2, &b) || !lower_cfg(&t2, &c1, &c))
        goto out;
    const int ab = shared_units(&a, &b, "configurations");
    printf("  c1: %d launches in %d units; c2: %d in %d; %d shared\n", a.nkernels, a.nunits,
           b.nkernels, b.nunits, ab);
    SDT_CHECK(ab > 0, "no unit shared by configurations differing in the tiny bins only");
    SDT_CHECK(ab < a.nunits || ab < b.nunits, "the configurations lowered to the same units");
    SDT_CHECK(strcmp(a.hex, b.hex) != 0, "schedules of different shapes share a key");
    const int ac = shared_units(&a, &c, "products");
    SDT_CHECK(ac == a.nunits && a.nunits == c.nunits && strcmp(a.hex, c.hex) == 0,
              "same bins on another product: %d of %d units shared", ac, a.nunits);
    for (int l = 0; l < a.nkernels && l < c.nkernels; l++)
        SDT_CHECK(strcmp(sdi_sg_lowered_kernel(&a, l), sdi_sg_lowered_kernel(&c, l)) == 0,
                  "launch %d: another kernel on another product", l);
out:
    sdi_sg_lowered_free(&a);
    sdi_sg_lowered_free(&b);
    sdi_sg_lowered_free(&c);
    synth_free(&t1);
    synth_free(&t2);
}

/* A schedule whose launches repeat shapes: one unit per distinct shape, launches mapped
 * to theirs, and a shape differing in one field (threads, a phase) is another unit. */
static void test_units_dedup(void)
{
    sdi_sg_schedule s;
    memset(&s, 0, sizeof s);
    const sdi_sg_segment tiny = {.kind = SDI_SG_TINY, .p = 8, .phase = SD_SG_PH_SYM, .bin = 0};
    const sdi_sg_segment hash = {.kind = SDI_SG_GHASH, .g = 8, .p = 7, .phase = SD_SG_PH_SYM,
                                 .bin = 1};
    s.nlaunches = 6;
    for (int l = 0; l < s.nlaunches; l++) {
        s.launches[l].stage = 1;
        s.launches[l].threads = 256;
        s.launches[l].nsegs = 2;
        s.launches[l].segs[0] = tiny;
        s.launches[l].segs[1] = hash;
        s.launches[l].segs[0].nrows = 100 * (l + 1); /* rows are arguments, not shape */
        s.launches[l].blocks = l + 1;
    }
    s.launches[1].threads = 128;               /* another shape */
    s.launches[3].segs[1].phase = SD_SG_PH_NUM; /* another shape */
    s.launches[3].stage = 2;
    s.launches[4].nsegs = 1;                    /* another shape */
    sdi_sg_lowered low;
    SDT_OK(sdi_spgemm_lower(&s, &low));
    SDT_CHECK(low.nkernels == 6 && low.nunits == 4, "%d launches, %d units (want 6, 4)",
              low.nkernels, low.nunits);
    if (low.nunits == 4) {
        static const int want[6] = {0, 1, 0, 2, 3, 0};
        for (int l = 0; l < 6; l++)
            SDT_CHECK(low.unit_of[l] == want[l], "launch %d in unit %d, want %d", l,
                      low.unit_of[l], want[l]);
        for (int u = 0; u < low.nunits; u++)
            for (int v = u + 1; v < low.nunits; v++)
                SDT_CHECK(strcmp(low.units[u].name, low.units[v].name) != 0 &&
                              strcmp(low.units[u].source, low.units[v].source) != 0,
                          "units %d and %d are equal", u, v);
        SDT_CHECK(strstr(low.units[1].source, "SD_LAUNCH_BOUNDS(128)") != NULL,
                  "unit 1 is not the 128-thread kernel");
        SDT_CHECK(sdi_sg_lowered_kernel(&low, 5) == low.units[0].name &&
                      sdi_sg_lowered_kernel(&low, 6) == NULL,
                  "kernel of a launch");
    }
    sdi_sg_lowered_free(&low);
    /* A segment count beyond the ABI is refused, not written past the arrays. */
    s.launches[2].nsegs = SD_SG_MAX_SEGS + 1;
    SDT_CHECK(sdi_spgemm_lower(&s, &low) == SD_ERR_INVALID_ARG && low.units == NULL,
              "too many segments accepted");
}

/* The linked form: every family's units on a synthetic product compile as relocatable
 * parts plus a dispatch and link (nvJitLink) into one cubin holding the unit's kernel;
 * the parts are variants (a name per kind, lanes, size, phase and threads), so units of
 * different families share them (SPARSEDITTO_SG_LINK=1); by default, and with
 * SPARSEDITTO_SG_LINK=0, the whole units only. */
static void test_linked_units(void)
{
    synth_t t;
    sdi_sg_lowered low[SDI_SPGEMM_NFAMILIES];
    memset(low, 0, sizeof low);
    if (!synth_make(&t, 4096))
        goto out;
    setenv("SPARSEDITTO_SG_LINK", "1", 1);
    sdi_config_reload();
    int units = 0, parts = 0;
    double link_ms = 0, whole_ms = 0;
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c;
        SDT_OK(sdi_spgemm_config_default(f, &c));
        if (!lower_cfg(&t, &c, &low[f]))
            continue;
        for (int u = 0; u < low[f].nunits; u++) {
            const sdi_sg_unit *U = &low[f].units[u];
            SDT_CHECK(U->link_source != NULL && U->nparts > 0 &&
                          strstr(U->link_source, "__grid_constant__") != NULL &&
                          strstr(U->link_source, "(&a, ") != NULL,
                      "%s: no linked form (or its parts not handed the arguments' address)",
                      U->name);
            if (U->link_source == NULL)
                continue;
            for (int q = 0; q < U->nparts; q++) {
                /* the part defines sgv_...( and the dispatch declares and calls it */
                const char *def = strstr(U->parts[q], "__noinline__ void sgv_");
                char fn[80] = "";
                if (def != NULL)
                    sscanf(def + strlen("__noinline__ void "), "%79[A-Za-z0-9_]", fn);
                SDT_CHECK(fn[0] && strstr(U->link_source, fn) != NULL, "%s part %d: '%s'", U->name, q, fn);
                /* no address space left to guess (a part handed the shared base as a
                 * pointer compiles every hash access and atomic generic, and runs slower):
                 * the part declares the dynamic shared memory and copies the arguments */
                const char *open = def != NULL ? strchr(def, '(') : NULL;
                const char *close = open != NULL ? strchr(open, ')') : NULL;
                SDT_CHECK(open != NULL && close != NULL &&
                              !(strstr(open, "unsigned char") != NULL &&
                                strstr(open, "unsigned char") < close) &&
                              strstr(U->parts[q], "extern __shared__") != NULL &&
                              strstr(U->parts[q], "sd_spgemm_args a = *ap;") != NULL,
                          "%s part %d: takes shared memory by pointer or reads its arguments "
                          "in place", U->name, q);
            }
            sdi_jit_request req;
            sdi_spgemm_unit_request(&low[f], u, &req);
            SDT_CHECK(req.link && req.nparts == U->nparts && req.link_source == U->link_source,
                      "%s: the unit request is not a link request", U->name);
            sdi_cubin cb;
            sd_status st = sdi_jit_compile(&req, &cb);
            SDT_CHECK(st == SD_OK, "%s linked: %s", U->name, sd_last_error());
            if (st == SD_OK) {
                SDT_CHECK(cubin_has(&cb, U->name), "%s: kernel missing from the linked cubin", U->name);
                link_ms += cb.compile_ms;
                sdi_cubin_free(&cb);
            }
            sdi_jit_request whole;
            memset(&whole, 0, sizeof whole);
            whole.source = U->source;
            whole.kernel_name = U->name;
            whole.fast = low[f].fast;
            if (sdi_jit_compile(&whole, &cb) == SD_OK) {
                whole_ms += cb.compile_ms;
                sdi_cubin_free(&cb);
            }
            units++;
            parts += U->nparts;
        }
    }
    printf("  %d units (%d parts): linked %.0f ms, whole %.0f ms (NVRTC time; the JIT cache may "
           "hold either)\n", units, parts, link_ms, whole_ms);
    SDT_CHECK(units > 0, "no units");
    /* the switch: off by default and with SPARSEDITTO_SG_LINK=0 */
    const char *off_env[2] = {NULL, "0"};
    for (int k = 0; k < 2; k++) {
        if (off_env[k] == NULL)
            unsetenv("SPARSEDITTO_SG_LINK");
        else
            setenv("SPARSEDITTO_SG_LINK", off_env[k], 1);
        sdi_config_reload();
        sdi_sg_lowered off;
        sdi_spgemm_config c;
        SDT_OK(sdi_spgemm_config_default(SDI_SPGEMM_HYBRID, &c));
        int ok = lower_cfg(&t, &c, &off);
        const char *how = off_env[k] == NULL ? "by default" : "SPARSEDITTO_SG_LINK=0";
        if (ok) {
            SDT_CHECK(off.nunits > 0 && off.units[0].link_source == NULL &&
                          off.units[0].nparts == 0,
                      "%s: still lowers the linked form", how);
            sdi_jit_request req;
            sdi_spgemm_unit_request(&off, 0, &req);
            SDT_CHECK(!req.link, "%s: a link request", how);
            sdi_sg_lowered_free(&off);
        }
    }
out:
    unsetenv("SPARSEDITTO_SG_LINK");
    sdi_config_reload();
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++)
        sdi_sg_lowered_free(&low[f]);
    synth_free(&t);
}

/* SPARSEDITTO_SG_WARP_BROW=0: a CTA unit's source defines SG_WARP_BROW 0 (the warp-per-B-row
 * path compiled out) and still compiles; by default it does not. */
static void test_warp_brow_switch(void)
{
    sdi_sg_schedule s;
    memset(&s, 0, sizeof s);
    s.nlaunches = 1;
    s.launches[0].stage = 2;
    s.launches[0].threads = 256;
    s.launches[0].nsegs = 1;
    s.launches[0].segs[0] = (sdi_sg_segment){.kind = SDI_SG_CHASH, .p = 13, .phase = SD_SG_PH_NUM,
                                             .bin = 0, .blocks = 1, .nrows = 1};
    s.launches[0].blocks = 1;
    sdi_sg_lowered on, off;
    SDT_OK(sdi_spgemm_lower(&s, &on));
    setenv("SPARSEDITTO_SG_WARP_BROW", "0", 1);
    sdi_config_reload();
    sd_status st = sdi_spgemm_lower(&s, &off);
    unsetenv("SPARSEDITTO_SG_WARP_BROW");
    sdi_config_reload();
    SDT_OK(st);
    if (st != SD_OK) {
        sdi_sg_lowered_free(&on);
        return;
    }
    SDT_CHECK(strstr(on.units[0].source, "#define SG_WARP_BROW") == NULL, "default unit defines it");
    SDT_CHECK(strstr(off.units[0].source, "#define SG_WARP_BROW 0") != NULL, "switched unit: %.200s",
              off.units[0].source);
    sdi_cubin c;
    if (compile(NULL, off.units[0].source, "spgemm_warp_brow_off", &c)) {
        SDT_CHECK(cubin_has(&c, off.units[0].name), "kernel %s missing", off.units[0].name);
        sdi_cubin_free(&c);
    }
    sdi_sg_lowered_free(&on);
    sdi_sg_lowered_free(&off);

    /* the configuration's warp_brow (the search's flip): -1 = off, N = that threshold,
     * and the environment's 0 wins over a threshold */
    const struct {
        int32_t wb;
        const char *env, *want;
    } cases[] = {{-1, NULL, "#define SG_WARP_BROW 0\n"},
                 {64, NULL, "#define SG_WARP_BROW 64\n"},
                 {64, "0", "#define SG_WARP_BROW 0\n"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s.warp_brow = cases[i].wb;
        if (cases[i].env != NULL)
            setenv("SPARSEDITTO_SG_WARP_BROW", cases[i].env, 1);
        sdi_config_reload();
        sdi_sg_lowered low;
        st = sdi_spgemm_lower(&s, &low);
        unsetenv("SPARSEDITTO_SG_WARP_BROW");
        sdi_config_reload();
        SDT_OK(st);
        if (st != SD_OK)
            continue;
        SDT_CHECK(strstr(low.units[0].source, cases[i].want) != NULL,
                  "warp_brow %d (env %s): %.120s", cases[i].wb, cases[i].env ? cases[i].env : "-",
                  low.units[0].source);
        if (cases[i].wb == 64 && cases[i].env == NULL &&
            compile(NULL, low.units[0].source, "spgemm_warp_brow_64", &c)) {
            SDT_CHECK(cubin_has(&c, low.units[0].name), "kernel %s missing", low.units[0].name);
            sdi_cubin_free(&c);
        }
        sdi_sg_lowered_free(&low);
    }
}

int main(void)
{
    sdt_init("test_spgemm_compile");
    SDT_RUN(test_units_dedup);
    SDT_RUN(test_warp_brow_switch);
    SDT_RUN(test_linked_units);
    SDT_RUN(test_units_shared);
    SDT_RUN(test_prep_and_scan);
    SDT_RUN(test_families_lowered);
    SDT_RUN(test_all_variants_256);
    SDT_RUN(test_all_variants_128);
    SDT_RUN(test_all_variants_512);
    return sdt_finish();
}
