/*
 * sha1: SHA-1 hex digests (OpenSSL libcrypto), used where the ecosystem
 * derives names from a hash (Kueue's Workload and ProvisioningRequest names).
 */
#ifndef CUEUE_UTIL_SHA1_H
#define CUEUE_UTIL_SHA1_H

#include <stddef.h>

/* Write the 40-hex-digit SHA-1 of data[0..n) plus a NUL into out. */
void sha1_hex(const void *data, size_t n, char out[41]);

#endif
