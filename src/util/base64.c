/* base64: see base64.h. */
#include "util/base64.h"

#include <limits.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/xalloc.h"

char *cu_base64_encode(const void *data, size_t n)
{
    if (n > (size_t)INT_MAX / 4 * 3)
        abort(); /* over 1.5 GiB: no caller comes near (request bodies are capped) */
    unsigned char *out = xmalloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock(out, data, (int)n);
    return (char *)out;
}

unsigned char *cu_base64_decode(const char *b64, size_t n, size_t *len)
{
    if (n > INT_MAX)
        return NULL;
    unsigned char *out = xmalloc(n / 4 * 3 + 4);
    EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
    if (!ctx)
        abort(); /* out of memory, as xmalloc */
    int got = 0, tail = 0;
    EVP_DecodeInit(ctx);
    /* -1: not base64; Final: -1 for an incomplete last group */
    bool ok = EVP_DecodeUpdate(ctx, out, &got, (const unsigned char *)b64, (int)n) >= 0 &&
              EVP_DecodeFinal(ctx, out + got, &tail) == 1;
    EVP_ENCODE_CTX_free(ctx);
    if (!ok) {
        xfree(out);
        return NULL;
    }
    got += tail;
    out[got] = '\0';
    if (len)
        *len = (size_t)got;
    return out;
}
