/* bench/bench_stream.c: how much of the measured copy bandwidth SpMV-shaped traffic reaches
 * on this GPU: the denominator of the CSR streaming limit (docs/ARCHITECTURE.md
 * "Benchmarks, roofline and aggregates": the SpMV's compulsory bytes over the best
 * device-to-device copy bandwidth). Our kernels and cuSPARSE's reach 45-79 % of that limit
 * on every paper-60 twin whose working set is over 4x L2 (H200, roofline column of
 * `sparseditto bench --set paper60 --ops spmv`); this program separates the causes with
 * kernels that read what an SpMV reads and nothing else:
 *
 *   read      one array of `bytes` (float4 loads, U in flight per thread), summed
 *   read2     column indices and values as two arrays (int4 + float4), summed
 *   ell       y = A·x on a column-major ELL matrix (rows x width, thread per row) whose
 *             columns follow a pattern: `row` (every entry of row r at column r: x is a
 *             stream), `band:B` (uniform within r ± B), `random` (uniform over all columns),
 *             `twin local=P` (as the paper-60 twins: a share P within r ± 2·width, the rest
 *             uniform);
 *             U slots in flight per thread, optionally software-pipelined (the next U
 *             slots loaded before this U's x gathers) or with evict-first matrix loads.
 *
 *   bench_stream --out DIR [--rows N] [--width W]
 *
 * Defaults: rows 1,504,924, width 35 (the af_shell10 twin's shape: 52.7 M entries, 440 MB
 * of SpMV traffic, 7x the H200's L2). Each probe: 2 warm-ups, then 10 event-timed runs
 * (mean and best); bandwidth = compulsory bytes / time, also as a share of the copy
 * bandwidth the runtime measures at context creation. Writes DIR/bench_stream.{json,md}.
 * Exit 0, 1 on a CUDA or library error, 2 on usage, 3 without a device. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/runtime.h"

#define MAX_ROWS 64

static const char probe_source[] =
    "__device__ __forceinline__ unsigned bs_hash(unsigned long long e)\n"
    "{ e ^= e >> 33; e *= 0xff51afd7ed558ccdULL; e ^= e >> 33; e *= 0xc4ceb9fe1a85ec53ULL;\n"
    "  e ^= e >> 33; return (unsigned)e; }\n"
    /* slot e = j * rows + r; pattern 0: column r, 1: r ± band, 2: uniform, 3: as the
     * paper-60 twins (src/gen/twin.c): a share band/1000 within r ± 2·width, the rest
     * uniform */
    "extern \"C\" __global__ void bs_fill(int *cols, float *vals, long long n, int rows,\n"
    "                                     int pattern, int band, int width)\n"
    "{ for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;\n"
    "       e += (long long)gridDim.x * blockDim.x) {\n"
    "    const int r = (int)(e % rows); const unsigned h = bs_hash(e);\n"
    "    int c = r;\n"
    "    if (pattern == 1) { c = r + (int)(h % (2u * band + 1u)) - band;\n"
    "                        c = c < 0 ? -c : (c >= rows ? 2 * rows - 2 - c : c); }\n"
    "    else if (pattern == 2) c = (int)(h % (unsigned)rows);\n"
    "    else if (pattern == 3) { const unsigned h2 = bs_hash(e ^ 0x9e3779b97f4a7c15ULL);\n"
    "      if (h2 % 1000u < (unsigned)band) { c = r + (int)(h % (unsigned)(4 * width)) - 2 * width;\n"
    "        c = c < 0 ? -c : (c >= rows ? 2 * rows - 2 - c : c); }\n"
    "      else c = (int)(h % (unsigned)rows); }\n"
    "    cols[e] = c; vals[e] = 1.0f + (float)(h & 7u) * 0.125f; } }\n"
    "template <int U> __device__ void bs_read(const float4 *__restrict__ a, long long n4,\n"
    "                                         float *sink)\n"
    "{ const long long step = (long long)gridDim.x * blockDim.x * U;\n"
    "  float s = 0.0f;\n"
    "  for (long long i = blockIdx.x * (long long)blockDim.x * U + threadIdx.x; i < n4;\n"
    "       i += step) {\n"
    "    float4 v[U];\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < U; u++) { const long long j = i + (long long)u * blockDim.x;\n"
    "      v[u] = j < n4 ? __ldg(a + j) : make_float4(0.f, 0.f, 0.f, 0.f); }\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < U; u++) s += v[u].x + v[u].y + v[u].z + v[u].w; }\n"
    "  if (s == -1.0f) sink[0] = s; }\n"
    "extern \"C\" __global__ void bs_read_u1(const float4 *a, long long n4, float *s)\n"
    "{ bs_read<1>(a, n4, s); }\n"
    "extern \"C\" __global__ void bs_read_u4(const float4 *a, long long n4, float *s)\n"
    "{ bs_read<4>(a, n4, s); }\n"
    "extern \"C\" __global__ void bs_read_u8(const float4 *a, long long n4, float *s)\n"
    "{ bs_read<8>(a, n4, s); }\n"
    "extern \"C\" __global__ void bs_read2(const int4 *__restrict__ c,\n"
    "                                      const float4 *__restrict__ v, long long n4, float *sink)\n"
    "{ const long long step = (long long)gridDim.x * blockDim.x * 4;\n"
    "  float s = 0.0f;\n"
    "  for (long long i = blockIdx.x * (long long)blockDim.x * 4 + threadIdx.x; i < n4;\n"
    "       i += step) {\n"
    "    int4 ci[4]; float4 vi[4];\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < 4; u++) { const long long j = i + (long long)u * blockDim.x;\n"
    "      ci[u] = j < n4 ? __ldg(c + j) : make_int4(0, 0, 0, 0);\n"
    "      vi[u] = j < n4 ? __ldg(v + j) : make_float4(0.f, 0.f, 0.f, 0.f); }\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < 4; u++)\n"
    "      s += vi[u].x * ci[u].x + vi[u].y * ci[u].y + vi[u].z * ci[u].z + vi[u].w * ci[u].w; }\n"
    "  if (s == -1.0f) sink[0] = s; }\n"
    /* ELL, thread per row. PIPE: slots j0+U.. loaded before slots j0.. are gathered. */
    "template <typename T> __device__ __forceinline__ T bs_ldm(const T *p, int cs)\n"
    "{ return cs ? __ldcs(p) : __ldg(p); }\n"
    "template <int U, int PIPE, int CS>\n"
    "__device__ void bs_ell(const int *__restrict__ cols, const float *__restrict__ vals,\n"
    "                       const float *__restrict__ x, float *__restrict__ y, int rows,\n"
    "                       int width)\n"
    "{ const int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (r >= rows) return;\n"
    "  float s = 0.0f; int c[U]; float v[U];\n"
    "#pragma unroll\n"
    "  for (int u = 0; u < U; u++) { const bool in = u < width;\n"
    "    c[u] = in ? bs_ldm(cols + (long long)u * rows + r, CS) : r;\n"
    "    v[u] = in ? bs_ldm(vals + (long long)u * rows + r, CS) : 0.0f; }\n"
    "  for (int j0 = 0; j0 < width; j0 += U) {\n"
    "    int cn[U]; float vn[U];\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < U; u++) { const int j = j0 + U + u; const bool in = PIPE && j < width;\n"
    "      cn[u] = in ? bs_ldm(cols + (long long)j * rows + r, CS) : r;\n"
    "      vn[u] = in ? bs_ldm(vals + (long long)j * rows + r, CS) : 0.0f; }\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < U; u++) s += v[u] * __ldg(x + c[u]);\n"
    "    if (!PIPE) {\n"
    "#pragma unroll\n"
    "      for (int u = 0; u < U; u++) { const int j = j0 + U + u; const bool in = j < width;\n"
    "        cn[u] = in ? bs_ldm(cols + (long long)j * rows + r, CS) : r;\n"
    "        vn[u] = in ? bs_ldm(vals + (long long)j * rows + r, CS) : 0.0f; }\n"
    "    }\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < U; u++) { c[u] = cn[u]; v[u] = vn[u]; } }\n"
    "  y[r] = s; }\n"
    "#define BS_ELL(name, U, P, CS) extern \"C\" __global__ void name(const int *c, const float *v,"
    " const float *x, float *y, int rows, int width) { bs_ell<U, P, CS>(c, v, x, y, rows, width); }\n"
    "BS_ELL(bs_ell_u4, 4, 0, 0)\n"
    "BS_ELL(bs_ell_u8, 8, 0, 0)\n"
    "BS_ELL(bs_ell_u4_pipe, 4, 1, 0)\n"
    "BS_ELL(bs_ell_u8_pipe, 8, 1, 0)\n"
    "BS_ELL(bs_ell_u4_cs, 4, 0, 1)\n";

static const char *const kernel_names[] = {"bs_fill",   "bs_read_u1",     "bs_read_u4",
                                           "bs_read_u8", "bs_read2",       "bs_ell_u4",
                                           "bs_ell_u8", "bs_ell_u4_pipe", "bs_ell_u8_pipe",
                                           "bs_ell_u4_cs"};
enum { K_FILL, K_READ1, K_READ4, K_READ8, K_READ2, K_ELL4, K_ELL8, K_ELL4P, K_ELL8P, K_ELL4CS,
       K_COUNT };

typedef struct {
    char name[64];
    double bytes, mean_us, best_us;
} row;

static row rows_out[MAX_ROWS];
static int nrows;

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "bench_stream: %s: %s\n", what, cudaGetErrorString(e));
    return -1;
}

/* 2 warm-ups, 10 event-timed launches of `k` (mean and best). */
static int probe(const char *name, double bytes, cudaKernel_t k, unsigned grid, unsigned block,
                 void **params, cudaStream_t st)
{
    if (nrows == MAX_ROWS)
        return -1;
    cudaEvent_t a = NULL, b = NULL;
    int rc = cuda_ok(cudaEventCreate(&a), "cudaEventCreate") ||
             cuda_ok(cudaEventCreate(&b), "cudaEventCreate");
    dim3 g = {grid, 1, 1}, bl = {block, 1, 1};
    for (int i = 0; i < 2 && rc == 0; i++)
        rc = cuda_ok(cudaLaunchKernel((const void *)k, g, bl, params, 0, st), name);
    double sum = 0, best = 0;
    for (int i = 0; i < 10 && rc == 0; i++) {
        float ms = 0;
        rc = cuda_ok(cudaEventRecord(a, st), "record") ||
             cuda_ok(cudaLaunchKernel((const void *)k, g, bl, params, 0, st), name) ||
             cuda_ok(cudaEventRecord(b, st), "record") ||
             cuda_ok(cudaEventSynchronize(b), "sync") ||
             cuda_ok(cudaEventElapsedTime(&ms, a, b), "elapsed");
        sum += ms * 1e3;
        if (best == 0 || ms * 1e3 < best)
            best = ms * 1e3;
    }
    if (a != NULL)
        cudaEventDestroy(a);
    if (b != NULL)
        cudaEventDestroy(b);
    if (rc != 0)
        return -1;
    row *r = &rows_out[nrows++];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->bytes = bytes;
    r->mean_us = sum / 10;
    r->best_us = best;
    fprintf(stderr, "%-32s %9.2f us (best %9.2f)  %7.1f GB/s\n", name, r->mean_us, best,
            bytes / (r->mean_us * 1e3));
    return 0;
}

static int write_results(const char *dir, const sd_context *ctx, int rows, int width)
{
    const double bw = ctx->copy_bw;
    char path[1024];
    snprintf(path, sizeof path, "%s/bench_stream.json", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_stream: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\"gpu\": \"%s\", \"copy_bw_gbs\": %.1f, \"rows\": %d, \"width\": %d, \"probes\": [\n",
            ctx->props.name, bw * 1e-9, rows, width);
    for (int i = 0; i < nrows; i++) {
        const row *r = &rows_out[i];
        fprintf(f,
                "  {\"name\": \"%s\", \"bytes\": %.0f, \"mean_us\": %.3f, \"best_us\": %.3f, "
                "\"gbs\": %.1f, \"share_of_copy\": %.4f}%s\n",
                r->name, r->bytes, r->mean_us, r->best_us, r->bytes / (r->mean_us * 1e3),
                r->bytes / (r->mean_us * 1e-6) / bw, i + 1 < nrows ? "," : "");
    }
    fprintf(f, "]}\n");
    fclose(f);
    snprintf(path, sizeof path, "%s/bench_stream.md", dir);
    f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_stream: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f,
            "# SpMV-shaped traffic against the copy bandwidth (%s)\n\n"
            "ELL matrix %d rows x %d slots (%.1f M entries); copy bandwidth %.0f GB/s (best "
            "device-to-device copy, read + written). Bandwidth = compulsory bytes / mean of 10 "
            "event-timed launches.\n\n"
            "| probe | MB | mean (us) | best (us) | GB/s | share of copy |\n"
            "|---|---:|---:|---:|---:|---:|\n",
            ctx->props.name, rows, width, (double)rows * width * 1e-6, bw * 1e-9);
    for (int i = 0; i < nrows; i++) {
        const row *r = &rows_out[i];
        fprintf(f, "| %s | %.1f | %.2f | %.2f | %.0f | %.0f %% |\n", r->name, r->bytes * 1e-6,
                r->mean_us, r->best_us, r->bytes / (r->mean_us * 1e3),
                100.0 * r->bytes / (r->mean_us * 1e-6) / bw);
    }
    fclose(f);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_stream --out DIR [--rows N] [--width W]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    long rows_l = 1504924, width_l = 35;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
            rows_l = strtol(argv[++i], &end, 10);
            if (*end != '\0')
                return usage();
        } else if (strcmp(argv[i], "--width") == 0 && i + 1 < argc) {
            width_l = strtol(argv[++i], &end, 10);
            if (*end != '\0')
                return usage();
        } else
            return usage();
    }
    if (out == NULL || rows_l < 1024 || rows_l > (1L << 30) || width_l < 1 || width_l > 4096 ||
        (double)rows_l * width_l > 4e9) {
        fprintf(stderr, "bench_stream: --rows in [1024, 2^30], --width in [1, 4096], "
                        "rows x width at most 4e9\n");
        return usage();
    }
    const int rows = (int)rows_l, width = (int)width_l;
    const long long n = (long long)rows * width;
    if (mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_stream: cannot create %s: %s\n", out, strerror(errno));
        return 1;
    }
    sd_context *ctx = NULL;
    sd_status s = sd_context_create(NULL, &ctx);
    if (s != SD_OK) {
        fprintf(stderr, "bench_stream: %s\n", sd_last_error());
        return s == SD_ERR_NO_DEVICE ? 3 : 1;
    }
    s = sdi_device_calibrate(ctx); /* the copy bandwidth, measured lazily */
    if (s != SD_OK) {
        fprintf(stderr, "bench_stream: %s\n", sd_last_error());
        sd_context_destroy(ctx);
        return 1;
    }
    int rc = 0;
    sdi_cubin cubin;
    sdi_module m;
    memset(&cubin, 0, sizeof cubin);
    memset(&m, 0, sizeof m);
    sdi_jit_request req = {.source = probe_source, .kernel_name = "bench_stream"};
    req.arch = ctx->arch;
    req.fast = -1;
    if (sdi_jit_compile(&req, &cubin) != SD_OK ||
        sdi_module_load(ctx, cubin.cubin, cubin.size, kernel_names, K_COUNT, &m) != SD_OK) {
        fprintf(stderr, "bench_stream: %s\n", sd_last_error());
        sdi_cubin_free(&cubin);
        sd_context_destroy(ctx);
        return 1;
    }
    /* n padded to a multiple of 4 so the read probes see whole vectors */
    const long long n4 = (n + 3) / 4;
    int *cols = NULL;
    float *vals = NULL, *x = NULL, *y = NULL, *sink = NULL;
    if (cuda_ok(cudaMalloc((void **)&cols, (size_t)n4 * 16), "cudaMalloc cols") ||
        cuda_ok(cudaMalloc((void **)&vals, (size_t)n4 * 16), "cudaMalloc vals") ||
        cuda_ok(cudaMalloc((void **)&x, (size_t)rows * 4), "cudaMalloc x") ||
        cuda_ok(cudaMalloc((void **)&y, (size_t)rows * 4), "cudaMalloc y") ||
        cuda_ok(cudaMalloc((void **)&sink, 16), "cudaMalloc") ||
        cuda_ok(cudaMemset(cols, 0, (size_t)n4 * 16), "cudaMemset") ||
        cuda_ok(cudaMemset(vals, 0, (size_t)n4 * 16), "cudaMemset") ||
        cuda_ok(cudaMemset(x, 0, (size_t)rows * 4), "cudaMemset"))
        rc = 1;
    const unsigned sms = (unsigned)ctx->props.sm_count;
    const unsigned full = sms * 8; /* 8 CTAs of 256: 2048 threads per SM */
    const double spmv_bytes = sdi_roofline_bytes(SD_OP_SPMV, rows, rows, n, 1);
    cudaStream_t st = ctx->stream;
    /* read probes: the matrix's 8 bytes per entry as one array (cols and vals are adjacent
     * halves of no interest here: read reads `cols` as 2 n floats), then as two */
    long long two_n4 = (2 * n + 3) / 4;
    float *both = NULL;
    if (rc == 0 && cuda_ok(cudaMalloc((void **)&both, (size_t)two_n4 * 16), "cudaMalloc") == 0 &&
        cuda_ok(cudaMemset(both, 0, (size_t)two_n4 * 16), "cudaMemset") == 0) {
        void *p[3] = {&both, &two_n4, &sink};
        const double b = (double)two_n4 * 16;
        rc = probe("read U=1", b, m.functions[K_READ1].kernel, full, 256, p, st) ||
             probe("read U=4", b, m.functions[K_READ4].kernel, full, 256, p, st) ||
             probe("read U=8", b, m.functions[K_READ8].kernel, full, 256, p, st);
        cudaFree(both);
    } else
        rc = 1;
    if (rc == 0) {
        void *p[4] = {&cols, &vals, (void *)&n4, &sink};
        rc = probe("read2 cols+vals", (double)n4 * 32, m.functions[K_READ2].kernel, full, 256, p,
                   st);
    }
    static const struct {
        const char *name;
        int pattern, band;
    } patterns[] = {{"row", 0, 0},      {"band:64", 1, 64},       {"band:4096", 1, 4096},
                    {"random", 2, 0},   {"twin local=0.7", 3, 700}, {"twin local=0.9", 3, 900}};
    const int npatterns = (int)(sizeof patterns / sizeof patterns[0]);
    static const struct {
        const char *name;
        int k;
    } ells[] = {{"U=4", K_ELL4}, {"U=8", K_ELL8}, {"U=4 pipelined", K_ELL4P},
                {"U=8 pipelined", K_ELL8P}, {"U=4 evict-first", K_ELL4CS}};
    for (int pi = 0; pi < npatterns && rc == 0; pi++) {
        int pat = patterns[pi].pattern, band = patterns[pi].band;
        int wid = width;
        void *fp[7] = {&cols, &vals, (void *)&n, (void *)&rows, &pat, &band, &wid};
        dim3 g = {full, 1, 1}, bl = {256, 1, 1};
        rc = cuda_ok(cudaLaunchKernel((const void *)m.functions[K_FILL].kernel, g, bl, fp, 0, st),
                     "bs_fill") ||
             cuda_ok(cudaStreamSynchronize(st), "bs_fill");
        int r = rows, w = width;
        void *p[6] = {&cols, &vals, &x, &y, &r, &w};
        for (int e = 0; e < 5 && rc == 0; e++) {
            char name[64];
            snprintf(name, sizeof name, "ell %s %s", patterns[pi].name, ells[e].name);
            rc = probe(name, spmv_bytes, m.functions[ells[e].k].kernel,
                       (unsigned)((rows + 255) / 256), 256, p, st);
        }
    }
    if (rc == 0)
        rc = write_results(out, ctx, rows, width);
    cudaFree(cols);
    cudaFree(vals);
    cudaFree(x);
    cudaFree(y);
    cudaFree(sink);
    sdi_module_unload(&m);
    sdi_cubin_free(&cubin);
    sd_context_destroy(ctx);
    return rc ? 1 : 0;
}
