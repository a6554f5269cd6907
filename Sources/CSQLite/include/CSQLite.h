// SQLite, the embedded store for records that must outlive a restart (Records).
// SQLITE_TRANSIENT is a cast macro Swift cannot import: this shim's one job.
#ifndef FEEDPROXY_CSQLITE_H
#define FEEDPROXY_CSQLITE_H

#include <sqlite3.h>

/// sqlite3_bind_text with SQLITE_TRANSIENT (SQLite copies the bytes before returning).
int csqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length);
/// sqlite3_bind_blob with SQLITE_TRANSIENT.
int csqlite_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length);

#endif
