/* bench/bench_common.h: aggregates shared by the benchmark programs that include it:
 * geometric mean with a 95 % bootstrap interval (20 000 resamples of the log speed-ups,
 * seeded: docs/ARCHITECTURE.md "Benchmarks, roofline and aggregates") and the median. */
#ifndef SD_BENCH_COMMON_H
#define SD_BENCH_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorts a copy); 0 when n = 0. */
static double bench_median(const double *v, int n)
{
    if (n <= 0)
        return 0;
    double *c = malloc((size_t)n * sizeof *c);
    if (c == NULL)
        return NAN;
    for (int i = 0; i < n; i++)
        c[i] = v[i];
    qsort(c, (size_t)n, sizeof *c, bench_cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

/* Geometric mean of x[0..n) (all > 0) and its 95 % bootstrap interval. */
static double bench_geomean_ci(const double *x, int n, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (n <= 0)
        return NAN;
    double s = 0;
    for (int i = 0; i < n; i++)
        s += log(x[i]);
    const int R = 20000;
    double *means = malloc(R * sizeof *means);
    if (means == NULL)
        return exp(s / n);
    uint64_t st = 0x9e3779b97f4a7c15ull;
    for (int r = 0; r < R; r++) {
        double m = 0;
        for (int i = 0; i < n; i++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17; /* xorshift64 */
            m += log(x[st % (uint64_t)n]);
        }
        means[r] = m / n;
    }
    qsort(means, R, sizeof *means, bench_cmp_double);
    *lo = exp(means[(int)(0.025 * R)]);
    *hi = exp(means[(int)(0.975 * R) - 1]);
    free(means);
    return exp(s / n);
}

#endif /* SD_BENCH_COMMON_H */
