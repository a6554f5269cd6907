// libvips (Debian's libvips-dev) for artwork: shrink-on-load thumbnails, encoded again
// without metadata. The shim exposes plain C types only, so Swift never sees GLib; every
// call is bounded by the caller's pixel limit and a deadline checked while pixels flow.
#ifndef FEEDPROXY_CVIPS_H
#define FEEDPROXY_CVIPS_H

#include <stddef.h>

/// Starts libvips once per process: every loader except the allowed ones blocked, untrusted
/// operations blocked, no operation cache (answers are cached above), one worker thread per
/// image (the caller's pool is the concurrency). 0 on success.
int cvips_start(void);

/// What a file's header says: width, height, whether it has an alpha channel, pages. 0 when
/// the header was read; -3 when no loader of this libvips reads such bytes; -1 otherwise
/// (a loader not allowed, or a header that does not parse).
typedef struct {
    int width;
    int height;
    int has_alpha;
    int pages;
} cvips_header;
int cvips_probe(const void *bytes, size_t length, cvips_header *header);

enum cvips_format { CVIPS_JPEG = 0, CVIPS_PNG = 1, CVIPS_WEBP = 2, CVIPS_AVIF = 3 };

/// Resizes to `width` (height by aspect ratio, at most `max_height`; never enlarged) with
/// shrink-on-load, drops metadata, encodes as `format` at `quality`. Gives up (-2) once
/// `deadline_ms` of the monotonic clock passes while pixels are computed; -1 on any other
/// failure (damaged, truncated). On success the encoded bytes are `*out` (free with
/// cvips_free) and their pixel size `*out_width` × `*out_height`.
int cvips_thumbnail(const void *bytes, size_t length, int width, int max_height, int format, int quality, long long deadline_ms,
                    void **out, size_t *out_length, int *out_width, int *out_height);

/// Several thumbnails of one source from one decode: the largest of `widths` is decoded
/// (shrink-on-load as cvips_thumbnail) and kept in memory, each other width resized from it,
/// each answer encoded as its `formats[i]`. `results[i]` is that answer's cvips_thumbnail
/// result (its bytes in `outs[i]`, free with cvips_free). The decode gives up at
/// `deadline_ms`; each answer's resize and encode gets `answer_ms` from its start. Returns 0
/// once the source decoded, else the decode's failure (every result the same).
int cvips_thumbnails(const void *bytes, size_t length, int count, const int *widths, const int *max_heights, const int *formats, int quality,
                     long long deadline_ms, long long answer_ms, void **outs, size_t *out_lengths, int *out_widths, int *out_heights,
                     int *results);

void cvips_free(void *bytes);

// An encoded image's pixels as 8-bit sRGB RGBA rows (free with cvips_free): how tests read answers.
int cvips_rgba(const void *bytes, size_t length, void **out, int *width, int *height);

/// 1 when this libvips can write AVIF (its HEIF module is installed, with an AV1 encoder).
int cvips_saves_avif(void);

/// The monotonic clock in milliseconds (the deadline's clock).
long long cvips_now_ms(void);

#endif
