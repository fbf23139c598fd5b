/* src/runtime/jit.h: NVRTC compilation of a template or a source into a CUBIN, and the
 * link of relocatable parts (nvJitLink). Needs no device. */
#ifndef SDI_JIT_H
#define SDI_JIT_H

#include "../core/core.h"

typedef struct {
    const char *name;
    const char *value; /* NULL: defined without a value */
} sdi_macro;

typedef struct {
    const char *template_name; /* an embedded template, or NULL when source is given */
    const char *source;        /* full CUDA source (used when template_name is NULL) */
    const sdi_macro *macros;   /* passed as -D options */
    int nmacros;
    const char *arch;        /* "sm_90"; NULL = the context's (or SD_NVRTC_ARCH_DEFAULT) */
    const char *kernel_name; /* named in messages */
    int fast; /* NVRTC --Ofast-compile: 0 = as SPARSEDITTO_NVRTC_FAST says, 1..3 = min / mid /
                 max, -1 = full optimisation whatever the environment says */
    int rdc;     /* 1: relocatable device code (-rdc=true), an object for linking */
    int maxrreg; /* > 0: --maxrregcount (a relocatable part sees no launch bounds) */
    /* Separate compilation: link = 1 makes the cubin link_source compiled relocatable and
     * linked (nvJitLink) with parts[0 .. nparts), each compiled relocatable (rdc, maxrreg)
     * through the memo and the JIT cache on its own, so a part is compiled once for every
     * kernel that calls it. `source` stays the identity: the key is the options, a link
     * mark and source, so a request with link = 1 and no link_source (seeding the memo from
     * the kernel cache) has the same key. */
    int link;
    const char *link_source;
    const char *const *parts;
    int nparts;
} sdi_jit_request;

#define SDI_JIT_MAX_PARTS 32

typedef struct {
    void *cubin;
    size_t size;
    char *log;         /* NVRTC log (may be empty); owned */
    double compile_ms; /* host wall time of nvrtcCompileProgram */
    sdi_hash128 key;   /* hash of (arch, options, source) */
    int from_cache;    /* 1: read from the JIT cache (nothing compiled, compile_ms 0) */
} sdi_cubin;

#define SDI_JIT_MAX_MACROS 64

/* Compiles for req->arch with NVRTC (-default-device, --std=c++17, embedded templates
 * as headers so templates #include each other) and returns the CUBIN. Needs no GPU.
 * SD_ERR_COMPILE carries the kernel name and the first lines of the log. */
SDI_HIDDEN sd_status sdi_jit_compile(const sdi_jit_request *req, sdi_cubin *out);
/* The request that compiles part i of a link request (relocatable, the link's register
 * cap): the one the link itself issues, so that a batch compiling parts ahead (the SpGEMM
 * precompile) fills the memo with the very keys the link looks up. */
SDI_HIDDEN void sdi_jit_part_request(const sdi_jit_request *link, int i, sdi_jit_request *out);
SDI_HIDDEN void sdi_cubin_free(sdi_cubin *c);
/* "major.minor" of the NVRTC in use. */
SDI_HIDDEN sd_status sdi_nvrtc_version(int *major, int *minor);

#endif /* SDI_JIT_H */
