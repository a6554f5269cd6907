#include "CHiredis.h"
#include <sys/time.h>

static struct timeval ms_to_timeval(int ms) {
    struct timeval tv;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    return tv;
}

redisContext *chiredis_connect(const char *host, int port, int connect_ms, int command_ms) {
    redisContext *c = redisConnectWithTimeout(host, port, ms_to_timeval(connect_ms));
    if (c == NULL) return NULL;
    if (c->err == 0) {
        redisSetTimeout(c, ms_to_timeval(command_ms));
        redisEnableKeepAlive(c);
    }
    return c;
}
