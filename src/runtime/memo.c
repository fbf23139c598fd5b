/* src/runtime/memo.c: releasing the context's cubin memo (memo.h); lookups and inserts
 * are the JIT's (jit.c). */
#include <string.h>

#include "memo.h"

void sdi_cubin_free(sdi_cubin *c)
{
    if (c == NULL)
        return;
    sdi_free(c->cubin);
    sdi_free(c->log);
    memset(c, 0, sizeof *c);
}

void sdi_memo_entry_free(sdi_memo_entry *e)
{
    if (e == NULL)
        return;
    sdi_cubin_free(&e->cubin);
    sdi_free(e->key_text);
    sdi_free(e);
}

void sdi_memo_clear(sd_context *ctx)
{
    sdi_memo_entry *e = ctx->memo;
    while (e != NULL) {
        sdi_memo_entry *next = e->next;
        sdi_memo_entry_free(e);
        e = next;
    }
    ctx->memo = NULL;
}
