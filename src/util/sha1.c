/* sha1: SHA-1 via OpenSSL's EVP interface (see sha1.h). */
#include "util/sha1.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

static void sha1_raw(const void *data, size_t n, unsigned char md[EVP_MAX_MD_SIZE])
{
    unsigned int len = 0;
    if (!EVP_Digest(data, n, md, &len, EVP_sha1(), NULL) || len != 20)
        abort(); /* libcrypto without SHA-1 is a broken installation */
}

void sha1_hex(const void *data, size_t n, char out[41])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    sha1_raw(data, n, md);
    for (unsigned i = 0; i < 20; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

uint32_t sha1_u32(const void *data, size_t n)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    sha1_raw(data, n, md);
    return (uint32_t)md[0] << 24 | (uint32_t)md[1] << 16 | (uint32_t)md[2] << 8 | md[3];
}
