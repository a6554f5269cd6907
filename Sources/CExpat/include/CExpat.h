// libexpat for the podcast feed parser. Swift can read XML_Encoding but not easily
// fill its 256-entry map (a C array imports as a tuple): that is this shim's one job.
#ifndef FEEDPROXY_CEXPAT_H
#define FEEDPROXY_CEXPAT_H

#include <expat.h>

/// Copies a 256-entry byte → Unicode map (-1: byte not allowed) into `info`,
/// for a single-byte charset given to expat's unknown-encoding handler.
void cexpat_set_single_byte_map(XML_Encoding *info, const int *map);

#endif
