/* src/analysis/shape.c: the shape class of the row-length distribution (uniform,
 * moderate, skewed, power-law, bimodal), with its rules and thresholds.
 *
 * The classification looks at the non-empty rows only (empty rows are a feature of
 * their own, empty_row_frac); μ, CV and max are those of their lengths r. Rules, first
 * match wins:
 *   1. bimodal   two well-separated, tight groups: the best split of log2 r into two
 *                groups (Otsu: maximal between-group variance) leaves each group ≥ 1 % of
 *                the rows, each group's CV of r ≤ 0.5, and the upper group's mean r
 *                ≥ 4 × the lower group's;
 *   2. uniform   CV ≤ 0.3 and max ≤ 3 μ (stencils, fixed-degree meshes);
 *   3. moderate  CV ≤ 1 and max ≤ 10 μ (random graphs, FEM with varying stencils);
 *   4. power-law a heavy, continuous tail: the octaves [2^b, 2^(b+1)) from ⌈log2 2μ⌉ to
 *                ⌊log2 max⌋ number ≥ 3, ≥ 80 % of them hold a row, and the top 1 % of
 *                the rows hold ≥ 4 % of the entries (a Pareto tail of index a puts
 *                0.01^(1−1/a) of the mass there: 4.6 % for a = 3, 10 % for a = 2);
 *   5. skewed    everything else heavy: a few rows far longer than the rest, or a
 *                short or gapped tail.
 * A matrix without non-empty rows, or whose rows all have one length, is uniform. */
#include <math.h>
#include <string.h>

#include "analysis.h"

#define BIMODAL_MIN_MASS 0.01
#define BIMODAL_MAX_GROUP_CV 0.5
#define BIMODAL_MIN_RATIO 4.0
#define UNIFORM_MAX_CV 0.3
#define UNIFORM_MAX_MAX_MEAN 3.0
#define MODERATE_MAX_CV 1.0
#define MODERATE_MAX_MAX_MEAN 10.0
#define POWER_MIN_OCTAVES 3
#define POWER_MIN_OCCUPIED 0.8
#define POWER_MIN_TOP1 0.04

/* Fine log bins for the split: 8 per octave over lengths up to 2^31. */
#define NBINS 256
#define BINS_PER_OCTAVE 8

typedef struct {
    double n, sr, sr2, sx; /* count, Σr, Σr², Σlog2 r */
} bin_t;

static void add_value(bin_t *bins, uint64_t *octaves, int64_t v, int64_t count)
{
    double x = log2((double)v);
    int b = (int)floor(x * BINS_PER_OCTAVE);
    if (b < 0)
        b = 0;
    if (b >= NBINS)
        b = NBINS - 1;
    double c = (double)count, r = (double)v;
    bins[b].n += c;
    bins[b].sr += c * r;
    bins[b].sr2 += c * r * r;
    bins[b].sx += c * x;
    *octaves |= 1ULL << (63 - __builtin_clzll((uint64_t)v));
}

static double group_cv(double n, double sr, double sr2)
{
    if (n <= 0.0 || sr <= 0.0)
        return 0.0;
    double m = sr / n, var = sr2 / n - m * m;
    return var > 0.0 ? sqrt(var) / m : 0.0;
}

sd_shape_class sdi_shape_classify(const sdi_len_dist *d, sdi_shape_stats *stats)
{
    sdi_shape_stats s;
    memset(&s, 0, sizeof s);
    bin_t bins[NBINS];
    memset(bins, 0, sizeof bins);
    uint64_t octaves = 0;
    int64_t nonempty = d->n - (d->hist != NULL ? d->hist[0] : 0);
    s.nonempty = nonempty;
    sd_shape_class cls = SD_SHAPE_UNIFORM;
    if (nonempty <= 0 || d->sum <= 0)
        goto done;
    for (int v = 1; v < SDI_LEN_HIST; v++)
        if (d->hist[v] != 0)
            add_value(bins, &octaves, v, d->hist[v]);
    for (int64_t k = 0; k < d->nbig; k++)
        add_value(bins, &octaves, d->big[k], 1);

    double n = (double)nonempty;
    s.mean = (double)d->sum / n;
    double sq = sdi_len_dist_sq_dev(d, s.mean) - (double)d->hist[0] * s.mean * s.mean;
    s.cv = sq > 0.0 ? sqrt(sq / n) / s.mean : 0.0;
    s.max_mean = (double)d->max / s.mean;
    int64_t top = sdi_nearest_rank(nonempty, 1, 100);
    s.top1_share = (double)sdi_len_dist_top_sum(d, top) / (double)d->sum;
    int b_lo = (int)ceil(log2(2.0 * s.mean)), b_hi = 63 - __builtin_clzll((uint64_t)d->max);
    if (b_lo < 0)
        b_lo = 0;
    for (int b = b_lo; b <= b_hi; b++) {
        s.tail_octaves++;
        s.tail_occupied += (int)((octaves >> b) & 1u);
    }

    /* Otsu split of log2 r: maximise w0·w1·(μ0 − μ1)² over the bin boundaries. */
    double tn = 0.0, tx = 0.0;
    for (int b = 0; b < NBINS; b++) {
        tn += bins[b].n;
        tx += bins[b].sx;
    }
    double best = -1.0, n0 = 0.0, x0 = 0.0;
    int split = -1;
    for (int t = 1; t < NBINS; t++) {
        n0 += bins[t - 1].n;
        x0 += bins[t - 1].sx;
        double n1 = tn - n0;
        if (n0 <= 0.0 || n1 <= 0.0 || bins[t].n == 0.0)
            continue; /* only boundaries just below an occupied bin (one per gap) */
        double m0 = x0 / n0, m1 = (tx - x0) / n1;
        double between = n0 * n1 * (m0 - m1) * (m0 - m1);
        if (between > best) {
            best = between;
            split = t;
        }
    }
    if (split > 0) {
        bin_t lo = {0, 0, 0, 0}, hi = {0, 0, 0, 0};
        for (int b = 0; b < NBINS; b++) {
            bin_t *g = b < split ? &lo : &hi;
            g->n += bins[b].n;
            g->sr += bins[b].sr;
            g->sr2 += bins[b].sr2;
        }
        s.w_low = lo.n / n;
        s.w_high = hi.n / n;
        s.mean_low = lo.sr / lo.n;
        s.mean_high = hi.sr / hi.n;
        s.cv_low = group_cv(lo.n, lo.sr, lo.sr2);
        s.cv_high = group_cv(hi.n, hi.sr, hi.sr2);
        if (s.w_low >= BIMODAL_MIN_MASS && s.w_high >= BIMODAL_MIN_MASS &&
            s.cv_low <= BIMODAL_MAX_GROUP_CV && s.cv_high <= BIMODAL_MAX_GROUP_CV &&
            s.mean_high >= BIMODAL_MIN_RATIO * s.mean_low) {
            cls = SD_SHAPE_BIMODAL;
            goto done;
        }
    }
    if (s.cv <= UNIFORM_MAX_CV && s.max_mean <= UNIFORM_MAX_MAX_MEAN)
        cls = SD_SHAPE_UNIFORM;
    else if (s.cv <= MODERATE_MAX_CV && s.max_mean <= MODERATE_MAX_MAX_MEAN)
        cls = SD_SHAPE_MODERATE;
    else if (s.tail_octaves >= POWER_MIN_OCTAVES &&
             (double)s.tail_occupied >= POWER_MIN_OCCUPIED * (double)s.tail_octaves &&
             s.top1_share >= POWER_MIN_TOP1)
        cls = SD_SHAPE_POWER_LAW;
    else
        cls = SD_SHAPE_SKEWED;
done:
    if (stats != NULL)
        *stats = s;
    return cls;
}
