/* sha1: SHA-1 via OpenSSL's EVP interface (see sha1.h). */
#include "util/sha1.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

void sha1_hex(const void *data, size_t n, char out[41])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!EVP_Digest(data, n, md, &len, EVP_sha1(), NULL) || len != 20)
        abort(); /* libcrypto without SHA-1 is a broken installation */
    for (unsigned i = 0; i < 20; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}
