/* src/core/rng.h: the one pseudo-random generator of the library (generators, model
 * training, forests, sampling): deterministic by (seed, stream, index), never by thread. */
#ifndef SDI_RNG_H
#define SDI_RNG_H

#include <math.h>
#include <stdint.h>

/* Pseudo-random numbers: splitmix64 (Steele, Lea & Flood 2014) to derive seeds and as a
 * counter-based hash, xoshiro256** (Blackman & Vigna 2018) for streams. A stream is
 * named by (seed, stream id, index), e.g. (seed, "row lengths", row): what a row gets
 * never depends on which thread made it. */
#define SDI_GOLDEN64 0x9e3779b97f4a7c15ull

static inline uint64_t sdi_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t sdi_hash3(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint64_t h = sdi_mix64(seed + SDI_GOLDEN64);
    h = sdi_mix64(h ^ (stream * SDI_GOLDEN64 + 0x632be59bd9b4e019ull));
    return sdi_mix64(h + index * SDI_GOLDEN64);
}

typedef struct {
    uint64_t s[4];
} sdi_rng;

static inline void sdi_rng_seed(sdi_rng *r, uint64_t seed, uint64_t stream, uint64_t index)
{
    uint64_t x = sdi_hash3(seed, stream, index);
    for (int k = 0; k < 4; k++) {
        x += SDI_GOLDEN64; /* the splitmix64 sequence */
        r->s[k] = sdi_mix64(x);
    }
}

static inline uint64_t sdi_rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t sdi_rng_next(sdi_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t out = sdi_rotl64(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = sdi_rotl64(s[3], 45);
    return out;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double sdi_rng_uniform(sdi_rng *r)
{
    return (double)(sdi_rng_next(r) >> 11) * 0x1p-53;
}

/* Uniform integer in [0, n), n ≥ 1, without bias (Lemire's multiply-and-reject). */
static inline uint64_t sdi_rng_below(sdi_rng *r, uint64_t n)
{
    unsigned __int128 m = (unsigned __int128)sdi_rng_next(r) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t threshold = (0 - n) % n;
        while (low < threshold) {
            m = (unsigned __int128)sdi_rng_next(r) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Uniform in the open interval (0, 1) (for logarithms: Box–Muller and the like). */
static inline double sdi_rng_open01(sdi_rng *r)
{
    return ((double)(sdi_rng_next(r) >> 11) + 0.5) * 0x1p-53;
}

/* Standard normal (Box–Muller, one of the pair); generators and model initialisation. */
static inline double sdi_rng_normal(sdi_rng *r)
{
    double u1 = 1.0 - sdi_rng_uniform(r); /* (0, 1]: log is finite */
    double u2 = sdi_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Fisher–Yates shuffle of order[0..n) from r's stream. */
static inline void sdi_rng_shuffle_int(sdi_rng *r, int *order, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)sdi_rng_below(r, (uint64_t)i + 1);
        int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
}

#endif /* SDI_RNG_H */
