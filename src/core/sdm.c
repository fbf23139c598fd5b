/* src/core/sdm.c: the binary .sdm matrix format: header, raw arrays read with one
 * read each, an XXH3-64 checksum of everything before it, full validation on read. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "io.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error ".sdm I/O writes host arrays as they are: a little-endian host is required"
#endif

/* Where the bytes come from: an opened file (one read per array) or memory (the
 * fuzzer). A read error is kept in err. */
typedef struct {
    sdi_input *in;
    const unsigned char *mem;
    size_t len, pos;
    sd_status err;
} sdm_src;

static bool src_get(sdm_src *s, void *dst, size_t n)
{
    if (n == 0)
        return true;
    if (s->in != NULL) {
        size_t got = 0;
        s->err = sdi_input_read(s->in, dst, n, &got);
        return s->err == SD_OK && got == n;
    }
    if (s->len - s->pos < n)
        return false;
    memcpy(dst, s->mem + s->pos, n);
    s->pos += n;
    return true;
}

static int64_t get_i64(const unsigned char *p)
{
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Reads and checks a whole .sdm of total_len bytes. */
static sd_status sdm_load(sdm_src *s, uint64_t total_len, sd_csr *out)
{
    unsigned char h[SDI_SDM_HEADER_BYTES];
#define SD_FREE_ALL sd_csr_free(out)
    bool header = total_len >= SDI_SDM_HEADER_BYTES && src_get(s, h, sizeof h);
    if (!header && s->err != SD_OK)
        return s->err;
    if (!header)
        return SDI_ERR(SD_ERR_PARSE, "the .sdm file is %llu bytes, shorter than its %d-byte "
                                     "header", (unsigned long long)total_len,
                       SDI_SDM_HEADER_BYTES);
    if (memcmp(h, SDI_SDM_MAGIC, 8) != 0)
        return SDI_ERR(SD_ERR_PARSE, "not an .sdm file (bad magic bytes)");
    uint32_t version = get_u32(h + 8), flags = get_u32(h + 12);
    if (version != SDI_SDM_VERSION)
        return SDI_ERR(SD_ERR_PARSE, ".sdm format version %u is not supported (this library "
                                     "reads version %u)", version, SDI_SDM_VERSION);
    if (flags != 0)
        return SDI_ERR(SD_ERR_PARSE, "unknown .sdm flags 0x%x", flags);
    int64_t rows = get_i64(h + 16), cols = get_i64(h + 24), nnz = get_i64(h + 32);
    if (rows < 0 || rows > INT32_MAX || cols < 0 || cols > INT32_MAX || nnz < 0)
        return SDI_ERR(SD_ERR_PARSE, "bad sizes in the .sdm header (rows %lld, cols %lld, "
                                     "nnz %lld)", (long long)rows, (long long)cols,
                       (long long)nnz);
    /* The sizes must account for the file's length exactly, before anything is
     * allocated: a corrupt header cannot make us allocate more than the file holds. */
    uint64_t need = 0;
    bool ovf = __builtin_mul_overflow((uint64_t)nnz, 8u, &need) ||
               __builtin_add_overflow(need, 8u * ((uint64_t)rows + 1) + SDI_SDM_HEADER_BYTES + 8u,
                                      &need);
    if (ovf || need != total_len) {
        char needs[32];
        if (ovf)
            snprintf(needs, sizeof needs, "more than 2^64");
        else
            snprintf(needs, sizeof needs, "%llu", (unsigned long long)need);
        return SDI_ERR(SD_ERR_PARSE, "the .sdm file is %llu bytes but its header (rows %lld, "
                                     "nnz %lld) implies %s: truncated or trailing data",
                       (unsigned long long)total_len, (long long)rows, (long long)nnz, needs);
    }
    SD_TRY(sdi_csr_alloc(out, (int32_t)rows, (int32_t)cols, nnz));
    size_t rp_bytes = ((size_t)rows + 1) * sizeof *out->rowptr;
    size_t nz_bytes = (size_t)nnz * 4u;
    unsigned char tail[8];
    if (!src_get(s, out->rowptr, rp_bytes) || !src_get(s, out->colind, nz_bytes) ||
        !src_get(s, out->vals, nz_bytes) || !src_get(s, tail, sizeof tail)) {
        SD_FREE_ALL;
        if (s->err != SD_OK)
            return s->err; /* the message is the read error's */
        return SDI_ERR(SD_ERR_PARSE, "the .sdm file ends early");
    }
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, h, sizeof h);
    XXH3_64bits_update(&st, out->rowptr, rp_bytes);
    XXH3_64bits_update(&st, out->colind, nz_bytes);
    XXH3_64bits_update(&st, out->vals, nz_bytes);
    uint64_t sum = XXH3_64bits_digest(&st), stored;
    memcpy(&stored, tail, sizeof stored);
    if (sum != stored) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_PARSE, "checksum mismatch (stored %016llx, computed %016llx): "
                                     "the .sdm file is corrupt", (unsigned long long)stored,
                       (unsigned long long)sum);
    }
    sd_status s2 = sd_csr_check(out);
    if (s2 != SD_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", sd_last_error());
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_PARSE, "corrupt .sdm data: %s", msg);
    }
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_sdm_read_input(sdi_input *in, sd_csr *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "output matrix is NULL");
    memset(out, 0, sizeof *out);
    if (in == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "input is NULL");
    /* The header's sizes are checked against the length before anything is allocated,
     * so that a few corrupt bytes cannot claim gigabytes: a stream has no length. */
    if (!in->regular)
        return SDI_ERR(SD_ERR_UNSUPPORTED, ".sdm files must be regular files: cannot read "
                                           "one from %s (save it to a file first)",
                       in->stream_kind);
    sdm_src s = {in, NULL, 0, 0, SD_OK};
    return sdm_load(&s, (uint64_t)in->size, out);
}

sd_status sdi_sdm_read_mem(const void *buf, size_t len, sd_csr *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "output matrix is NULL");
    memset(out, 0, sizeof *out);
    if (buf == NULL && len > 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "buffer is NULL");
    sdm_src s = {NULL, buf, len, 0, SD_OK};
    return sdm_load(&s, len, out);
}

sd_status sdi_sdm_write(const char *path, const sd_csr *a)
{
    sdi_atomic_file af;
    FILE *f = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        if (f != NULL)                                                                     \
            fclose(f);                                                                     \
        sdi_atomic_abort(&af);                                                             \
    } while (0)
    SD_TRY(sdi_atomic_begin(&af, path));
    int fd = dup(af.fd);
    if (fd >= 0 && (f = fdopen(fd, "wb")) == NULL)
        close(fd);
    if (f == NULL) {
        int e = errno;
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    unsigned char h[SDI_SDM_HEADER_BYTES];
    memset(h, 0, sizeof h);
    memcpy(h, SDI_SDM_MAGIC, 8);
    uint32_t version = SDI_SDM_VERSION, flags = 0;
    int64_t dims[3] = {a->rows, a->cols, a->nnz};
    memcpy(h + 8, &version, 4);
    memcpy(h + 12, &flags, 4);
    memcpy(h + 16, dims, sizeof dims);
    size_t rp_bytes = ((size_t)a->rows + 1) * sizeof *a->rowptr;
    size_t nz_bytes = (size_t)a->nnz * 4u;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, h, sizeof h);
    XXH3_64bits_update(&st, a->rowptr, rp_bytes);
    if (nz_bytes > 0) {
        XXH3_64bits_update(&st, a->colind, nz_bytes);
        XXH3_64bits_update(&st, a->vals, nz_bytes);
    }
    uint64_t sum = XXH3_64bits_digest(&st);
    bool ok = fwrite(h, 1, sizeof h, f) == sizeof h &&
              fwrite(a->rowptr, 1, rp_bytes, f) == rp_bytes &&
              (nz_bytes == 0 || (fwrite(a->colind, 1, nz_bytes, f) == nz_bytes &&
                                 fwrite(a->vals, 1, nz_bytes, f) == nz_bytes)) &&
              fwrite(&sum, 1, sizeof sum, f) == sizeof sum;
    int rc = fclose(f);
    f = NULL;
    if (!ok || rc != 0) {
        int e = errno;
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    return sdi_atomic_commit(&af);
#undef SD_FREE_ALL
}
