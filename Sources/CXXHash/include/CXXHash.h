// Debian's libxxhash (Yann Collet's reference xxHash) for the fingerprints FeedProxy keeps:
// strong ETags, episode cursors and anchors, the batch ETag, the schema fingerprint.
#ifndef FEEDPROXY_CXXHASH_H
#define FEEDPROXY_CXXHASH_H

#include <stddef.h>
#include <stdint.h>

/// XXH64 of `length` bytes at `data` (NULL when `length` is 0) with seed 0.
uint64_t cxxhash_xxh64(const void *data, size_t length);

#endif
