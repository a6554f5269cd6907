#include "CCrypto.h"
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

int ccrypto_sha256(const void *data, size_t length, uint8_t out[32]) {
    static const uint8_t empty = 0;
    unsigned int size = 0;
    return EVP_Digest(length ? data : &empty, length, out, &size, EVP_sha256(), NULL) == 1 && size == 32;
}

int ccrypto_hmac_sha256(const void *key, size_t key_length, const void *data, size_t length, uint8_t out[32]) {
    static const uint8_t empty = 0;
    unsigned int size = 0;
    if (key_length > INT_MAX) return 0;
    return HMAC(EVP_sha256(), key_length ? key : &empty, (int)key_length, length ? data : &empty, length, out, &size) != NULL
        && size == 32;
}

int ccrypto_equal(const void *a, const void *b, size_t length) {
    return CRYPTO_memcmp(a, b, length) == 0;
}
