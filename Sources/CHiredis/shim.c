#include "CHiredis.h"
#include <stdio.h>
#include <sys/time.h>

static struct timeval ms_to_timeval(int ms) {
    struct timeval tv;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    return tv;
}

int chiredis_get_reply(redisContext *c, void **reply, size_t max_bytes) {
    void *aux = NULL;
    *reply = NULL;
    if (redisGetReplyFromReader(c, &aux) == REDIS_ERR) return REDIS_ERR;
    if (aux == NULL) {
        int done = 0;
        do {
            if (redisBufferWrite(c, &done) == REDIS_ERR) return REDIS_ERR;
        } while (!done);
        size_t read = 0;
        do {
            size_t before = c->reader->len;
            if (redisBufferRead(c) == REDIS_ERR) return REDIS_ERR;
            if (c->reader->len > before) read += c->reader->len - before;
            if (read > max_bytes) {
                c->err = REDIS_ERR_PROTOCOL;
                snprintf(c->errstr, sizeof(c->errstr), "reply larger than %zu bytes", max_bytes);
                return REDIS_ERR;
            }
            if (redisGetReplyFromReader(c, &aux) == REDIS_ERR) return REDIS_ERR;
        } while (aux == NULL);
    }
    *reply = aux;
    return REDIS_OK;
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
