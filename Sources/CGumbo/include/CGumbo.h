// libgumbo (Debian's libgumbo-dev): a C parser that follows the HTML5 parsing algorithm,
// for show notes. Its node and vector accessors are plain structs Swift reads directly;
// this shim only parses with bounded options and frees.
#ifndef FEEDPROXY_CGUMBO_H
#define FEEDPROXY_CGUMBO_H

#include <gumbo.h>
#include <stddef.h>

/// Parses `length` bytes of UTF-8 as an HTML document (errors are not collected).
GumboOutput *cgumbo_parse(const char *bytes, size_t length);
void cgumbo_free(GumboOutput *output);

#endif
