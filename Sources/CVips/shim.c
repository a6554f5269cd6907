#include "CVips.h"

#include <string.h>
#include <time.h>
#include <vips/vips.h>
#include <vips/vector.h>

// The loaders a feed's artwork may use (by their GType names); every other one stays blocked.
static const char *const allowed_loaders[] = {
    "VipsForeignLoadJpeg", "VipsForeignLoadPng", "VipsForeignLoadWebp", "VipsForeignLoadNsgif", "VipsForeignLoadGif", "VipsForeignLoadHeif", NULL,
};

// A damaged image is the caller's error to report (a JSON answer, a metric), not a line on stderr.
static void quiet(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain, (void)level, (void)message, (void)data;
}

int cvips_start(void) {
    if (VIPS_INIT("feedproxy") != 0) return -1;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG, quiet, NULL);
    vips_block_untrusted_set(TRUE);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    for (const char *const *name = allowed_loaders; *name; name++) vips_operation_block_set(*name, FALSE);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_concurrency_set(1);
    // No run-time generated vector code (liborc): under eight concurrent decodes it crashed
    // the process in orc's code (a bad pointer; once a corrupted heap), as libvips' and
    // sharp's users have reported. The C paths cost a 3000-pixel JPEG's resize about a fifth
    // of its speed here, a PNG's nothing.
    vips_vector_set_enabled(FALSE);
    return 0;
}

long long cvips_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// Whether the loader libvips would pick for these bytes is one of the allowed ones.
static int allowed(const void *bytes, size_t length) {
    const char *loader = vips_foreign_find_load_buffer(bytes, length);
    if (!loader) return 0;
    for (const char *const *name = allowed_loaders; *name; name++) {
        if (strncmp(loader, *name, strlen(*name)) == 0) return 1;
    }
    return 0;
}

int cvips_probe(const void *bytes, size_t length, cvips_header *header) {
    vips_error_clear();
    // No loader at all for bytes that look like an allowed kind: this libvips was installed
    // without that kind's module (a slim container leaves HEIF out).
    if (!vips_foreign_find_load_buffer(bytes, length)) {
        vips_error_clear();
        return -3;
    }
    if (!allowed(bytes, length)) return -1;
    // Only the header is read: no pixel is decoded until the image is used.
    VipsImage *image = vips_image_new_from_buffer(bytes, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) return -1;
    header->width = vips_image_get_width(image);
    header->height = vips_image_get_height(image);
    header->has_alpha = vips_image_hasalpha(image);
    header->pages = vips_image_get_n_pages(image);
    g_object_unref(image);
    return 0;
}

// Called as pixels are computed: past the deadline, the computation is stopped.
static void on_eval(VipsImage *image, VipsProgress *progress, void *deadline) {
    (void)progress;
    if (cvips_now_ms() > *(long long *)deadline) vips_image_set_kill(image, TRUE);
}

// JPEG, WebP and HEIF decode at a fraction of their size when asked (shrink-on-load); PNG and
// GIF decode every pixel.
static int has_shrink_on_load(const void *bytes, size_t length) {
    const char *loader = vips_foreign_find_load_buffer(bytes, length);
    return !loader || (strncmp(loader, "VipsForeignLoadPng", 18) != 0 && strncmp(loader, "VipsForeignLoadNsgif", 20) != 0);
}

// One source row into the sums of one destination row, `factor` columns a block (`bands` sums
// a block). With alpha, colours are weighted by it (premultiplied), so the colour of an
// invisible pixel never bleeds into a visible one. 8-bit RGBA and RGB, nearly every PNG, have
// their own loops with the sums in registers.
static void add_rgba8(const VipsPel *p, int w, int factor, guint64 *a) {
    for (int x0 = 0; x0 < w; x0 += factor, a += 4) {
        int x1 = x0 + factor < w ? x0 + factor : w;
        guint64 r = 0, g = 0, b = 0, alpha = 0;
        for (int x = x0; x < x1; x++, p += 4) {
            guint32 weight = p[3];
            r += p[0] * weight;
            g += p[1] * weight;
            b += p[2] * weight;
            alpha += weight;
        }
        a[0] += r, a[1] += g, a[2] += b, a[3] += alpha;
    }
}

static void add_rgb8(const VipsPel *p, int w, int factor, guint64 *a) {
    for (int x0 = 0; x0 < w; x0 += factor, a += 3) {
        int x1 = x0 + factor < w ? x0 + factor : w;
        guint64 r = 0, g = 0, b = 0;
        for (int x = x0; x < x1; x++, p += 3) r += p[0], g += p[1], b += p[2];
        a[0] += r, a[1] += g, a[2] += b;
    }
}

// Any other layout: grey, grey with alpha, 16-bit (read as its high byte: the answer is 8-bit).
static void add_any(const VipsPel *row, int w, int factor, int bands, int alpha, int sixteen, guint64 *a) {
    for (int x0 = 0; x0 < w; x0 += factor, a += bands) {
        int x1 = x0 + factor < w ? x0 + factor : w;
        for (int x = x0; x < x1; x++) {
            guint32 v[4];
            for (int b = 0; b < bands; b++) v[b] = sixteen ? ((const unsigned short *)row)[x * bands + b] >> 8 : row[x * bands + b];
            guint32 weight = alpha ? v[bands - 1] : 1;
            for (int b = 0; b < bands - alpha; b++) a[b] += v[b] * weight;
            if (alpha) a[bands - 1] += weight;
        }
    }
}

// PNG and GIF have no shrink-on-load, so every pixel is decoded: each block of factor × factor
// pixels becomes one as the rows stream in, in integers, premultiplied when transparent;
// lanczos3 then does the rest on the small image, which is unpremultiplied at the end. A
// 1400-pixel RGBA PNG to 300 pixels: 256 M instructions against 451 M with libvips' float
// premultiply and shrink over the full image (callgrind), most of the rest libpng and zlib.
// Never enlarged; at most `max_height` tall; past the deadline, -2.
static int box_then_lanczos(const void *bytes, size_t length, int width, int max_height, long long deadline_ms, VipsImage **out) {
    VipsImage *image = vips_image_new_from_buffer(bytes, length, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    if (!image) return -1;
    int w = vips_image_get_width(image), h = vips_image_get_height(image), bands = vips_image_get_bands(image);
    VipsBandFormat format = vips_image_get_format(image);
    if ((format != VIPS_FORMAT_UCHAR && format != VIPS_FORMAT_USHORT) || bands < 1 || bands > 4) {
        g_object_unref(image);
        return -1;
    }
    int alpha = vips_image_hasalpha(image) && (bands == 2 || bands == 4);
    double scale = (double)width / w;
    if ((double)max_height / h < scale) scale = (double)max_height / h;
    if (scale > 1) scale = 1;
    int out_w = (int)(w * scale + 0.5), out_h = (int)(h * scale + 0.5);
    if (out_w < 1) out_w = 1;
    if (out_h < 1) out_h = 1;
    int factor = (int)(1 / scale);
    // More than half the size: nothing to box, and the copy would be as large as the image;
    // libvips' own thumbnail streams it instead (1 asks the caller for it).
    if (factor < 2) {
        g_object_unref(image);
        return 1;
    }
    int dw = (w + factor - 1) / factor, dh = (h + factor - 1) / factor;
    int result = -1;
    guint64 *acc = g_try_malloc0_n((gsize)dw * bands, sizeof(guint64));
    VipsPel *pixels = g_try_malloc_n((gsize)dw * dh, bands);
    VipsRegion *region = vips_region_new(image);
    VipsImage *small = NULL, *resized = NULL, *straight = NULL;
    if (!acc || !pixels || !region) goto done;
    // 16-bit samples are read as their high byte: the answer is 8-bit.
    int sixteen = format == VIPS_FORMAT_USHORT;
    for (int dy = 0; dy < dh; dy++) {
        memset(acc, 0, (size_t)dw * bands * sizeof(guint64));
        int block_rows = dy * factor + factor < h ? factor : h - dy * factor;
        // A few rows at a time: a region as tall as a large factor would be as large as the image.
        for (int done = 0; done < block_rows;) {
            if (cvips_now_ms() > deadline_ms) {
                result = -2;
                goto done;
            }
            int top = dy * factor + done, rows = block_rows - done < 16 ? block_rows - done : 16;
            VipsRect rect = {0, top, w, rows};
            if (vips_region_prepare(region, &rect) != 0) goto done;
            for (int y = top; y < top + rows; y++) {
                const VipsPel *p = VIPS_REGION_ADDR(region, 0, y);
                if (!sixteen && bands == 4 && alpha)
                    add_rgba8(p, w, factor, acc);
                else if (!sixteen && bands == 3)
                    add_rgb8(p, w, factor, acc);
                else
                    add_any(p, w, factor, bands, alpha, sixteen, acc);
            }
            done += rows;
        }
        VipsPel *row = pixels + (size_t)dy * dw * bands;
        const guint64 *a = acc;
        for (int bx = 0; bx < dw; bx++, a += bands) {
            guint64 n = (guint64)block_rows * ((bx + 1) * factor < w ? factor : w - bx * factor);
            if (alpha) {
                // Premultiplied: colour × alpha / 255, averaged.
                for (int b = 0; b < bands - 1; b++) row[bx * bands + b] = (VipsPel)((a[b] + n * 255 / 2) / (n * 255));
                row[bx * bands + bands - 1] = (VipsPel)((a[bands - 1] + n / 2) / n);
            } else {
                for (int b = 0; b < bands; b++) row[bx * bands + b] = (VipsPel)((a[b] + n / 2) / n);
            }
        }
    }
    {
        VipsImage *raw = vips_image_new_from_memory_copy(pixels, (size_t)dw * dh * bands, dw, dh, bands, VIPS_FORMAT_UCHAR);
        if (!raw) goto done;
        int copied = vips_copy(raw, &small, "interpretation", bands >= 3 ? VIPS_INTERPRETATION_sRGB : VIPS_INTERPRETATION_B_W, NULL);
        g_object_unref(raw);
        if (copied != 0) goto done;
    }
    // The colour profile stays with the pixels it describes.
    if (vips_image_get_typeof(image, "icc-profile-data")) {
        const void *profile;
        size_t profile_length;
        if (vips_image_get_blob(image, "icc-profile-data", &profile, &profile_length) == 0)
            vips_image_set_blob_copy(small, "icc-profile-data", profile, profile_length);
    }
    if (out_w < dw || out_h < dh) {
        if (vips_resize(small, &resized, (double)out_w / dw, "vscale", (double)out_h / dh, "kernel", VIPS_KERNEL_LANCZOS3, NULL) != 0) goto done;
    } else {
        resized = small;
        g_object_ref(resized);
    }
    if (alpha) {
        if (vips_unpremultiply(resized, &straight, NULL) != 0) goto done;
        if (vips_cast(straight, out, VIPS_FORMAT_UCHAR, NULL) != 0) goto done;
    } else {
        *out = resized;
        g_object_ref(resized);
    }
    result = 0;
done:
    if (straight) g_object_unref(straight);
    if (resized) g_object_unref(resized);
    if (small) g_object_unref(small);
    if (region) g_object_unref(region);
    g_free(pixels);
    g_free(acc);
    g_object_unref(image);
    return result;
}

// The thumbnail of `bytes` at `width` (at most `max_height` tall, never enlarged): boxed then
// lanczos for sources without shrink-on-load, libvips' own thumbnail for the others.
static int make_thumb(const void *bytes, size_t length, int width, int max_height, long long deadline_ms, VipsImage **thumb) {
    *thumb = NULL;
    int boxed = has_shrink_on_load(bytes, length) ? 1 : box_then_lanczos(bytes, length, width, max_height, deadline_ms, thumb);
    if (boxed < 0) return boxed;
    if (boxed == 1) {
        // Truncated or damaged input fails rather than being padded with grey.
        if (vips_thumbnail_buffer((void *)bytes, length, thumb, width, "height", max_height, "size", VIPS_SIZE_DOWN, "option_string",
                                  "fail_on=truncated", NULL) != 0)
            return -1;
    }
    return 0;
}

// Stops computing `image`'s pixels once `*deadline_ms` passes (the pointer outlives the image's use).
static void watch(VipsImage *image, long long *deadline_ms) {
    vips_image_set_progress(image, TRUE);
    g_signal_connect(image, "eval", G_CALLBACK(on_eval), deadline_ms);
}

// `thumb` encoded as `format`, without metadata but its colour profile; -2 past the deadline
// (the caller watches `thumb`).
static int encode(VipsImage *thumb, int format, int quality, long long deadline_ms, void **out, size_t *out_length, int *out_width,
                  int *out_height) {
    *out = NULL;
    *out_length = 0;
    // Every metadata item goes but the colour profile (libvips 8.14's WebP saver writes EXIF
    // despite "strip"): no camera, place or editor leaves through the proxy.
    VipsImage *clean = NULL;
    if (vips_copy(thumb, &clean, NULL) != 0) return -1;
    gchar **fields = vips_image_get_fields(clean);
    for (gchar **field = fields; field && *field; field++) {
        if (strcmp(*field, "icc-profile-data") != 0) vips_image_remove(clean, *field);
    }
    g_strfreev(fields);
    int result;
    switch (format) {
    case CVIPS_PNG:
        result = vips_pngsave_buffer(clean, out, out_length, "strip", TRUE, "compression", 6, NULL);
        break;
    case CVIPS_WEBP:
        result = vips_webpsave_buffer(clean, out, out_length, "strip", TRUE, "Q", quality, NULL);
        break;
    case CVIPS_AVIF:
        result = vips_heifsave_buffer(clean, out, out_length, "strip", TRUE, "Q", quality, "compression",
                                      VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "effort", 2, NULL);
        break;
    default: {
        // JPEG has no alpha: a transparent image is flattened onto white.
        VipsImage *flat = NULL;
        if (vips_image_hasalpha(clean)) {
            VipsArrayDouble *white = vips_array_double_newv(1, 255.0);
            result = vips_flatten(clean, &flat, "background", white, NULL);
            vips_area_unref(VIPS_AREA(white));
            if (result != 0) break;
        }
        result = vips_jpegsave_buffer(flat ? flat : clean, out, out_length, "strip", TRUE, "Q", quality, "optimize_coding", TRUE, NULL);
        if (flat) g_object_unref(flat);
    }
    }
    int killed = cvips_now_ms() > deadline_ms;
    *out_width = vips_image_get_width(clean);
    *out_height = vips_image_get_height(clean);
    g_object_unref(clean);
    if (result != 0 || !*out) {
        if (*out) g_free(*out);
        *out = NULL;
        *out_length = 0;
        return killed ? -2 : -1;
    }
    return 0;
}

int cvips_thumbnail(const void *bytes, size_t length, int width, int max_height, int format, int quality, long long deadline_ms,
                    void **out, size_t *out_length, int *out_width, int *out_height) {
    vips_error_clear();
    *out = NULL;
    *out_length = 0;
    if (!allowed(bytes, length)) return -1;
    VipsImage *thumb = NULL;
    int made = make_thumb(bytes, length, width, max_height, deadline_ms, &thumb);
    if (made != 0) return made;
    watch(thumb, &deadline_ms);
    int result = encode(thumb, format, quality, deadline_ms, out, out_length, out_width, out_height);
    g_object_unref(thumb);
    return result;
}

int cvips_thumbnails(const void *bytes, size_t length, int count, const int *widths, const int *max_heights, const int *formats, int quality,
                     long long deadline_ms, long long answer_ms, void **outs, size_t *out_lengths, int *out_widths, int *out_heights,
                     int *results) {
    vips_error_clear();
    if (count < 1) return -1;
    for (int i = 0; i < count; i++) {
        outs[i] = NULL;
        out_lengths[i] = 0;
        results[i] = -1;
    }
    if (!allowed(bytes, length)) return -1;
    // The largest asked for is decoded (its own shrink-on-load) and kept in memory; every
    // other width is resized from it, every encoding written from its own size.
    int largest = 0;
    for (int i = 1; i < count; i++) {
        if (widths[i] > widths[largest] || (widths[i] == widths[largest] && max_heights[i] > max_heights[largest])) largest = i;
    }
    VipsImage *thumb = NULL, *decoded = NULL;
    int made = make_thumb(bytes, length, widths[largest], max_heights[largest], deadline_ms, &thumb);
    if (made != 0) {
        for (int i = 0; i < count; i++) results[i] = made;
        return made;
    }
    watch(thumb, &deadline_ms);
    decoded = vips_image_copy_memory(thumb);
    g_object_unref(thumb);
    if (!decoded) {
        int killed = cvips_now_ms() > deadline_ms ? -2 : -1;
        for (int i = 0; i < count; i++) results[i] = killed;
        return killed;
    }
    for (int i = 0; i < count; i++) {
        // Each answer has its own time, as a resize of its own would (the image cache is off:
        // nothing keeps `sized`, and so the pointer watched, past this turn).
        long long answer_deadline = cvips_now_ms() + answer_ms;
        VipsImage *sized = NULL;
        int resized = widths[i] == widths[largest] && max_heights[i] == max_heights[largest]
                          ? vips_copy(decoded, &sized, NULL)
                          : vips_thumbnail_image(decoded, &sized, widths[i], "height", max_heights[i], "size", VIPS_SIZE_DOWN, NULL);
        if (resized != 0) {
            results[i] = -1;
            continue;
        }
        watch(sized, &answer_deadline);
        results[i] = encode(sized, formats[i], quality, answer_deadline, &outs[i], &out_lengths[i], &out_widths[i], &out_heights[i]);
        g_object_unref(sized);
    }
    g_object_unref(decoded);
    return 0;
}

void cvips_free(void *bytes) { g_free(bytes); }

int cvips_rgba(const void *bytes, size_t length, void **out, int *width, int *height) {
    vips_error_clear();
    *out = NULL;
    if (!allowed(bytes, length)) return -1;
    VipsImage *image = vips_image_new_from_buffer(bytes, length, "", NULL), *srgb = NULL, *rgba = NULL;
    if (!image) return -1;
    int result = -1;
    if (vips_colourspace(image, &srgb, VIPS_INTERPRETATION_sRGB, NULL) == 0) {
        if (vips_image_hasalpha(srgb)) {
            rgba = srgb;
            g_object_ref(rgba);
        } else if (vips_bandjoin_const1(srgb, &rgba, 255, NULL) != 0) {
            rgba = NULL;
        }
    }
    size_t size = 0;
    if (rgba && (*out = vips_image_write_to_memory(rgba, &size)) != NULL) {
        *width = vips_image_get_width(rgba);
        *height = vips_image_get_height(rgba);
        result = 0;
    }
    if (rgba) g_object_unref(rgba);
    if (srgb) g_object_unref(srgb);
    g_object_unref(image);
    return result;
}

int cvips_saves_avif(void) {
    VipsImage *pixel = NULL;
    if (vips_black(&pixel, 2, 2, NULL) != 0) return 0;
    void *out = NULL;
    size_t length = 0;
    int ok = vips_heifsave_buffer(pixel, &out, &length, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "effort", 0, NULL) == 0 && out;
    g_free(out);
    g_object_unref(pixel);
    vips_error_clear();
    return ok;
}
