#include "CGumbo.h"

GumboOutput *cgumbo_parse(const char *bytes, size_t length) {
    GumboOptions options = kGumboDefaultOptions;
    options.max_errors = 0;  // parse errors are not kept: show notes are full of them
    return gumbo_parse_with_options(&options, bytes, length);
}

void cgumbo_free(GumboOutput *output) {
    if (output) gumbo_destroy_output(&kGumboDefaultOptions, output);
}
