/* OpenSSL 3's libcrypto from Debian (`libssl-dev`): HMAC-SHA256, SHA-256, CRYPTO_memcmp. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
