#include <libwebsockets.h>

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
