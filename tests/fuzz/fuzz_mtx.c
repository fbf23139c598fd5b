/* tests/fuzz/fuzz_mtx.c: libFuzzer target for the matrix readers. Each input is read as
 * Matrix Market (plain or gzip, from memory) with the default block and with a tiny
 * block, which must agree (exactly for plain text); a success must be a valid canonical
 * CSR; nothing may leak. The same bytes also go through the .sdm reader. Any
 * disagreement aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"

static bool same_csr(const sd_csr *a, const sd_csr *b)
{
    return sdi_csr_same_pattern(a, b) &&
           (a->nnz == 0 || memcmp(a->vals, b->vals, (size_t)a->nnz * sizeof(float)) == 0);
}

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_mtx: %s (last error: %s)\n", what, sd_last_error());
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    long long live0 = sdi_alloc_live_bytes();
    sd_csr a, b;
    sdi_mtx_info ia, ib;
    sd_status sa = sdi_mtx_read_mem((const char *)data, size, 0, &a, &ia);
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", sd_last_error());
    /* A block size from the input's length: 1 to 13 bytes. */
    sd_status sb = sdi_mtx_read_mem((const char *)data, size, 1 + size % 13, &b, &ib);
    /* Reading streams: with gzip, a parse error early in the text or damage later in
     * the compressed stream may be met first depending on the block size; success and
     * failure must still agree. Plain text must agree exactly. */
    bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    if ((sa == SD_OK) != (sb == SD_OK) || (!gzip && sa != sb))
        fail("status depends on the block size");
    if (sa == SD_OK) {
        if (!same_csr(&a, &b) || ia.nnz_stored != ib.nnz_stored || ia.lines != ib.lines)
            fail("result depends on the block size");
        if (sd_csr_check(&a) != SD_OK)
            fail("a successful read is not a valid CSR");
        if (a.nnz != ia.nnz || ia.nnz_stored > ia.nnz_declared)
            fail("inconsistent read summary");
    } else {
        if (!gzip && strcmp(msg, sd_last_error()) != 0)
            fail("message depends on the block size");
        if (a.rowptr != NULL || a.colind != NULL || a.vals != NULL || a.rows || a.nnz)
            fail("output not zeroed after a failure");
        if (msg[0] == '\0')
            fail("failure without a message");
    }
    sd_csr_free(&a);
    sd_csr_free(&b);
    sd_csr c;
    if (sdi_sdm_read_mem(data, size, &c) == SD_OK) {
        if (sd_csr_check(&c) != SD_OK)
            fail("a successful .sdm read is not a valid CSR");
        sd_csr_free(&c);
    } else if (c.rowptr != NULL) {
        fail(".sdm output not zeroed after a failure");
    }
    if (sdi_alloc_live_bytes() != live0)
        fail("leak");
    return 0;
}
