// OpenSSL, the TLS library Debian's libwebsockets is built against: the client side of https://
// (SimpleHTTPClient) and the credential hashes and random tokens (SpeakerSyncAuth) use it directly.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
