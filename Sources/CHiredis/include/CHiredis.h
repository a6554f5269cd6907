// hiredis through a plain C target: Debian's hiredis.pc adds -D_FILE_OFFSET_BITS=64,
// which SwiftPM's pkgConfig rejects, and redisCommand is variadic (Swift cannot call it;
// the Argv calls are used instead).
#ifndef FEEDPROXY_CHIREDIS_H
#define FEEDPROXY_CHIREDIS_H

#include <hiredis/hiredis.h>

/// Connects with a connect deadline, then sets the per-command (read/write) deadline.
/// A blocking context loses nothing here: it is never reconnected, only replaced.
redisContext *chiredis_connect(const char *host, int port, int connect_ms, int command_ms);

/// redisGetReply with a cap: fails (REDIS_ERR_PROTOCOL) once more than `max_bytes` were
/// read for one reply, so a hostile or broken server cannot make the reader buffer grow
/// without end (hiredis itself has no such limit).
int chiredis_get_reply(redisContext *c, void **reply, size_t max_bytes);

#endif
