/* src/runtime/memo.h: the context's in-process memo of compiled cubins, keyed by the JIT
 * request's hash. */
#ifndef SDI_MEMO_H
#define SDI_MEMO_H

#include <stdbool.h>

#include "context.h"
#include "jit.h"

/* The cubin for req from the context's memo, compiling (once) on a miss. The pointer
 * stays valid until the context is destroyed. Thread-safe. *hit may be NULL. */
SDI_HIDDEN sd_status sdi_jit_get(sd_context *ctx, const sdi_jit_request *req,
                                 const sdi_cubin **out, bool *hit);

/* Seeds the memo with a cubin compiled earlier for req (a kernel-cache hit), so that
 * the sdi_jit_get that follows is a hit and NVRTC is not run. The cubin is copied. */
SDI_HIDDEN sd_status sdi_jit_memo_put(sd_context *ctx, const sdi_jit_request *req,
                                      const void *cubin, size_t size);

/* Frees the memo of ctx (the context's close). In memo.c with the entry's release: closing
 * a context does not pull the compiler into a program that only runs kernels. */
SDI_HIDDEN void sdi_memo_clear(sd_context *ctx);

/* One memo entry: the request's key text and hash, and its cubin. */
struct sdi_memo_entry {
    sdi_hash128 hash;
    char *key_text;
    size_t key_len;
    sdi_cubin cubin;
    sdi_memo_entry *next;
};
SDI_HIDDEN void sdi_memo_entry_free(sdi_memo_entry *e);

#endif /* SDI_MEMO_H */
