#include "CExpat.h"
#include <string.h>

void cexpat_set_single_byte_map(XML_Encoding *info, const int *map) {
    memcpy(info->map, map, sizeof(info->map));
    info->data = NULL;
    info->convert = NULL;
    info->release = NULL;
}
