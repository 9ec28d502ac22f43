#ifndef LIVEBIND_CSQLITE_SHIM_H
#define LIVEBIND_CSQLITE_SHIM_H

#include <sqlite3.h>

/* Wrapper around sqlite3_bind_text with SQLITE_TRANSIENT, a macro Swift cannot import (a cast of -1
   to a destructor pointer): SQLite copies the bytes before returning. */
static inline int
livebind_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int count)
{
    return sqlite3_bind_text(statement, index, text, count, SQLITE_TRANSIENT);
}

/* Wrapper around sqlite3_bind_blob with SQLITE_TRANSIENT, for the same reason. */
static inline int
livebind_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int count)
{
    return sqlite3_bind_blob(statement, index, bytes, count, SQLITE_TRANSIENT);
}

#endif
