// libcurl's setopt/getinfo are variadic, which Swift cannot call: these typed
// wrappers are the whole reason this target exists.
#ifndef FEEDPROXY_CCURL_H
#define FEEDPROXY_CCURL_H

#include <curl/curl.h>
#include <stdint.h>

typedef size_t (*ccurl_data_fn)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*ccurl_prereq_fn)(void *clientp, char *primary_ip, char *local_ip, int primary_port, int local_port);
typedef curl_socket_t (*ccurl_opensocket_fn)(void *clientp, curlsocktype purpose, struct curl_sockaddr *address);

CURLcode ccurl_global_init(void);
CURLcode ccurl_setopt_long(CURL *h, CURLoption opt, long value);
CURLcode ccurl_setopt_off(CURL *h, CURLoption opt, int64_t value);
CURLcode ccurl_setopt_string(CURL *h, CURLoption opt, const char *value);
CURLcode ccurl_setopt_pointer(CURL *h, CURLoption opt, void *value);
CURLcode ccurl_setopt_data_fn(CURL *h, CURLoption opt, ccurl_data_fn fn);
CURLcode ccurl_setopt_opensocket_fn(CURL *h, ccurl_opensocket_fn fn);
/// Called before each request is sent, on new and reused connections alike (curl >= 7.80).
CURLcode ccurl_setopt_prereq_fn(CURL *h, ccurl_prereq_fn fn);
CURLMcode ccurl_multi_setopt_long(CURLM *m, CURLMoption opt, long value);
/// A share handle for TLS sessions and DNS answers, with lock callbacks: easy handles are
/// configured and cleaned up off the driver thread.
CURLSH *ccurl_share_new(void);

CURLcode ccurl_getinfo_long(CURL *h, CURLINFO info, long *out);
CURLcode ccurl_getinfo_double(CURL *h, CURLINFO info, double *out);
CURLcode ccurl_getinfo_pointer(CURL *h, CURLINFO info, void **out);

/// Family and textual address of a socket address curl is about to connect to.
/// Writes into `buf` (at least 64 bytes); returns the family or -1.
int ccurl_sockaddr_text(const struct curl_sockaddr *address, char *buf, int buflen);
curl_socket_t ccurl_open_socket(const struct curl_sockaddr *address);

#endif
