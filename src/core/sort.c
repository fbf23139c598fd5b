/* src/core/sort.c: sorting int32 arrays ascending, for every room that sorts column or
 * row lists (the CPU reference's rows, generators, format builders, analysis). An inlined
 * introsort: glibc's qsort runs a merge sort through a comparison callback, which was 40 %
 * of the CPU reference SpGEMM on a random product. */
#include "core.h"

static void insertion_i32(int32_t *v, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        const int32_t t = v[i];
        int64_t j = i;
        for (; j > 0 && v[j - 1] > t; j--)
            v[j] = v[j - 1];
        v[j] = t;
    }
}

static void sift_down_i32(int32_t *v, int64_t n, int64_t i)
{
    const int32_t t = v[i];
    for (int64_t c = 2 * i + 1; c < n; c = 2 * i + 1) {
        if (c + 1 < n && v[c + 1] > v[c])
            c++;
        if (v[c] <= t)
            break;
        v[i] = v[c];
        i = c;
    }
    v[i] = t;
}

static void heap_sort_i32(int32_t *v, int64_t n)
{
    for (int64_t i = n / 2 - 1; i >= 0; i--)
        sift_down_i32(v, n, i);
    for (int64_t e = n - 1; e > 0; e--) {
        const int32_t t = v[0];
        v[0] = v[e];
        v[e] = t;
        sift_down_i32(v, e, 0);
    }
}

/* Quicksort (median-of-three pivot, Hoare partition) on the larger part in a loop and the
 * smaller by recursion (depth ≤ log2 n); heap sort past the depth limit (no quadratic
 * case), insertion sort below 24 entries. */
static void intro_sort_i32(int32_t *v, int64_t n, int depth)
{
    while (n > 24) {
        if (depth-- == 0) {
            heap_sort_i32(v, n);
            return;
        }
        const int32_t a = v[0], b = v[n / 2], c = v[n - 1];
        const int32_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int64_t i = -1, j = n;
        for (;;) {
            do
                i++;
            while (v[i] < pivot);
            do
                j--;
            while (v[j] > pivot);
            if (i >= j)
                break;
            const int32_t t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
        /* [0, j] ≤ pivot ≤ [j + 1, n), both parts non-empty. */
        const int64_t nl = j + 1, nr = n - nl;
        if (nl < nr) {
            intro_sort_i32(v, nl, depth);
            v += nl;
            n = nr;
        } else {
            intro_sort_i32(v + nl, nr, depth);
            n = nl;
        }
    }
    insertion_i32(v, n);
}

void sdi_sort_i32(int32_t *v, int64_t n)
{
    if (v == NULL || n < 2)
        return;
    int depth = 0;
    for (int64_t m = n; m > 1; m >>= 1)
        depth += 2;
    intro_sort_i32(v, n, depth);
}
