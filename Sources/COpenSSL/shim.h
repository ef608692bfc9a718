#ifndef AF_COPENSSL_SHIM_H
#define AF_COPENSSL_SHIM_H

/* OpenSSL exposes much of what af needs as macros or stack-type generics; these one-line
 * wrappers give Swift plain functions to call. */

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/ocsp.h>

static inline int afssl_init_no_atexit(void) { return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL); }
static inline int afssl_stack_x509_num(const STACK_OF(X509) *s) { return s ? sk_X509_num(s) : 0; }
static inline X509 *afssl_stack_x509_value(const STACK_OF(X509) *s, int i) { return sk_X509_value(s, i); }
static inline long afssl_ctx_set_max_proto(SSL_CTX *c, int v) { return SSL_CTX_set_max_proto_version(c, v); }
static inline long afssl_ctx_set_min_proto(SSL_CTX *c, int v) { return SSL_CTX_set_min_proto_version(c, v); }
static inline long afssl_ctx_set_tlsext_status_cb(SSL_CTX *c, int (*cb)(SSL *, void *)) { return SSL_CTX_set_tlsext_status_cb(c, cb); }
static inline long afssl_ctx_set_tlsext_status_arg(SSL_CTX *c, void *arg) { return SSL_CTX_set_tlsext_status_arg(c, arg); }
static inline long afssl_set_tlsext_status_ocsp_resp(SSL *s, unsigned char *resp, long len) { return SSL_set_tlsext_status_ocsp_resp(s, resp, len); }
// For the tests' TLS server: a callback that sees the name the client sent (SNI).
static inline long afssl_ctx_set_servername_cb(SSL_CTX *c, int (*cb)(SSL *, int *, void *), void *arg) {
    SSL_CTX_set_tlsext_servername_arg(c, arg);
    return SSL_CTX_set_tlsext_servername_callback(c, cb);
}
static inline const char *afssl_get_servername(const SSL *s) { return SSL_get_servername(s, TLSEXT_NAMETYPE_host_name); }
static inline int afssl_unrecognized_name_alert(int *alert) { *alert = SSL_AD_UNRECOGNIZED_NAME; return SSL_TLSEXT_ERR_ALERT_FATAL; }
static inline int afssl_tls1_2_version(void) { return TLS1_2_VERSION; }
static inline int afssl_tls1_3_version(void) { return TLS1_3_VERSION; }
/* The verify callback's argument outlives no transfer: no renegotiation, so a pooled
 * connection never runs the callback again after its transfer is gone. */
static inline void afssl_ctx_disable_renegotiation(SSL_CTX *c) { SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION); }

/* A certificate's subjectAltName entries (GENERAL_NAMES, from X509_get_ext_d2i): how many, one
 * of them, and the stack freed. For an entry, the DNS name (GEN_DNS) or the address bytes
 * (GEN_IPADD) it holds, with its type; NULL for other kinds. */
static inline int afssl_general_names_num(void *names) { return sk_GENERAL_NAME_num((GENERAL_NAMES *)names); }
static inline const GENERAL_NAME *afssl_general_names_value(void *names, int i) { return sk_GENERAL_NAME_value((GENERAL_NAMES *)names, i); }
static inline void afssl_general_names_free(void *names) { GENERAL_NAMES_free((GENERAL_NAMES *)names); }
static inline const ASN1_STRING *afssl_general_name_content(const GENERAL_NAME *name, int *type) {
    *type = name->type;
    if (name->type == GEN_DNS) return name->d.dNSName;
    if (name->type == GEN_IPADD) return name->d.iPAddress;
    return NULL;
}
static inline int afssl_gen_dns(void) { return GEN_DNS; }

static inline unsigned long afssl_name_flags(void) { return ASN1_STRFLGS_RFC2253 | XN_FLAG_SEP_CPLUS_SPC | XN_FLAG_FN_SN | XN_FLAG_DUMP_UNKNOWN_FIELDS; }

#endif
