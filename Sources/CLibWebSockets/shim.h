#include <libwebsockets.h>
#include <openssl/ssl.h>

/* Function-like macros and 64-bit option macros that Swift cannot import directly. */

/** Headroom lws needs in front of every buffer passed to lws_write(). */
static inline size_t shim_lws_pre(void) { return LWS_PRE; }

/** Context options the transport uses (see lws-context-vhost.h). */
static inline uint64_t shim_lws_option_validate_utf8(void) { return LWS_SERVER_OPTION_VALIDATE_UTF8; }
static inline uint64_t shim_lws_option_fail_upon_unable_to_bind(void) { return LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND; }
static inline uint64_t shim_lws_option_disable_ipv6(void) { return LWS_SERVER_OPTION_DISABLE_IPV6; }
static inline int shim_lws_context_port_no_listen(void) { return CONTEXT_PORT_NO_LISTEN; }

/** TLS context options (lws-context-vhost.h); 64-bit `1ll << n` values. */
static inline uint64_t shim_lws_option_do_ssl_global_init(void) { return LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT; }
static inline uint64_t shim_lws_option_disable_os_ca_certs(void) { return LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS; }

/**
 * The server's TLS profile: Mozilla's "intermediate" configuration (TLS 1.2 and 1.3; for TLS 1.2 only
 * forward-secret ECDHE suites with AEAD ciphers). C string literals: static storage, as lws reads them
 * while it builds its SSL_CTX.
 */
static inline const char *shim_tls12_server_ciphers(void) {
    return "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
           "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
}
static inline const char *shim_tls13_server_ciphers(void) {
    return "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
}
/** SSL_OP_* bits (function-like macros in OpenSSL 3): no SSLv3, TLS 1.0 or 1.1; no compression (CRIME). */
static inline long shim_tls_server_options(void) {
    return (long)(SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1 | SSL_OP_NO_COMPRESSION);
}
