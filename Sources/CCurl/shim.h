#ifndef AF_CCURL_SHIM_H
#define AF_CCURL_SHIM_H

/* Typed, non-variadic wrappers around libcurl's variadic entry points, so that Swift can
 * call them. Each wrapper is one line and adds no behaviour. */

#include <curl/curl.h>
#include <sys/socket.h>

static inline CURLcode afcurl_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLMcode afcurl_multi_setopt_long(CURLM *h, CURLMoption o, long v) { return curl_multi_setopt(h, o, v); }
static inline CURLcode afcurl_easy_setopt_off_t(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode afcurl_easy_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode afcurl_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode afcurl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }

typedef size_t (*afcurl_data_cb)(char *buffer, size_t size, size_t nitems, void *userdata);
typedef int (*afcurl_xferinfo_cb)(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
typedef int (*afcurl_debug_cb)(CURL *handle, curl_infotype type, char *data, size_t size, void *userdata);
typedef CURLcode (*afcurl_sslctx_cb)(CURL *curl, void *ssl_ctx, void *userdata);
typedef int (*afcurl_prereq_cb)(void *userdata, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port, int conn_local_port);
typedef int (*afcurl_seek_cb)(void *userdata, curl_off_t offset, int origin);

static inline CURLcode afcurl_easy_setopt_data_cb(CURL *h, CURLoption o, afcurl_data_cb cb) { return curl_easy_setopt(h, o, cb); }
static inline CURLcode afcurl_easy_setopt_xferinfo_cb(CURL *h, afcurl_xferinfo_cb cb) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb); }
static inline CURLcode afcurl_easy_setopt_debug_cb(CURL *h, afcurl_debug_cb cb) { return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, cb); }
static inline CURLcode afcurl_easy_setopt_sslctx_cb(CURL *h, afcurl_sslctx_cb cb) { return curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, cb); }
static inline CURLcode afcurl_easy_setopt_prereq_cb(CURL *h, afcurl_prereq_cb cb) { return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, cb); }
static inline CURLcode afcurl_easy_setopt_opensocket_cb(CURL *h, curl_opensocket_callback cb) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, cb); }
static inline CURLcode afcurl_easy_setopt_seek_cb(CURL *h, afcurl_seek_cb cb) { return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, cb); }

static inline CURLcode afcurl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode afcurl_easy_getinfo_off_t(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode afcurl_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode afcurl_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode afcurl_easy_getinfo_slist(CURL *h, CURLINFO i, struct curl_slist **v) { return curl_easy_getinfo(h, i, v); }

static inline CURLSHcode afcurl_share_setopt_long(CURLSH *s, CURLSHoption o, long v) { return curl_share_setopt(s, o, v); }

static inline curl_version_info_data *afcurl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }
/* CURL_VERSION_THREADSAFE (7.84.0): curl_global_init may run beside other threads. Its bit,
 * for headers older than that. */
static inline unsigned int afcurl_feature_threadsafe(void) { return 1u << 30; }
static inline unsigned long afcurl_auth_digest(void) { return CURLAUTH_DIGEST; }

/* CURLPAUSE_* and CURL_READFUNC_* are macros Swift cannot import as values. */
static inline int afcurl_pause_all(void) { return CURLPAUSE_ALL; }
static inline int afcurl_pause_cont(void) { return CURLPAUSE_CONT; }
static inline size_t afcurl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
static inline size_t afcurl_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }
static inline long afcurl_http_version(int which) {
    switch (which) {
    case 10: return CURL_HTTP_VERSION_1_0;
    case 11: return CURL_HTTP_VERSION_1_1;
    case 20: return CURL_HTTP_VERSION_2TLS;
    case 21: return CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
    default: return CURL_HTTP_VERSION_NONE;
    }
}
static inline long afcurl_sslversion(int which, int highest) {
    long floor = which == 13 ? CURL_SSLVERSION_TLSv1_3 : which == 12 ? CURL_SSLVERSION_TLSv1_2 : CURL_SSLVERSION_DEFAULT;
    switch (highest) {
    case 12: return floor | CURL_SSLVERSION_MAX_TLSv1_2;
    case 13: return floor | CURL_SSLVERSION_MAX_TLSv1_3;
    default: return floor;
    }
}

#endif
