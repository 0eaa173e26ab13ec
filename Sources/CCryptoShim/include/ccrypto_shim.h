/*
 * ccrypto_shim: the three libcrypto calls thumbd's signed URLs and client keys need, with plain
 * byte-buffer arguments.
 *
 * Why this exists: OpenSSL's functions take `EVP_MD *` and `unsigned int *` and return
 * `unsigned char *`; these wrappers keep those C types on this side, so Swift sees only byte
 * pointers and lengths (as swift-crypto's CCryptoBoringSSLShims does).
 */
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a SHA-256 digest, and so of an HMAC-SHA256 (FIPS 180-4, RFC 2104). */
#define CCRYPTO_SHIM_SHA256_BYTES 32

/* HMAC-SHA256 (RFC 2104) of `data` under `key` into `out` (32 bytes), by OpenSSL's `HMAC()`.
 * Returns 1 on success, 0 when libcrypto failed (it does not for these arguments). */
int ccrypto_shim_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *data, size_t data_length,
                             uint8_t out[CCRYPTO_SHIM_SHA256_BYTES]);

/* SHA-256 (FIPS 180-4) of `data` into `out` (32 bytes), by `EVP_Digest()`. 1 on success, else 0. */
int ccrypto_shim_sha256(const uint8_t *data, size_t data_length, uint8_t out[CCRYPTO_SHIM_SHA256_BYTES]);

/* Whether the `length` bytes at `a` and `b` are equal, in time that depends on `length` alone
 * (OpenSSL's `CRYPTO_memcmp`): 1 when equal, 0 when not. */
int ccrypto_shim_equal(const uint8_t *a, const uint8_t *b, size_t length);

#ifdef __cplusplus
}
#endif

#endif
