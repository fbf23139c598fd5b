/* tests/cpu/test_spmm_tc.c: the tensor-core SpMM template (spmm_bsr_tc.cuh) without a GPU:
 * NVRTC compiles it for sm_90 at K ∈ {1, 7, 8, 32, 130, 256} and b ∈ {8, 16}; the family's
 * legality and enumeration (dense tiles yield candidates, scattered nonzeros none); the
 * lowering's launches and padding refusal; a lane-level emulation of the kernel (PTX
 * fragment ownership of mma.m16n8k8, the builder's tile order, the kernel's loads and
 * stores) compared exactly with the CPU reference on small integers; and the arithmetic:
 * the 3×TF32 product error bound, and the validation rule (docs/ARCHITECTURE.md
 * "Validation") kept by 3×TF32 but broken by plain
 * TF32 under a model of the tensor core's truncating accumulation. */
#include <math.h>
#include <stdlib.h>

#include "core/sdi.h"

#include "formats/spmm_formats.h"
#include "gen/gen.h"
#include "plan/families/spmm_shared.h"
#include "plan/spmm.h"
#include "ref/ref.h"
#include "sdt.h"
#include "spmm_tc_data.h"

/* c lowered for a through its family, with a's statistics. */
static sd_status lower_cfg(const sd_csr *a, const sdi_spmm_config *c, sdi_lowered *l)
{
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    return sdi_spmm_lower_config(a, &st, c, l);
}

/* ------------------------------------------------------------------ TF32 arithmetic model */

/* cvt.rna.tf32.f32: round to 10 explicit mantissa bits, ties away from zero (finite x). */
static float tf32_rna(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u + 0x1000u) & 0xffffe000u; /* sign bit untouched: a carry rounds the magnitude up */
    memcpy(&x, &u, 4);
    return x;
}

/* One accumulation step of the tensor core: c + Σ p[i] (products exact). Modelled after
 * the measured behaviour of NVIDIA tensor cores in FP32 mode: terms aligned to the
 * largest exponent without guard bits (truncated to its 24-bit grid), summed, and the
 * result truncated toward zero. exact = 1: one rounding to nearest (an ideal FMA chain). */
static float tc_accumulate(float c, const double *p, int n, int exact)
{
    double s = c;
    if (exact) {
        for (int i = 0; i < n; i++)
            s += p[i];
        return (float)s;
    }
    int emax = INT32_MIN, e;
    if (c != 0) {
        frexp(c, &e);
        emax = e;
    }
    for (int i = 0; i < n; i++)
        if (p[i] != 0) {
            frexp(p[i], &e);
            if (e > emax)
                emax = e;
        }
    if (emax == INT32_MIN)
        return c;
    double q = ldexp(1.0, emax - 24);
    s = trunc((double)c / q) * q;
    for (int i = 0; i < n; i++)
        s += trunc(p[i] / q) * q;
    float f = (float)s;
    if (fabs((double)f) > fabs(s))
        f = nextafterf(f, 0.0f);
    return f;
}

/* ------------------------------------------------------------------ the kernel, emulated */

enum { EMU_EXACT = 0, EMU_3XTF32 = 1, EMU_1XTF32 = 2 };

/* Splits per mode: exact keeps x in hi; plain TF32 drops lo. */
static void split(float x, int mode, float *hi, float *lo)
{
    if (mode == EMU_EXACT) {
        *hi = x;
        *lo = 0;
        return;
    }
    *hi = tf32_rna(x);
    *lo = mode == EMU_3XTF32 ? tf32_rna(x - *hi) : 0.0f;
}

/* d += Aop·Bop for one warp's mma.m16n8k8, the operands given per lane as PTX lays them
 * out: a_r = A[g + 8(r%2)][t + 4(r/2)], b_r = B[t + 4r][g], d_r = D[g + 8(r/2)][2t + r%2]. */
static void mma_emu(float d[32][4], const float a[32][4], const float b[32][2], int exact)
{
    float A[16][8], B[8][8], D[16][8];
    for (int l = 0; l < 32; l++) {
        int g = l / 4, t = l % 4;
        for (int r = 0; r < 4; r++) {
            A[g + 8 * (r % 2)][t + 4 * (r / 2)] = a[l][r];
            D[g + 8 * (r / 2)][2 * t + r % 2] = d[l][r];
        }
        for (int r = 0; r < 2; r++)
            B[t + 4 * r][g] = b[l][r];
    }
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 8; n++) {
            double p[8];
            for (int k = 0; k < 8; k++)
                p[k] = (double)A[m][k] * (double)B[k][n];
            D[m][n] = tc_accumulate(D[m][n], p, 8, exact);
        }
    for (int l = 0; l < 32; l++) {
        int g = l / 4, t = l % 4;
        for (int r = 0; r < 4; r++)
            d[l][r] = D[g + 8 * (r / 2)][2 * t + r % 2];
    }
}

/* C = A·B as spmm_bsr_tc.cuh computes it with SD_BM = bk->bm and SD_NT = nt: the same
 * per-lane loads (tile values in the builder's lane order, B at rows c0+t and c0+t+4,
 * columns kb+g and kb+g+8), the same three mma per half and the same stores. */
static void kernel_emu(const sdi_spmm_blocks *bk, const float *B, int k, int nt, int mode,
                       float *C)
{
    const int bm = bk->bm, H = bm / 8, per = bm / 4, kt = 16 * nt;
    const int exact = mode == EMU_EXACT;
    static float hh[32][2][4][4], sm[32][2][4][4]; /* [lane][half][sub-tile][reg] */
    for (int32_t br = 0; br < bk->brows; br++)
        for (int k0 = 0; k0 < k; k0 += kt) {
            memset(hh, 0, sizeof hh);
            memset(sm, 0, sizeof sm);
            for (int64_t q = bk->browptr[br]; q < bk->browptr[br + 1]; q++) {
                const int c0 = bk->bcolidx[q] * 8;
                float ah[32][4], al[32][4];
                for (int l = 0; l < 32; l++)
                    for (int i = 0; i < per; i++)
                        split(bk->val[q * bm * 8 + l * per + i], mode, &ah[l][i], &al[l][i]);
                for (int j = 0; j < nt; j++) {
                    const int kb = k0 + 16 * j;
                    float xh[32][4], xl[32][4];
                    for (int l = 0; l < 32; l++) {
                        const int g = l / 4, t = l % 4;
                        const int row[4] = {c0 + t, c0 + t, c0 + t + 4, c0 + t + 4};
                        const int col[4] = {kb + g, kb + g + 8, kb + g, kb + g + 8};
                        for (int i = 0; i < 4; i++) {
                            float x = row[i] < bk->cols && col[i] < k
                                          ? B[(int64_t)row[i] * k + col[i]]
                                          : 0.0f;
                            split(x, mode, &xh[l][i], &xl[l][i]);
                        }
                    }
                    for (int h = 0; h < H; h++) {
                        float bh[32][2], bl[32][2], dsm[32][4], dhh[32][4];
                        for (int l = 0; l < 32; l++) {
                            bh[l][0] = ah[l][h];
                            bh[l][1] = ah[l][H + h];
                            bl[l][0] = al[l][h];
                            bl[l][1] = al[l][H + h];
                            memcpy(dsm[l], sm[l][h][j], sizeof dsm[l]);
                            memcpy(dhh[l], hh[l][h][j], sizeof dhh[l]);
                        }
                        if (mode == EMU_3XTF32) {
                            mma_emu(dsm, xl, bh, exact);
                            mma_emu(dsm, xh, bl, exact);
                        }
                        mma_emu(dhh, xh, bh, exact);
                        for (int l = 0; l < 32; l++) {
                            memcpy(sm[l][h][j], dsm[l], sizeof dsm[l]);
                            memcpy(hh[l][h][j], dhh[l], sizeof dhh[l]);
                        }
                    }
                }
            }
            for (int l = 0; l < 32; l++) {
                const int g = l / 4, t = l % 4;
                for (int h = 0; h < H; h++) {
                    const int r = br * bm + 8 * h + 2 * t;
                    for (int j = 0; j < nt; j++) {
                        const int kb = k0 + 16 * j;
                        const int rr[4] = {r, r + 1, r, r + 1};
                        const int cc[4] = {kb + g, kb + g, kb + g + 8, kb + g + 8};
                        for (int i = 0; i < 4; i++)
                            if (rr[i] < bk->rows && cc[i] < k)
                                C[(int64_t)rr[i] * k + cc[i]] = hh[l][h][j][i] + sm[l][h][j][i];
                    }
                }
            }
        }
}

/* Runs the emulation of (b, nt, mode) on a and B; validates against the reference (exact
 * comparison for mode EXACT). Returns the validation status; *viol the violations. */
static sd_status emulate_and_check(const sd_csr *a, const float *B, int k, int b, int nt,
                                   int mode, int64_t *viol, double *ratio, char *why, size_t cap)
{
    sdi_spmm_blocks bk;
    double *want = NULL, *absum = NULL;
    int64_t *count = NULL;
    float *C = NULL;
    size_t nc = (size_t)a->rows * (size_t)k;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_spmm_blocks_free(&bk);                                                         \
        sdi_free(want);                                                                    \
        sdi_free(absum);                                                                   \
        sdi_free(count);                                                                   \
        sdi_free(C);                                                                       \
    } while (0)
    SD_TRY(sdi_spmm_blocks_build(a, b, 8, 0, 1, &bk));
    want = sdi_malloc_array(nc + 1, sizeof *want);
    absum = sdi_malloc_array(nc + 1, sizeof *absum);
    count = sdi_malloc_array((size_t)a->rows + 1, sizeof *count);
    C = sdi_malloc_array(nc + 1, sizeof *C);
    if (!want || !absum || !count || !C) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "emulation buffers");
    }
    for (size_t i = 0; i < nc; i++)
        C[i] = NAN; /* an entry the kernel never writes fails */
    SD_TRY(sdi_ref_spmm(a, B, k, want, count, absum));
    kernel_emu(&bk, B, k, nt, mode, C);
    sdi_validation val;
    memset(&val, 0, sizeof val);
    sd_status s = mode == EMU_EXACT
                      ? sdi_validate_dense_exact(C, want, a->rows, k, &val)
                      : sdi_validate_dense(C, want, count, absum, a->rows, k, &val);
    *viol = val.n_violations + val.n_nonfinite;
    if (ratio)
        *ratio = val.ratio;
    snprintf(why, cap, "%s", val.reason);
    SD_FREE_ALL;
#undef SD_FREE_ALL
    sdi_error_clear();
    return s;
}

/* ------------------------------------------------------------------ test matrices */

/* Edge cases the tiles meet: rows and columns not multiples of the tile, empty block
 * rows, a rectangular shape, one entry, no entries. Small integers (exact sums). */
static sd_status tc_edge(int e, sd_csr *out, char *label, size_t cap)
{
    static const int rows[] = {37, 40, 1, 50, 19};
    static const int cols[] = {29, 203, 1, 17, 70};
    static const char *names[] = {"37x29 dense-ish, partial tiles", "40x203 rectangular, empty "
                                  "block rows", "1x1", "50x17 no entries", "19x70 one entry"};
    snprintf(label, cap, "%s", names[e]);
    sdi_coo c;
    sd_status s = sdi_coo_init(&c, rows[e], cols[e], 64);
    for (int i = 0; i < rows[e] && s == SD_OK; i++)
        for (int j = 0; j < cols[e] && s == SD_OK; j++) {
            uint64_t h = sdi_hash3(sdt_seed, (uint64_t)e, (uint64_t)i * 1000 + (uint64_t)j);
            bool on = false;
            switch (e) {
            case 0: on = h % 4 != 0; break;
            case 1: on = (i / 8) % 3 != 1 && (j / 8) % 4 == (i / 8) % 4 && h % 3 != 0; break;
            case 2: on = true; break;
            case 3: on = false; break;
            case 4: on = i == 18 && j == 69; break;
            default: break;
            }
            if (on)
                s = sdi_coo_push(&c, i, j, (float)((int)(h >> 20) % 5 - 2));
        }
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    return s;
}

/* ------------------------------------------------------------------ tests */

static bool cubin_has(const sdi_cubin *c, const char *name)
{
    size_t n = strlen(name);
    const char *p = c->cubin;
    for (size_t i = 0; i + n <= c->size; i++)
        if (memcmp(p + i, name, n) == 0 && (i + n == c->size || p[i + n] == 0))
            return true;
    return false;
}

static void test_compile(void)
{
    static const int ks[] = {1, 7, 8, 32, 130, 256};
    sd_csr a;
    SDT_OK(sdi_gen("blockdiag:n=96,b=16", sdt_seed, &a));
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(&a, &st);
    enum { NV = 6 * 2 * 2 };
    sdi_lowered *ls = sdi_calloc(NV, sizeof *ls);
    sdi_spmm_config *cfgs = sdi_calloc(NV, sizeof *cfgs);
    sd_status *res = sdi_calloc(NV, sizeof *res);
    char(*err)[512] = sdi_calloc(NV, sizeof *err);
    int n = 0;
    SDT_CHECK(ls && cfgs && res && err, "out of memory");
    for (int q = 0; q < 6 && ls && cfgs && res && err; q++)
        for (int b = 8; b <= 16; b += 8)
            for (int v = 0; v < 2; v++) {
                sdi_spmm_config c;
                SDT_OK(sdi_spmm_config_default(SDI_SPMM_BSR_TC, ks[q], &st, &c));
                c.block = b;
                if (v == 1) { /* the other K sub-tiling */
                    c.coarsen = c.coarsen == 1 ? 2 : 1;
                    c.warps = 8;
                }
                sd_status s = lower_cfg(&a, &c, &ls[n]);
                SDT_CHECK(s == SD_OK, "lowering K=%d b=%d: %s", ks[q], b, sd_last_error());
                if (s == SD_OK)
                    cfgs[n++] = c;
            }
    double t0 = sdi_now();
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        sdi_macro macros[SDI_LOW_MAX_MACROS];
        sdi_jit_request req;
        sdi_cubin cubin;
        memset(&cubin, 0, sizeof cubin);
        res[i] = sdi_lowered_jit_request(&ls[i], NULL, macros, &req);
        req.arch = "sm_90";
        if (res[i] == SD_OK)
            res[i] = sdi_jit_compile(&req, &cubin);
        if (res[i] != SD_OK)
            snprintf(err[i], sizeof err[i], "%s", sd_last_error());
        else if (!cubin_has(&cubin, ls[i].kname[0]))
            snprintf(err[i], sizeof err[i], "cubin lacks %s", ls[i].kname[0]);
        else if (cubin.log != NULL && strstr(cubin.log, "warning") != NULL)
            snprintf(err[i], sizeof err[i], "NVRTC warnings: %.400s", cubin.log);
        sdi_cubin_free(&cubin);
    }
    sdi_spmm_config first;
    memset(&first, 0, sizeof first);
    if (n > 0)
        first = cfgs[0];
    for (int i = 0; i < n; i++) {
        char d[160];
        sdi_spmm_config_describe(&cfgs[i], d, sizeof d);
        SDT_CHECK(res[i] == SD_OK && err[i][0] == '\0', "%s: %s", d, err[i]);
        sdi_lowered_free(&ls[i]);
    }
    printf("  %d bsr_tc variants compiled for sm_90 in %.1f s\n", n, sdi_now() - t0);
    /* An architecture without TF32 mma is refused by the template itself. */
    if (n > 0) {
        SDT_OK(lower_cfg(&a, &first, &ls[0]));
        sdi_macro macros[SDI_LOW_MAX_MACROS];
        sdi_jit_request req;
        SDT_OK(sdi_lowered_jit_request(&ls[0], NULL, macros, &req));
        req.arch = "sm_75";
        sdi_cubin cubin;
        memset(&cubin, 0, sizeof cubin);
        SDT_STATUS(sdi_jit_compile(&req, &cubin), SD_ERR_COMPILE);
        SDT_CHECK(strstr(sd_last_error(), "sm_80") != NULL, "message '%s'", sd_last_error());
        sdi_cubin_free(&cubin);
        sdi_lowered_free(&ls[0]);
    }
    sdi_free(ls);
    sdi_free(cfgs);
    sdi_free(res);
    sdi_free(err);
    sd_csr_free(&a);
}

static void test_legality_enumeration(void)
{
    sd_csr dense, scattered;
    SDT_OK(sdi_gen("blockdiag:n=512,b=16", sdt_seed, &dense));
    SDT_OK(sdi_gen("uniform:rows=900,cols=410,deg=7", sdt_seed, &scattered));
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(&dense, &st);
    static const int ks[] = {1, 8, 32, 33, 256};
    for (int q = 0; q < 5; q++) {
        int k = ks[q];
        for (int level = 0; level <= 2; level++) {
            sdi_spmm_config *v = NULL;
            int n = 0;
            SDT_OK(sdi_spmm_enumerate(&dense, k, 1u << SDI_SPMM_BSR_TC, level, 0, &v, &n));
            int seen8 = 0, seen16 = 0;
            for (int i = 0; i < n; i++) {
                SDT_CHECK(v[i].tmpl == SDI_SPMM_BSR_TC, "template %d", v[i].tmpl);
                SDT_CHECK(sdi_spmm_config_check(&v[i], &st) == SD_OK, "K=%d: illegal: %s", k,
                          sd_last_error());
                SDT_CHECK(sdi_spmm_ktile(&v[i]) * sdi_spmm_ktiles(&v[i]) >= k &&
                              sdi_spmm_ktile(&v[i]) * (sdi_spmm_ktiles(&v[i]) - 1) < k,
                          "K=%d: tiles %d x %d", k, sdi_spmm_ktile(&v[i]), sdi_spmm_ktiles(&v[i]));
                seen8 += v[i].block == 8;
                seen16 += v[i].block == 16;
            }
            SDT_CHECK(seen16 > 0, "K=%d level %d: no 16-row tiles on dense 16x16 blocks", k, level);
            SDT_CHECK(level == 0 || seen8 > 0, "K=%d level %d: no 8-row tiles", k, level);
            SDT_CHECK(level > 0 || n == 1, "K=%d: level 0 gives %d candidates", k, n);
            sdi_free(v);
            SDT_OK(sdi_spmm_enumerate(&scattered, k, 1u << SDI_SPMM_BSR_TC, level, 0, &v, &n));
            SDT_CHECK(n == 0, "K=%d level %d: %d tensor-core candidates for scattered nonzeros", k,
                      level, n);
            sdi_free(v);
        }
        /* The whole candidate set of a dense-block matrix includes the family. */
        sdi_spmm_config *v = NULL;
        int n = 0, tc = 0;
        SDT_OK(sdi_spmm_enumerate(&dense, k, 0, 1, 0, &v, &n));
        for (int i = 0; i < n; i++)
            tc += v[i].tmpl == SDI_SPMM_BSR_TC;
        SDT_CHECK(tc > 0, "K=%d: no bsr_tc among %d candidates", k, n);
        sdi_free(v);
    }
    /* Illegal members are named. */
    sdi_spmm_config c;
    SDT_OK(sdi_spmm_config_default(SDI_SPMM_BSR_TC, 64, &st, &c));
    SDT_CHECK(c.block == 16 && c.coarsen == 4 && sdi_spmm_ktile(&c) == 64, "default b=%d nt=%d",
              c.block, c.coarsen);
    sdi_spmm_config x = c;
    x.block = 4;
    SDT_STATUS(sdi_spmm_config_check(&x, &st), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "block") != NULL, "message '%s'", sd_last_error());
    x = c;
    x.coarsen = 3;
    SDT_STATUS(sdi_spmm_config_check(&x, &st), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "nt") != NULL, "message '%s'", sd_last_error());
    x = c;
    x.klanes = 16;
    SDT_STATUS(sdi_spmm_config_check(&x, &st), SD_ERR_INVALID_ARG);
    /* Names, description and JSON. */
    SDT_CHECK(sdi_spmm_template_from_name("bsr_tc") == SDI_SPMM_BSR_TC, "name lookup");
    char d[160];
    sdi_spmm_config_describe(&c, d, sizeof d);
    SDT_CHECK(strncmp(d, "bsr_tc16 k=64 w=4 nt=4", 22) == 0, "describe '%s'", d);
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_spmm_config_json(&c, &j);
    SDT_OK(sdi_json_finish(&j));
    SDT_CHECK(j.buf != NULL && strstr(j.buf, "\"template\":\"bsr_tc\"") != NULL &&
                  strstr(j.buf, "\"ktile\":64") != NULL,
              "json %s", j.buf ? j.buf : "(null)");
    sdi_json_free(&j);
    sd_csr_free(&dense);
    sd_csr_free(&scattered);
}

static void test_lowering(void)
{
    sd_csr a, scattered;
    char label[96];
    SDT_OK(tc_edge(1, &a, label, sizeof label));
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(&a, &st);
    for (int b = 8; b <= 16; b += 8) {
        sdi_spmm_config c;
        SDT_OK(sdi_spmm_config_default(SDI_SPMM_BSR_TC, 130, &st, &c));
        c.block = b;
        sdi_lowered l;
        SDT_OK(lower_cfg(&a, &c, &l));
        int brows = (a.rows + b - 1) / b;
        SDT_CHECK(l.nlaunches == 1 && l.launch[0].grid[0] == (unsigned)((brows + 3) / 4) &&
                      l.launch[0].grid[1] == 3 && l.launch[0].block[0] == 128 &&
                      l.launch[0].nargs == 8,
                  "b=%d: launch grid %u x %u, block %u, %d args", b, l.launch[0].grid[0],
                  l.launch[0].grid[1], l.launch[0].block[0], l.launch[0].nargs);
        SDT_CHECK(strcmp(l.template_name, "spmm_bsr_tc.cuh") == 0 && !l.atomics &&
                      l.slots == l.chunks * b * 8 && l.slots >= a.nnz,
                  "b=%d: template %s, slots %lld, tiles %lld", b, l.template_name,
                  (long long)l.slots, (long long)l.chunks);
        sdi_lowered_free(&l);
    }
    /* Scattered nonzeros: more than 8x padding is refused, by name. */
    SDT_OK(sdi_gen("uniform:rows=900,cols=410,deg=7", sdt_seed, &scattered));
    sdi_spmm_stats_compute(&scattered, &st);
    sdi_spmm_config c;
    SDT_OK(sdi_spmm_config_default(SDI_SPMM_BSR_TC, 32, &st, &c));
    sdi_lowered l;
    SDT_STATUS(lower_cfg(&scattered, &c, &l), SD_ERR_UNSUPPORTED);
    SDT_CHECK(strstr(sd_last_error(), "padding") != NULL, "message '%s'", sd_last_error());
    /* The inputs of the GPU test (tests/gpu/test_spmm.c, test_bsr_tc) are within the
     * padding limit for both tile heights. */
    for (int m = 2; m <= 3; m++) {
        sd_csr t;
        SDT_OK(tc_cancel_matrix(m == 2 ? 333 : 190, m == 2 ? 190 : 333, m == 2 ? 16 : 8,
                                sdt_seed + (unsigned)m, &t));
        sdi_spmm_stats_compute(&t, &st);
        for (int b = 8; b <= 16; b += 8) {
            SDT_OK(sdi_spmm_config_default(SDI_SPMM_BSR_TC, 7, &st, &c));
            c.block = b;
            SDT_OK(lower_cfg(&t, &c, &l));
            sdi_lowered_free(&l);
        }
        sd_csr_free(&t);
    }
    /* Tile round trip in the lane order of both tile heights. */
    for (int b = 8; b <= 16; b += 8) {
        sdi_spmm_blocks bk;
        sd_csr back;
        SDT_OK(sdi_spmm_blocks_build(&a, b, 8, 0, 1, &bk));
        SDT_OK(sdi_spmm_blocks_to_csr(&bk, &back));
        SDT_CHECK(back.nnz == a.nnz &&
                      memcmp(back.rowptr, a.rowptr, sizeof *a.rowptr * ((size_t)a.rows + 1)) == 0 &&
                      memcmp(back.colind, a.colind, sizeof *a.colind * (size_t)a.nnz) == 0 &&
                      memcmp(back.vals, a.vals, sizeof *a.vals * (size_t)a.nnz) == 0,
                  "b=%d: round trip differs", b);
        sd_csr_free(&back);
        sdi_spmm_blocks_free(&bk);
    }
    sd_csr_free(&a);
    sd_csr_free(&scattered);
}

/* The emulated kernel reproduces A·B exactly on small integers (layout and indexing). */
static void test_emulated_kernel_exact(void)
{
    static const int ks[] = {1, 7, 32, 130};
    for (int m = 0; m < 6; m++) {
        sd_csr a;
        char label[96];
        if (m == 5) {
            snprintf(label, sizeof label, "blockdiag:n=80,b=16");
            SDT_OK(sdi_gen(label, sdt_seed, &a));
            sdi_gen_values(&a, SDI_VALUES_SMALL_INT, sdt_seed + 1);
        } else {
            SDT_OK(tc_edge(m, &a, label, sizeof label));
        }
        for (int q = 0; q < 4; q++) {
            int k = ks[q];
            size_t nb = (size_t)a.cols * (size_t)k;
            float *B = sdi_malloc_array(nb + 1, sizeof *B);
            SDT_CHECK(B != NULL, "out of memory");
            if (B == NULL)
                break;
            sdi_gen_dense(B, (int64_t)nb, SDI_VALUES_SMALL_INT, sdt_seed + (unsigned)k);
            for (int b = 8; b <= 16; b += 8)
                for (int nt = 1; nt <= 4; nt *= 2) {
                    int64_t viol = 0;
                    char why[256];
                    sd_status s = emulate_and_check(&a, B, k, b, nt, EMU_EXACT, &viol, NULL, why,
                                                    sizeof why);
                    SDT_CHECK(s == SD_OK, "%s K=%d b=%d nt=%d: %s", label, k, b, nt, why);
                    /* TF32 holds small integers exactly: the split path is exact too. */
                    s = emulate_and_check(&a, B, k, b, nt, EMU_3XTF32, &viol, NULL, why,
                                          sizeof why);
                    SDT_CHECK(s == SD_OK && viol == 0, "%s K=%d b=%d nt=%d (3xTF32): %s", label,
                              k, b, nt, why);
                }
            sdi_free(B);
        }
        sd_csr_free(&a);
    }
}

/* Per product: |a·b − (ah·bh + ah·bl + al·bh)| ≤ 3·2⁻²²·|a·b| (plus terms of 2⁻³³), while
 * plain TF32 errs by up to 2⁻¹⁰. */
static void test_split_product_bound(void)
{
    sdi_rng r;
    sdi_rng_seed(&r, sdt_seed, 1, 0);
    double worst3 = 0, worst1 = 0;
    for (int i = 0; i < 200000; i++) {
        float a = ldexpf((float)(2.0 * sdi_rng_uniform(&r) - 1.0), (int)(sdi_rng_next(&r) % 41) - 20);
        float b = ldexpf((float)(2.0 * sdi_rng_uniform(&r) - 1.0), (int)(sdi_rng_next(&r) % 41) - 20);
        if (a == 0 || b == 0)
            continue;
        float ah, al, bh, bl;
        split(a, EMU_3XTF32, &ah, &al);
        split(b, EMU_3XTF32, &bh, &bl);
        SDT_CHECK(tf32_rna(ah) == ah && tf32_rna(al) == al, "split parts are not TF32");
        double exact = (double)a * (double)b;
        double three = (double)ah * bh + ((double)ah * bl + (double)al * bh);
        double one = (double)ah * bh;
        double e3 = fabs(three - exact) / fabs(exact), e1 = fabs(one - exact) / fabs(exact);
        if (e3 > worst3)
            worst3 = e3;
        if (e1 > worst1)
            worst1 = e1;
    }
    printf("  worst relative product error: 3xTF32 %.3g (bound %.3g), TF32 %.3g\n", worst3,
           3.0 * ldexp(1, -22), worst1);
    SDT_CHECK(worst3 <= 3.0 * ldexp(1, -22) * (1 + 1e-6), "3xTF32 product error %.3g", worst3);
    SDT_CHECK(worst1 > 100 * worst3, "plain TF32 should be far worse (%.3g)", worst1);
    /* Rounding: ties away from zero, on both signs. */
    float tie = 1.0f + ldexpf(1.0f, -11); /* halfway between two TF32 neighbours of 1 */
    SDT_CHECK(tf32_rna(tie) == 1.0f + ldexpf(1.0f, -10) && tf32_rna(-tie) == -tf32_rna(tie),
              "ties away from zero");
}

/* The validation rule (docs/ARCHITECTURE.md "Validation") on the cancellation input:
 * 3×TF32 keeps it, plain TF32 breaks it (so
 * the GPU test on the same input can catch a kernel that drops the split); random values
 * pass with 3×TF32 as well. */
static void test_accuracy_rule(void)
{
    static const int ks[] = {7, 32};
    for (int b = 8; b <= 16; b += 8) {
        sd_csr a;
        SDT_OK(tc_cancel_matrix(150, 100, b, sdt_seed, &a));
        for (int q = 0; q < 2; q++) {
            int k = ks[q];
            size_t nb = (size_t)a.cols * (size_t)k;
            float *B = sdi_malloc_array(nb, sizeof *B);
            SDT_CHECK(B != NULL, "out of memory");
            if (B == NULL)
                break;
            tc_cancel_dense(B, (int64_t)nb, sdt_seed + 3);
            int64_t v3 = 0, v1 = 0;
            double r3 = 0, r1 = 0;
            char why3[256], why1[256];
            sd_status s3 = emulate_and_check(&a, B, k, b, 2, EMU_3XTF32, &v3, &r3, why3,
                                             sizeof why3);
            sd_status s1 = emulate_and_check(&a, B, k, b, 2, EMU_1XTF32, &v1, &r1, why1,
                                             sizeof why1);
            printf("  cancellation b=%d K=%d (nnz %lld): 3xTF32 %lld violations (worst %.3f of "
                   "the bound), TF32 %lld of %lld (worst %.1fx the bound)\n", b, k,
                   (long long)a.nnz, (long long)v3, r3, (long long)v1, (long long)a.rows * k, r1);
            SDT_CHECK(s3 == SD_OK, "b=%d K=%d: 3xTF32 breaks the rule: %s", b, k, why3);
            SDT_CHECK(s1 == SD_ERR_VALIDATION && v1 > 0, "b=%d K=%d: plain TF32 passes (%s)", b,
                      k, why1);
            /* uniform values on the same pattern */
            sdi_gen_values(&a, SDI_VALUES_UNIFORM, sdt_seed + 5);
            sdi_gen_dense(B, (int64_t)nb, SDI_VALUES_UNIFORM, sdt_seed + 6);
            s3 = emulate_and_check(&a, B, k, b, 2, EMU_3XTF32, &v3, &r3, why3, sizeof why3);
            SDT_CHECK(s3 == SD_OK, "b=%d K=%d uniform: %s", b, k, why3);
            printf("  uniform b=%d K=%d: 3xTF32 worst %.3f of the bound\n", b, k, r3);
            sdi_free(B);
            sd_csr_free(&a);
            SDT_OK(tc_cancel_matrix(150, 100, b, sdt_seed, &a));
        }
        sd_csr_free(&a);
    }
}

int main(void)
{
    sdt_init("test_spmm_tc");
    SDT_RUN(test_split_product_bound);
    SDT_RUN(test_legality_enumeration);
    SDT_RUN(test_lowering);
    SDT_RUN(test_emulated_kernel_exact);
    SDT_RUN(test_accuracy_rule);
    SDT_RUN(test_compile);
    return sdt_finish();
}
