#include "CXXHash.h"
#include <xxhash.h>

uint64_t cxxhash_xxh64(const void *data, size_t length) {
    return XXH64(data, length, 0);
}
