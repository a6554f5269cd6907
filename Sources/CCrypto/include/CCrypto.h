// OpenSSL's libcrypto for the few primitives FeedProxy signs with: SHA-256, HMAC and a
// constant-time comparison. Plain functions over byte pointers, so Swift sees four calls and
// not OpenSSL's headers.
#ifndef FEEDPROXY_CCRYPTO_H
#define FEEDPROXY_CCRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// SHA-256 of `length` bytes at `data` (NULL when `length` is 0) into `out`: 1, or 0 on failure.
int ccrypto_sha256(const void *data, size_t length, uint8_t out[32]);

/// HMAC-SHA256 (RFC 2104) of `length` bytes at `data` under `key` into `out`: 1, or 0 on failure.
int ccrypto_hmac_sha256(const void *key, size_t key_length, const void *data, size_t length, uint8_t out[32]);

/// HMAC of `length` bytes at `data` under `key` with SHA-1, SHA-256, SHA-384 or SHA-512
/// (`algorithm` 1, 256, 384, 512: what WebSub hubs sign with) into `out`: the MAC's length, or 0.
int ccrypto_hmac(int algorithm, const void *key, size_t key_length, const void *data, size_t length, uint8_t out[64]);

/// 1 when the `length` bytes at `a` and `b` are equal, compared in time that depends on
/// `length` only (CRYPTO_memcmp).
int ccrypto_equal(const void *a, const void *b, size_t length);

#endif
