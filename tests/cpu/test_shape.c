/* tests/cpu/test_shape.c: shape classes of row-length distributions: hand-built
 * distributions at and around the thresholds, and the generator families (stencil →
 * uniform, R-MAT → power-law, bimodal → bimodal, uniform random → uniform or moderate,
 * Zipf → power-law). */
#include "analysis/analysis.h"
#include "gen/gen.h"
#include "sdt.h"

/* Classifies n row lengths given as (length, count) runs. */
static sd_shape_class classify_runs(const int64_t *runs, int nruns, sdi_shape_stats *st)
{
    int64_t n = 0;
    for (int k = 0; k < nruns; k++)
        n += runs[2 * k + 1];
    int64_t *v = malloc((size_t)n * sizeof *v);
    int64_t m = 0;
    for (int k = 0; k < nruns; k++)
        for (int64_t c = 0; c < runs[2 * k + 1]; c++)
            v[m++] = runs[2 * k];
    sdi_len_dist d;
    sd_shape_class cls = (sd_shape_class)-1;
    if (sdi_len_dist_of_values(v, n, &d) == SD_OK) {
        cls = sdi_shape_classify(&d, st);
        sdi_len_dist_free(&d);
    }
    free(v);
    return cls;
}

static void print_stats(const char *what, sd_shape_class c, const sdi_shape_stats *s)
{
    printf("  %-34s %-9s cv %.3f max/mean %.1f top1 %.3f tail %d/%d split %.3f/%.3f "
           "means %.1f/%.1f cvs %.2f/%.2f\n",
           what, sd_shape_class_name(c), s->cv, s->max_mean, s->top1_share, s->tail_occupied,
           s->tail_octaves, s->w_low, s->w_high, s->mean_low, s->mean_high, s->cv_low,
           s->cv_high);
}

#define EXPECT_RUNS(runs, want, what)                                                      \
    do {                                                                                   \
        sdi_shape_stats st_;                                                               \
        sd_shape_class c_ = classify_runs(runs, (int)(sizeof(runs) / sizeof(runs[0]) / 2), \
                                          &st_);                                           \
        print_stats(what, c_, &st_);                                                       \
        SDT_CHECK(c_ == (want), "%s: %s, want %s", what, sd_shape_class_name(c_),          \
                  sd_shape_class_name(want));                                              \
    } while (0)

static void test_hand_distributions(void)
{
    int64_t same[] = {5, 1000};
    EXPECT_RUNS(same, SD_SHAPE_UNIFORM, "all rows of 5");
    int64_t with_empty[] = {0, 700, 5, 300};
    EXPECT_RUNS(with_empty, SD_SHAPE_UNIFORM, "empty rows ignored");
    int64_t stencil[] = {3, 4, 4, 396, 5, 9600};
    EXPECT_RUNS(stencil, SD_SHAPE_UNIFORM, "stencil lengths 3/4/5");
    int64_t spread[] = {2, 100, 3, 100, 4, 100, 5, 100, 6, 100, 7, 100,
                        8, 100, 9, 100, 10, 100, 11, 100, 12, 100};
    EXPECT_RUNS(spread, SD_SHAPE_MODERATE, "lengths 2..12, flat");
    int64_t two[] = {4, 950, 256, 50};
    EXPECT_RUNS(two, SD_SHAPE_BIMODAL, "4 and 256 (5 %)");
    int64_t two_j[] = {3, 300, 4, 300, 5, 300, 60, 40, 70, 30, 80, 30};
    EXPECT_RUNS(two_j, SD_SHAPE_BIMODAL, "3..5 and 60..80");
    int64_t close_modes[] = {4, 500, 12, 500};
    EXPECT_RUNS(close_modes, SD_SHAPE_MODERATE, "modes 3x apart: not bimodal");
    int64_t arrow[] = {4, 998, 1000, 2};
    EXPECT_RUNS(arrow, SD_SHAPE_SKEWED, "two huge rows (0.2 %)");
    int64_t tiny_long[] = {4, 9950, 256, 50};
    EXPECT_RUNS(tiny_long, SD_SHAPE_SKEWED, "long group of 0.5 %: skewed");
    /* A discrete Pareto-like tail: counts halve while lengths double... slower: 2^-1.2 */
    int64_t pl[2 * 12];
    double cnt = 100000;
    for (int b = 0; b < 12; b++) {
        pl[2 * b] = (int64_t)1 << b;
        pl[2 * b + 1] = (int64_t)(cnt + 0.5);
        cnt *= 0.38; /* density ∝ l^-2.4 per octave width: 2^-1.4 */
    }
    EXPECT_RUNS(pl, SD_SHAPE_POWER_LAW, "octave-spaced power law");
    int64_t gapped[] = {4, 5000, 5, 4000, 6, 900, 3000, 100};
    EXPECT_RUNS(gapped, SD_SHAPE_BIMODAL, "a far tight cluster of 1 % of the rows");
    int64_t loose[] = {4, 5000, 5, 4000, 6, 900, 800, 50, 3200, 50};
    EXPECT_RUNS(loose, SD_SHAPE_SKEWED, "a far loose cluster (CV > 0.5)");
}

static void check_gen(const char *spec, uint64_t seed, sd_shape_class want1, sd_shape_class want2)
{
    sd_csr a;
    sd_status s = sdi_gen(spec, seed, &a);
    SDT_CHECK(s == SD_OK, "%s: %s", spec, sd_last_error());
    if (s != SD_OK)
        return;
    sd_features f;
    SDT_OK(sd_analyze(&a, SD_OP_SPMV, &f));
    sdi_len_dist d;
    SDT_OK(sdi_len_dist_of_rows(a.rowptr, a.rows, &d));
    sdi_shape_stats st;
    sd_shape_class c = sdi_shape_classify(&d, &st);
    print_stats(spec, c, &st);
    SDT_CHECK(c == f.shape_class, "%s: sd_analyze agrees", spec);
    SDT_CHECK(c == want1 || c == want2, "%s (seed %llu): %s, want %s%s%s", spec,
              (unsigned long long)seed, sd_shape_class_name(c), sd_shape_class_name(want1),
              want1 != want2 ? " or " : "", want1 != want2 ? sd_shape_class_name(want2) : "");
    sdi_len_dist_free(&d);
    sd_csr_free(&a);
}

static void test_generator_families(void)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        check_gen("stencil2d:n=100", seed, SD_SHAPE_UNIFORM, SD_SHAPE_UNIFORM);
        check_gen("stencil3d27:n=20", seed, SD_SHAPE_UNIFORM, SD_SHAPE_UNIFORM);
        check_gen("rmat:scale=14,ef=16", seed, SD_SHAPE_POWER_LAW, SD_SHAPE_POWER_LAW);
        check_gen("rmat:scale=12,ef=8,sym=1", seed, SD_SHAPE_POWER_LAW, SD_SHAPE_POWER_LAW);
        check_gen("bimodal:rows=4096,cols=4096,short=4,long=256,frac=0.05", seed,
                  SD_SHAPE_BIMODAL, SD_SHAPE_BIMODAL);
        check_gen("bimodal:rows=20000,cols=5000,short=8,long=64,frac=0.3", seed,
                  SD_SHAPE_BIMODAL, SD_SHAPE_BIMODAL);
        check_gen("uniform:rows=20000,deg=16", seed, SD_SHAPE_UNIFORM, SD_SHAPE_MODERATE);
        check_gen("uniform:rows=20000,deg=4", seed, SD_SHAPE_UNIFORM, SD_SHAPE_MODERATE);
        check_gen("powerlaw:rows=20000,deg=8,alpha=2.2", seed, SD_SHAPE_POWER_LAW,
                  SD_SHAPE_POWER_LAW);
        check_gen("powerlaw:rows=20000,deg=8,alpha=2.8", seed, SD_SHAPE_POWER_LAW,
                  SD_SHAPE_SKEWED);
        check_gen("banded:n=4096,bw=4", seed, SD_SHAPE_UNIFORM, SD_SHAPE_UNIFORM);
        check_gen("blockdiag:n=1024,b=16", seed, SD_SHAPE_UNIFORM, SD_SHAPE_UNIFORM);
        check_gen("knn:n=4096,k=8", seed, SD_SHAPE_UNIFORM, SD_SHAPE_MODERATE);
    }
}

/* Quantiles, tail sums and the k-th value of a distribution with large values. */
static void test_len_dist(void)
{
    int64_t v[] = {0, 5000, 3, 3, 70000, 1, 4095, 4096, 2};
    sdi_len_dist d;
    SDT_OK(sdi_len_dist_of_values(v, 9, &d));
    /* sorted: 0 1 2 3 3 4095 4096 5000 70000 */
    int64_t sorted[] = {0, 1, 2, 3, 3, 4095, 4096, 5000, 70000};
    for (int k = 0; k < 9; k++)
        SDT_CHECK(sdi_len_dist_kth(&d, k) == sorted[k], "kth %d = %lld", k,
                  (long long)sdi_len_dist_kth(&d, k));
    SDT_CHECK(d.nbig == 3 && d.max == 70000 && d.sum == 83200, "summary");
    SDT_CHECK(sdi_len_dist_quantile(&d, 1, 2) == 3, "median rank 5");
    SDT_CHECK(sdi_len_dist_quantile(&d, 95, 100) == 70000, "p95 rank 9");
    SDT_CHECK(sdi_len_dist_top_sum(&d, 4) == 70000 + 5000 + 4096 + 4095, "top 4");
    SDT_CHECK(sdi_len_dist_top_sum(&d, 6) == 83200 - 0 - 1 - 2, "top 6");
    sdi_len_dist_free(&d);
    SDT_OK(sdi_len_dist_of_values(v, 0, &d));
    SDT_CHECK(sdi_len_dist_quantile(&d, 1, 2) == 0 &&
                  sdi_shape_classify(&d, NULL) == SD_SHAPE_UNIFORM,
              "empty");
    sdi_len_dist_free(&d);
}

int main(void)
{
    sdt_init("test_shape");
    SDT_RUN(test_len_dist);
    SDT_RUN(test_hand_distributions);
    SDT_RUN(test_generator_families);
    return sdt_finish();
}
