/*
 * base64: standard base64 (RFC 4648 section 4, with padding) through
 * OpenSSL's EVP encoder, as Kubernetes writes []byte fields (ConfigMap
 * binaryData, Secret data, kubeconfig certificate-authority-data).
 */
#ifndef CUEUE_UTIL_BASE64_H
#define CUEUE_UTIL_BASE64_H

#include <stddef.h>

/* The base64 text of data[0..n), one line, NUL-terminated. Caller frees. */
char *cu_base64_encode(const void *data, size_t n);

/* The bytes of the base64 text b64[0..n) (whitespace and newlines between
 * groups are allowed), plus a NUL after them so that text can be used as a
 * string; *len (when not NULL) gets their count without the NUL. Returns
 * NULL for text that is not base64 (a bad character, a missing or
 * misplaced '='). Caller frees. */
unsigned char *cu_base64_decode(const char *b64, size_t n, size_t *len);

#endif
