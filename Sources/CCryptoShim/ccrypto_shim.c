#include "ccrypto_shim.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

int ccrypto_shim_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *data, size_t data_length,
                             uint8_t out[CCRYPTO_SHIM_SHA256_BYTES]) {
    unsigned int written = 0;
    /* HMAC() takes the key length as an int. */
    if (key_length > (size_t)0x7fffffff) return 0;
    if (HMAC(EVP_sha256(), key, (int)key_length, data, data_length, out, &written) == NULL) return 0;
    return written == CCRYPTO_SHIM_SHA256_BYTES;
}

int ccrypto_shim_sha256(const uint8_t *data, size_t data_length, uint8_t out[CCRYPTO_SHIM_SHA256_BYTES]) {
    unsigned int written = 0;
    if (EVP_Digest(data, data_length, out, &written, EVP_sha256(), NULL) != 1) return 0;
    return written == CCRYPTO_SHIM_SHA256_BYTES;
}

int ccrypto_shim_equal(const uint8_t *a, const uint8_t *b, size_t length) {
    return CRYPTO_memcmp(a, b, length) == 0;
}
