/*
 * sha1: SHA-1 hex digests (OpenSSL libcrypto), used where the ecosystem
 * derives names from a hash (Kueue's Workload and ProvisioningRequest names).
 */
#ifndef CUEUE_UTIL_SHA1_H
#define CUEUE_UTIL_SHA1_H

#include <stddef.h>
#include <stdint.h>

/* Write the 40-hex-digit SHA-1 of data[0..n) plus a NUL into out. */
void sha1_hex(const void *data, size_t n, char out[41]);
/* The first four bytes of the SHA-1 of data[0..n) as a big-endian number
 * (the value of the hex digest's first 8 digits): a stable hash for
 * drawing a number (a port, an address) from a key. */
uint32_t sha1_u32(const void *data, size_t n);

#endif
