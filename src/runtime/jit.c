/* src/runtime/jit.c: NVRTC compilation of templates (embedded src/kernels/\*.cuh) and
 * raw sources into CUBINs for an exact architecture, and the context's in-process memo
 * of compiled cubins keyed by (architecture, options, source). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvJitLink.h>
#include <nvrtc.h>

#include "../cache/cache.h"
#include "context.h"
#include "jit.h"
#include "memo.h"
#include "module.h"
#include "templates.h"

#ifndef SD_NVRTC_ARCH_DEFAULT
#define SD_NVRTC_ARCH_DEFAULT "sm_90"
#endif

/* ------------------------------------------------------------------ templates */

const char *sdi_kernel_template(const char *name, size_t *size)
{
    if (name == NULL)
        return NULL;
    for (const sdi_embedded_file *f = sdi_embedded_kernels; f->name != NULL; f++)
        if (strcmp(f->name, name) == 0) {
            if (size != NULL)
                *size = f->size;
            return f->text;
        }
    return NULL;
}

static int count_templates(void)
{
    int n = 0;
    for (const sdi_embedded_file *f = sdi_embedded_kernels; f->name != NULL; f++)
        n++;
    return n;
}

sd_status sdi_nvrtc_version(int *major, int *minor)
{
    nvrtcResult r = nvrtcVersion(major, minor);
    if (r != NVRTC_SUCCESS)
        return SDI_ERR(SD_ERR_COMPILE, "nvrtcVersion: %s", nvrtcGetErrorString(r));
    return SD_OK;
}

/* ------------------------------------------------------------------ request → text */

/* The options every compile gets, first: architecture, no host code, C++17, no NVRTC cache. */
#define JIT_FIXED_OPTS 4

/* The compile options and the source of a request, in one owned block. */
typedef struct {
    const char *opts[SDI_JIT_MAX_MACROS + JIT_FIXED_OPTS + 3]; /* + fast level, rdc, maxrreg */
    int nopts;
    char *storage;   /* option strings */
    char *source;    /* program text */
    char *key_text;  /* arch, options and source joined: the memo's full key */
    size_t key_len;
    char program_name[160];
    const char *label; /* kernel or template name for messages */
    const sdi_jit_request *req; /* the request (link: its dispatch source and parts) */
} jit_text;

static void jit_text_free(jit_text *t)
{
    sdi_free(t->storage);
    sdi_free(t->source);
    sdi_free(t->key_text);
    memset(t, 0, sizeof *t);
}

static bool valid_macro_name(const char *s)
{
    if (s == NULL || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

static bool valid_macro_value(const char *s)
{
    for (; s != NULL && *s; s++)
        if (*s == '\n' || *s == '\r')
            return false;
    return true;
}

static bool valid_arch(const char *a)
{
    /* sm_XY or sm_XYZ, optionally with an 'a' or 'f' suffix: a real architecture,
     * because a CUBIN (not PTX) is requested. */
    if (strncmp(a, "sm_", 3) != 0)
        return false;
    const char *p = a + 3;
    int digits = 0;
    while (isdigit((unsigned char)*p)) {
        p++;
        digits++;
    }
    if (*p == 'a' || *p == 'f')
        p++;
    return digits >= 2 && digits <= 3 && *p == '\0';
}

static const char *const fast_levels[] = {"min", "mid", "max"};

/* The --Ofast-compile level of req, NULL for full optimisation. SPARSEDITTO_NVRTC_FAST=min|
 * mid|max sets it for every request that does not say (less optimisation for a shorter
 * compile: on a 5-segment SpGEMM unit 0.95 s → 0.49 / 0.33 / 0.27 s, 2-core VM); opt-in:
 * at min the H200's quick-set kernels come out 3.8 % slower (`SPARSEDITTO_NVRTC_FAST=min
 * sparseditto bench --set quick` against the default). */
static sd_status fast_compile_level(const sdi_jit_request *req, const char **level)
{
    *level = NULL;
    int l = req->fast;
    if (l == 0)
        l = sdi_config_get()->nvrtc_fast;
    if (l < -1 || l > 3)
        return SDI_ERR(SD_ERR_INVALID_ARG, "fast-compile level %d (-1..3)", l);
    *level = l > 0 ? fast_levels[l - 1] : NULL;
    return SD_OK;
}

static sd_status jit_text_build(const sdi_jit_request *req, const char *arch, jit_text *t)
{
#define SD_FREE_ALL jit_text_free(t)
    memset(t, 0, sizeof *t);
    t->label = req->kernel_name ? req->kernel_name
                                : (req->template_name ? req->template_name : "source");
    t->req = req;
    if (req->link && (req->nparts < 0 || req->nparts > SDI_JIT_MAX_PARTS ||
                      (req->nparts > 0 && req->parts == NULL)))
        return SDI_ERR(SD_ERR_INVALID_ARG, "kernel '%s': %d parts to link (at most %d)", t->label,
                       req->nparts, SDI_JIT_MAX_PARTS);
    if (!valid_arch(arch))
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "kernel '%s': '%s' is not a real GPU architecture (sm_XY)", t->label,
                       arch);
    if (req->nmacros < 0 || req->nmacros > SDI_JIT_MAX_MACROS ||
        (req->nmacros > 0 && req->macros == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "kernel '%s': %d macros (at most %d)", t->label,
                       req->nmacros, SDI_JIT_MAX_MACROS);
    const char *fast = NULL;
    SD_TRY(fast_compile_level(req, &fast));
    /* Options: the fixed ones, the fast-compile level if any, then -DNAME[=VALUE]. The
     * options are part of the key, so each level has its own cubins. */
    size_t need = 192 + strlen(arch);
    for (int i = 0; i < req->nmacros; i++) {
        const sdi_macro *m = &req->macros[i];
        if (!valid_macro_name(m->name) || !valid_macro_value(m->value))
            return SDI_ERR(SD_ERR_INVALID_ARG, "kernel '%s': macro %d ('%s') is not a valid "
                           "NAME[=VALUE] (identifier, one line)", t->label, i,
                           m->name ? m->name : "(null)");
        need += strlen(m->name) + (m->value ? strlen(m->value) : 0) + 8;
    }
    t->storage = sdi_malloc(need);
    SD_CHECK_ALLOC(t->storage, "NVRTC options");
    char *w = t->storage;
    size_t left = need;
#define ADD_OPT(...)                                                                       \
    do {                                                                                   \
        int n_ = snprintf(w, left, __VA_ARGS__);                                           \
        t->opts[t->nopts++] = w;                                                           \
        w += n_ + 1;                                                                       \
        left -= (size_t)n_ + 1;                                                            \
    } while (0)
    ADD_OPT("--gpu-architecture=%s", arch);
    ADD_OPT("-default-device");
    ADD_OPT("--std=c++17");
    /* NVRTC 12.9+ keeps its own cache of compiled programs in the driver's compute cache (on
     * a machine with a driver): our JIT cache (jit_cache.c) already keeps every cubin across
     * processes, with its own key, checks and size cap, so NVRTC's would only hold a second
     * copy, and make "NVRTC" times in a search report cache hits as compiles (a run after
     * another on the same machine finds most units there). */
    ADD_OPT("--no-cache");
    if (fast != NULL)
        ADD_OPT("--Ofast-compile=%s", fast);
    /* A link request's own options stop here: rdc and maxrreg are its parts' (the register
     * cap follows from the launch bounds in source, its identity), so the kernel cache's
     * seeding, which knows neither, builds the same key. */
    if (req->rdc && !req->link)
        ADD_OPT("-rdc=true");
    if (req->maxrreg > 0 && !req->link)
        ADD_OPT("--maxrregcount=%d", req->maxrreg);
    for (int i = 0; i < req->nmacros; i++) {
        const sdi_macro *m = &req->macros[i];
        if (m->value != NULL)
            ADD_OPT("-D%s=%s", m->name, m->value);
        else
            ADD_OPT("-D%s", m->name);
    }
#undef ADD_OPT
    /* Source: a template is included by name, so that NVRTC's messages name its file. */
    if (req->template_name != NULL) {
        if (sdi_kernel_template(req->template_name, NULL) == NULL)
            return SDI_ERR(SD_ERR_INVALID_ARG, "kernel '%s': no embedded template named '%s'",
                           t->label, req->template_name);
        size_t n = strlen(req->template_name) + 32;
        t->source = sdi_malloc(n);
        SD_CHECK_ALLOC(t->source, "NVRTC source");
        snprintf(t->source, n, "#include \"%s\"\n", req->template_name);
    } else {
        if (req->source == NULL)
            return SDI_ERR(SD_ERR_INVALID_ARG, "kernel '%s': neither a template nor a source",
                           t->label);
        size_t n = strlen(req->source) + 1;
        t->source = sdi_malloc(n);
        SD_CHECK_ALLOC(t->source, "NVRTC source");
        memcpy(t->source, req->source, n);
    }
    snprintf(t->program_name, sizeof t->program_name, "%s.cu", t->label);
    /* Full key: options, the link mark (a linked kernel), then source, NUL-separated
     * (exact comparison on memo hits). The knobs that change what is compiled reach it
     * through these: SPARSEDITTO_NVRTC_FAST and _SEARCH_FAST as --Ofast-compile,
     * _SG_WARP_BROW as a define in the source, _SG_LINK as the link mark and the parts'
     * own keys, _TC as the choice of template. */
    static const char link_mark[] = "(linked from relocatable parts)";
    size_t klen = strlen(t->source) + 1 + (req->link ? sizeof link_mark : 0);
    for (int i = 0; i < t->nopts; i++)
        klen += strlen(t->opts[i]) + 1;
    t->key_text = sdi_malloc(klen);
    SD_CHECK_ALLOC(t->key_text, "JIT key");
    char *k = t->key_text;
    for (int i = 0; i < t->nopts; i++) {
        size_t n = strlen(t->opts[i]) + 1;
        memcpy(k, t->opts[i], n);
        k += n;
    }
    if (req->link) {
        memcpy(k, link_mark, sizeof link_mark);
        k += sizeof link_mark;
    }
    memcpy(k, t->source, strlen(t->source) + 1);
    t->key_len = klen;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ compilation */

/* The first lines of an NVRTC log on one line (" | " between lines), at most cap-1 chars. */
static void log_head(const char *log, char *out, size_t cap, int max_lines)
{
    size_t o = 0;
    int lines = 0;
    out[0] = '\0';
    if (log == NULL)
        return;
    for (const char *p = log; *p && o + 4 < cap && lines < max_lines; p++) {
        if (*p == '\n') {
            lines++;
            while (p[1] == '\n')
                p++;
            if (p[1] != '\0' && lines < max_lines && o + 4 < cap) {
                memcpy(out + o, " | ", 3);
                o += 3;
            }
            continue;
        }
        if (*p != '\r')
            out[o++] = *p;
    }
    out[o] = '\0';
}

static sd_status compile_text(const jit_text *t, const char *arch, sdi_cubin *out)
{
    nvrtcProgram prog = NULL;
    const char **hdr_text = NULL, **hdr_name = NULL;
    char *log = NULL;
    void *cubin = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        if (prog != NULL)                                                                  \
            nvrtcDestroyProgram(&prog);                                                    \
        sdi_free(hdr_text);                                                                \
        sdi_free(hdr_name);                                                                \
        sdi_free(log);                                                                     \
        sdi_free(cubin);                                                                   \
    } while (0)
    int nh = count_templates();
    hdr_text = sdi_malloc_array((size_t)nh + 1, sizeof *hdr_text);
    hdr_name = sdi_malloc_array((size_t)nh + 1, sizeof *hdr_name);
    SD_CHECK_ALLOC(hdr_text, "NVRTC headers");
    SD_CHECK_ALLOC(hdr_name, "NVRTC headers");
    for (int i = 0; i < nh; i++) {
        hdr_text[i] = sdi_embedded_kernels[i].text;
        hdr_name[i] = sdi_embedded_kernels[i].name;
    }
    nvrtcResult r = nvrtcCreateProgram(&prog, t->source, t->program_name, nh, hdr_text, hdr_name);
    if (r != NVRTC_SUCCESS) {
        prog = NULL;
        SD_FREE_ALL;
        return SDI_ERR(r == NVRTC_ERROR_OUT_OF_MEMORY ? SD_ERR_OUT_OF_MEMORY : SD_ERR_COMPILE,
                       "kernel '%s': nvrtcCreateProgram: %s", t->label, nvrtcGetErrorString(r));
    }
    double t0 = sdi_now();
    nvrtcResult rc = nvrtcCompileProgram(prog, t->nopts, t->opts);
    double compile_ms = (sdi_now() - t0) * 1e3;
    size_t log_size = 0;
    if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 0) {
        log = sdi_malloc(log_size + 1);
        SD_CHECK_ALLOC(log, "NVRTC log");
        if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
            log[0] = '\0';
        log[log_size] = '\0';
    }
    if (rc != NVRTC_SUCCESS) {
        char head[1200];
        log_head(log, head, sizeof head, 12);
        char defs[256] = "";
        size_t o = 0;
        for (int i = JIT_FIXED_OPTS; i < t->nopts && o + 2 < sizeof defs; i++)
            o += (size_t)snprintf(defs + o, sizeof defs - o, " %s", t->opts[i]);
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_COMPILE, "NVRTC could not compile kernel '%s' (%s,%s): %s: %s",
                       t->label, arch, defs[0] ? defs : " no macros", nvrtcGetErrorString(rc),
                       head[0] ? head : "(empty log)");
    }
    size_t size = 0;
    r = nvrtcGetCUBINSize(prog, &size);
    if (r != NVRTC_SUCCESS || size == 0) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_COMPILE, "kernel '%s': no CUBIN for %s (%s)", t->label, arch,
                       r != NVRTC_SUCCESS ? nvrtcGetErrorString(r) : "size 0");
    }
    cubin = sdi_malloc(size);
    SD_CHECK_ALLOC(cubin, "CUBIN");
    r = nvrtcGetCUBIN(prog, cubin);
    if (r != NVRTC_SUCCESS) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_COMPILE, "kernel '%s': nvrtcGetCUBIN: %s", t->label,
                       nvrtcGetErrorString(r));
    }
    nvrtcDestroyProgram(&prog);
    prog = NULL;
    memset(out, 0, sizeof *out);
    out->cubin = cubin;
    out->size = size;
    out->log = log;
    out->compile_ms = compile_ms;
    out->key = sdi_hash_bytes(t->key_text, t->key_len, 0);
    /* Where compile time goes, unit by unit (SPARSEDITTO_VERBOSE=2). */
    sdi_log(2, "NVRTC %s: %.0f ms, %zu-byte cubin", t->label, compile_ms, size);
    sdi_free(hdr_text);
    sdi_free(hdr_name);
    return SD_OK;
#undef SD_FREE_ALL
}

/* nvJitLink's error log, first lines, for a message. */
static void link_log(nvJitLinkHandle h, char *out, size_t cap)
{
    out[0] = '\0';
    size_t n = 0;
    if (h == NULL || nvJitLinkGetErrorLogSize(h, &n) != NVJITLINK_SUCCESS || n == 0)
        return;
    char *log = sdi_malloc(n + 1);
    if (log == NULL)
        return;
    if (nvJitLinkGetErrorLog(h, log) == NVJITLINK_SUCCESS) {
        log[n] = '\0';
        log_head(log, out, cap, 8);
    }
    sdi_free(log);
}

/* A link request (req->link): each part compiled relocatable (through ctx's memo and the
 * JIT cache when ctx is given, else through the cache alone), the dispatch source compiled
 * relocatable, then all of them linked by nvJitLink into one cubin. compile_ms counts the
 * parts compiled here (not those found), the dispatch and the link. */
static sd_status link_text(const jit_text *t, const char *arch, sd_context *ctx, sdi_cubin *out)
{
    const sdi_jit_request *req = t->req;
    if (req->link_source == NULL)
        return SDI_ERR(SD_ERR_INTERNAL, "kernel '%s': a link request without its dispatch source",
                       t->label);
    sdi_cubin own[SDI_JIT_MAX_PARTS + 1];
    const void *data[SDI_JIT_MAX_PARTS + 1];
    size_t size[SDI_JIT_MAX_PARTS + 1];
    memset(own, 0, sizeof own);
    nvJitLinkHandle h = NULL;
    double ms = 0;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        for (int i_ = 0; i_ <= SDI_JIT_MAX_PARTS; i_++)                                    \
            sdi_cubin_free(&own[i_]);                                                      \
        if (h != NULL)                                                                     \
            nvJitLinkDestroy(&h);                                                          \
    } while (0)
    const int np = req->nparts;
    for (int i = 0; i <= np; i++) {
        sdi_jit_request pr;
        if (i < np) {
            sdi_jit_part_request(req, i, &pr);
        } else { /* the dispatch: relocatable too, with its own launch bounds */
            memset(&pr, 0, sizeof pr);
            pr.source = req->link_source;
            pr.kernel_name = req->kernel_name;
            pr.fast = req->fast;
            pr.rdc = 1;
        }
        pr.kernel_name = t->label;
        pr.arch = arch;
        sd_status s;
        if (ctx != NULL && i < np) {
            const sdi_cubin *cb = NULL;
            bool hit = false;
            s = sdi_jit_get(ctx, &pr, &cb, &hit);
            if (s == SD_OK) {
                data[i] = cb->cubin;
                size[i] = cb->size;
                ms += hit ? 0 : cb->compile_ms;
            }
        } else {
            s = sdi_jit_compile(&pr, &own[i]);
            if (s == SD_OK) {
                data[i] = own[i].cubin;
                size[i] = own[i].size;
                ms += own[i].compile_ms;
            }
        }
        if (s != SD_OK) {
            SD_FREE_ALL;
            sdi_error_prefix("linking %s", i < np ? "a relocatable part" : "the dispatch");
            return s;
        }
    }
    const double t0 = sdi_now();
    char archopt[32];
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    const char *lopts[1] = {archopt};
    char head[600];
    nvJitLinkResult r = nvJitLinkCreate(&h, 1, lopts);
    if (r != NVJITLINK_SUCCESS) {
        h = NULL;
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_COMPILE, "kernel '%s': nvJitLinkCreate failed (%d)", t->label, (int)r);
    }
    for (int i = 0; i <= np && r == NVJITLINK_SUCCESS; i++)
        r = nvJitLinkAddData(h, NVJITLINK_INPUT_CUBIN, data[i], size[i], i < np ? "part" : "dispatch");
    if (r == NVJITLINK_SUCCESS)
        r = nvJitLinkComplete(h);
    size_t n = 0;
    if (r == NVJITLINK_SUCCESS)
        r = nvJitLinkGetLinkedCubinSize(h, &n);
    void *cubin = r == NVJITLINK_SUCCESS && n > 0 ? sdi_malloc(n) : NULL;
    if (cubin != NULL)
        r = nvJitLinkGetLinkedCubin(h, cubin);
    if (r != NVJITLINK_SUCCESS || cubin == NULL) {
        link_log(h, head, sizeof head);
        sdi_free(cubin);
        SD_FREE_ALL;
        if (r == NVJITLINK_SUCCESS)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "kernel '%s': out of host memory for the linked cubin",
                           t->label);
        return SDI_ERR(SD_ERR_COMPILE, "kernel '%s': nvJitLink failed (%d): %s", t->label, (int)r,
                       head[0] ? head : "(empty log)");
    }
    memset(out, 0, sizeof *out);
    out->cubin = cubin;
    out->size = n;
    out->compile_ms = ms + (sdi_now() - t0) * 1e3;
    out->key = sdi_hash_bytes(t->key_text, t->key_len, 0);
    sdi_log(2, "link %s: %d parts, %.0f ms in all, %zu-byte cubin", t->label, np, out->compile_ms, n);
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

static uint64_t g_templates_hash;
static pthread_once_t g_templates_once = PTHREAD_ONCE_INIT;

static void templates_hash_compute(void)
{
    sdi_hash128 h = {0, 0};
    for (const sdi_embedded_file *f = sdi_embedded_kernels; f->name != NULL; f++) {
        h = sdi_hash_bytes(f->name, strlen(f->name), h.lo ^ h.hi);
        h = sdi_hash_bytes(f->text, f->size, h.lo ^ h.hi);
    }
    g_templates_hash = h.lo ^ (h.hi * 0x9e3779b97f4a7c15ull);
}

uint64_t sdi_kernel_templates_hash(void)
{
    pthread_once(&g_templates_once, templates_hash_compute);
    return g_templates_hash;
}

/* What the JIT key text leaves out but the cubin depends on: the embedded templates
 * (#included by name) and NVRTC's version. Computed once. */
static uint64_t g_jit_salt;
static pthread_once_t g_jit_salt_once = PTHREAD_ONCE_INIT;

static void jit_salt_compute(void)
{
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        major = minor = -1;
    g_jit_salt = sdi_kernel_templates_hash() ^ ((uint64_t)(uint32_t)major << 32) ^ (uint32_t)minor;
}

static uint64_t jit_salt(void)
{
    pthread_once(&g_jit_salt_once, jit_salt_compute);
    return g_jit_salt;
}

/* The on-disk JIT cache under dir (cache.h), else NVRTC (storing what it compiles).
 * *from_disk tells which. dir NULL or "": NVRTC only. */
static sd_status compile_or_load(const jit_text *t, const char *arch, sd_context *ctx, const char *dir,
                                 sdi_cubin *out, bool *from_disk)
{
    *from_disk = false;
    const bool disk = dir != NULL && dir[0] && sdi_config_get()->jit_cache;
    if (disk) {
        void *stored = NULL;
        size_t size = 0;
        sd_status s = sdi_jit_cache_load(dir, t->key_text, t->key_len, jit_salt(), &stored, &size);
        if (s != SD_OK)
            return s;
        if (stored != NULL) {
            memset(out, 0, sizeof *out);
            out->cubin = stored;
            out->size = size;
            out->key = sdi_hash_bytes(t->key_text, t->key_len, 0);
            out->from_cache = 1;
            *from_disk = true;
            return SD_OK;
        }
    }
    sd_status s = t->req->link ? link_text(t, arch, ctx, out) : compile_text(t, arch, out);
    if (s == SD_OK && disk &&
        sdi_jit_cache_store(dir, t->key_text, t->key_len, jit_salt(), out->cubin, out->size) != SD_OK) {
        sdi_log(1, "%s (the kernel is compiled; only the JIT cache missed it)", sd_last_error());
        sdi_error_clear();
    }
    return s;
}

void sdi_jit_part_request(const sdi_jit_request *link, int i, sdi_jit_request *out)
{
    memset(out, 0, sizeof *out);
    out->source = link->parts[i];
    out->kernel_name = link->kernel_name;
    out->arch = link->arch;
    out->fast = link->fast;
    out->rdc = 1;
    out->maxrreg = link->maxrreg;
}

sd_status sdi_jit_compile(const sdi_jit_request *req, sdi_cubin *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_jit_compile: out is NULL");
    memset(out, 0, sizeof *out);
    if (req == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_jit_compile: request is NULL");
    const char *arch = req->arch ? req->arch : SD_NVRTC_ARCH_DEFAULT;
    jit_text t;
    sd_status s = jit_text_build(req, arch, &t);
    if (s == SD_OK && sdi_config_get()->jit_cache) {
        /* No context (the offline pipeline): the default cache directory. */
        char *dir = sdi_cache_base_dir(NULL);
        bool from_disk = false;
        s = dir != NULL ? compile_or_load(&t, arch, NULL, dir, out, &from_disk)
                        : SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory resolving the cache directory");
        sdi_free(dir);
    } else if (s == SD_OK) {
        s = req->link ? link_text(&t, arch, NULL, out) : compile_text(&t, arch, out);
    }
    jit_text_free(&t);
    return s;
}

/* ------------------------------------------------------------------ memo */
static sdi_memo_entry *memo_find(sdi_memo_entry *head, sdi_hash128 h, const char *key,
                                 size_t len)
{
    for (sdi_memo_entry *e = head; e != NULL; e = e->next)
        if (e->hash.lo == h.lo && e->hash.hi == h.hi && e->key_len == len &&
            memcmp(e->key_text, key, len) == 0)
            return e;
    return NULL;
}

sd_status sdi_jit_get(sd_context *ctx, const sdi_jit_request *req, const sdi_cubin **out,
                      bool *hit)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_jit_get: out is NULL");
    *out = NULL;
    if (hit != NULL)
        *hit = false;
    if (ctx == NULL || ctx->magic != SDI_CONTEXT_MAGIC || req == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_jit_get: bad context or request");
    const char *arch = req->arch ? req->arch : ctx->arch;
    jit_text t;
    sdi_memo_entry *fresh = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        jit_text_free(&t);                                                                 \
        sdi_memo_entry_free(fresh);                                                            \
    } while (0)
    sd_status s = jit_text_build(req, arch, &t);
    if (s != SD_OK) {
        jit_text_free(&t);
        return s;
    }
    sdi_hash128 h = sdi_hash_bytes(t.key_text, t.key_len, 0);
    pthread_mutex_lock(&ctx->memo_lock);
    sdi_memo_entry *e = memo_find(ctx->memo, h, t.key_text, t.key_len);
    pthread_mutex_unlock(&ctx->memo_lock);
    if (e != NULL) {
        *out = &e->cubin;
        if (hit != NULL)
            *hit = true;
        jit_text_free(&t);
        return SD_OK;
    }
    /* Miss: the on-disk JIT cache, else compile without holding the lock (other kernels
     * may compile meanwhile); then re-check: a concurrent caller may have stored the same
     * key first. */
    fresh = sdi_calloc(1, sizeof *fresh);
    SD_CHECK_ALLOC(fresh, "JIT memo entry");
    bool from_disk = false;
    SD_TRY(compile_or_load(&t, arch, ctx, ctx->cache_dir, &fresh->cubin, &from_disk));
    if (from_disk && hit != NULL)
        *hit = true;
    fresh->hash = h;
    fresh->key_text = t.key_text;
    fresh->key_len = t.key_len;
    t.key_text = NULL; /* now owned by the entry */
    pthread_mutex_lock(&ctx->memo_lock);
    e = memo_find(ctx->memo, h, fresh->key_text, fresh->key_len);
    if (e == NULL) {
        fresh->next = ctx->memo;
        ctx->memo = fresh;
        e = fresh;
        fresh = NULL;
    }
    pthread_mutex_unlock(&ctx->memo_lock);
    *out = &e->cubin;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_jit_memo_put(sd_context *ctx, const sdi_jit_request *req, const void *cubin,
                           size_t size)
{
    if (ctx == NULL || ctx->magic != SDI_CONTEXT_MAGIC || req == NULL || cubin == NULL || size == 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_jit_memo_put: bad context, request or cubin");
    const char *arch = req->arch ? req->arch : ctx->arch;
    jit_text t;
    sdi_memo_entry *fresh = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        jit_text_free(&t);                                                                 \
        sdi_memo_entry_free(fresh);                                                            \
    } while (0)
    sd_status s = jit_text_build(req, arch, &t);
    if (s != SD_OK) {
        jit_text_free(&t);
        return s;
    }
    fresh = sdi_calloc(1, sizeof *fresh);
    SD_CHECK_ALLOC(fresh, "JIT memo entry");
    fresh->cubin.cubin = sdi_malloc(size);
    SD_CHECK_ALLOC(fresh->cubin.cubin, "a cached cubin");
    memcpy(fresh->cubin.cubin, cubin, size);
    fresh->cubin.size = size;
    fresh->hash = sdi_hash_bytes(t.key_text, t.key_len, 0);
    fresh->cubin.key = fresh->hash;
    fresh->key_text = t.key_text;
    fresh->key_len = t.key_len;
    t.key_text = NULL;
    pthread_mutex_lock(&ctx->memo_lock);
    if (memo_find(ctx->memo, fresh->hash, fresh->key_text, fresh->key_len) == NULL) {
        fresh->next = ctx->memo;
        ctx->memo = fresh;
        fresh = NULL;
    }
    pthread_mutex_unlock(&ctx->memo_lock);
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ compile and load (module.h) */
sd_status sdi_module_build(sd_context *ctx, const sdi_jit_request *req, const char *kernel,
                           sdi_module *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_module_build: out is NULL");
    memset(out, 0, sizeof *out);
    sd_status s = sdi_ctx_enter(ctx);
    if (s != SD_OK)
        return s;
    const sdi_cubin *c = NULL;
    s = sdi_jit_get(ctx, req, &c, NULL);
    if (s != SD_OK)
        return s;
    const char *names[1] = {kernel};
    return sdi_module_load(ctx, c->cubin, c->size, names, 1, out);
}
