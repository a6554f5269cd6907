#include "CCurl.h"
#include <arpa/inet.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <pthread.h>

CURLcode ccurl_global_init(void) { return curl_global_init(CURL_GLOBAL_ALL); }
CURLcode ccurl_setopt_long(CURL *h, CURLoption opt, long value) { return curl_easy_setopt(h, opt, value); }
CURLcode ccurl_setopt_off(CURL *h, CURLoption opt, int64_t value) { return curl_easy_setopt(h, opt, (curl_off_t)value); }
CURLcode ccurl_setopt_string(CURL *h, CURLoption opt, const char *value) { return curl_easy_setopt(h, opt, value); }
CURLcode ccurl_setopt_pointer(CURL *h, CURLoption opt, void *value) { return curl_easy_setopt(h, opt, value); }
CURLcode ccurl_setopt_data_fn(CURL *h, CURLoption opt, ccurl_data_fn fn) { return curl_easy_setopt(h, opt, fn); }
CURLcode ccurl_setopt_opensocket_fn(CURL *h, ccurl_opensocket_fn fn) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, fn); }
CURLcode ccurl_setopt_prereq_fn(CURL *h, ccurl_prereq_fn fn) { return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, fn); }
CURLMcode ccurl_multi_setopt_long(CURLM *m, CURLMoption opt, long value) { return curl_multi_setopt(m, opt, value); }

// One mutex per kind of shared data, as libcurl's share documentation asks: transfers are
// driven on one thread, but handles are configured and cleaned up on others.
static pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
static pthread_once_t share_locks_once = PTHREAD_ONCE_INIT;

static void share_locks_init(void) {
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&share_locks[i], NULL);
}

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *userptr) {
    (void)handle; (void)access; (void)userptr;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST) pthread_mutex_lock(&share_locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *userptr) {
    (void)handle; (void)userptr;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST) pthread_mutex_unlock(&share_locks[data]);
}

CURLSH *ccurl_share_new(void) {
    pthread_once(&share_locks_once, share_locks_init);
    CURLSH *sh = curl_share_init();
    if (!sh) return NULL;
    curl_share_setopt(sh, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(sh, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    return sh;
}

CURLcode ccurl_getinfo_long(CURL *h, CURLINFO info, long *out) { return curl_easy_getinfo(h, info, out); }
CURLcode ccurl_getinfo_double(CURL *h, CURLINFO info, double *out) { return curl_easy_getinfo(h, info, out); }
CURLcode ccurl_getinfo_pointer(CURL *h, CURLINFO info, void **out) { return curl_easy_getinfo(h, info, out); }

int ccurl_sockaddr_text(const struct curl_sockaddr *address, char *buf, int buflen) {
    if (!address || buflen < 64) return -1;
    if (address->family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&address->addr;
        if (!inet_ntop(AF_INET, &a->sin_addr, buf, (socklen_t)buflen)) return -1;
        return AF_INET;
    }
    if (address->family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&address->addr;
        if (!inet_ntop(AF_INET6, &a->sin6_addr, buf, (socklen_t)buflen)) return -1;
        return AF_INET6;
    }
    return -1;
}

curl_socket_t ccurl_open_socket(const struct curl_sockaddr *address) {
    return socket(address->family, address->socktype, address->protocol);
}
