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

int ccrypto_hmac(int algorithm, const void *key, size_t key_length, const void *data, size_t length, uint8_t out[64]) {
    static const uint8_t empty = 0;
    const EVP_MD *md;
    switch (algorithm) {
    case 1: md = EVP_sha1(); break;
    case 256: md = EVP_sha256(); break;
    case 384: md = EVP_sha384(); break;
    case 512: md = EVP_sha512(); break;
    default: return 0;
    }
    unsigned int size = 0;
    if (key_length > INT_MAX) return 0;
    if (HMAC(md, key_length ? key : &empty, (int)key_length, length ? data : &empty, length, out, &size) == NULL) return 0;
    return (int)size;
}
