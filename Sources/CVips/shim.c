#include "CVips.h"

#include <string.h>
#include <time.h>
#include <vips/vips.h>

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

// For PNG and GIF: a box shrink by the whole factor while the pixels stream in, then lanczos3
// for the rest, as libvips' thumbnail does after a shrink-on-load. libvips' own thumbnail
// would premultiply a transparent image into floats and resize all of it with lanczos3, 1.7×
// the time of this for a 1400-pixel PNG. Transparent images are still premultiplied (so no
// dark fringe where the colour of invisible pixels would bleed in), but only the box shrink
// sees full size. Never enlarged; at most `max_height` tall.
static int box_then_lanczos(const void *bytes, size_t length, int width, int max_height, VipsImage **out) {
    VipsImage *image = vips_image_new_from_buffer(bytes, length, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    if (!image) return -1;
    double w = vips_image_get_width(image), h = vips_image_get_height(image);
    double scale = width / w;
    if (max_height / h < scale) scale = max_height / h;
    if (scale > 1) scale = 1;
    int factor = (int)(1 / scale);
    if (factor < 1) factor = 1;
    VipsBandFormat format = vips_image_get_format(image);
    int alpha = vips_image_hasalpha(image);
    // Each step's image is kept here and released at the end (libvips pipelines reference their inputs).
    VipsImage *step[4] = {NULL, NULL, NULL, NULL};
    VipsImage *in = image;
    int n = 0;
    if (alpha) {
        if (vips_premultiply(in, &step[n], NULL) != 0) goto fail;
        in = step[n++];
    }
    if (factor > 1) {
        if (vips_shrink(in, &step[n], factor, factor, NULL) != 0) goto fail;
        in = step[n++];
    }
    if (scale * factor < 1) {
        if (vips_resize(in, &step[n], scale * factor, "kernel", VIPS_KERNEL_LANCZOS3, NULL) != 0) goto fail;
        in = step[n++];
    }
    if (alpha) {
        VipsImage *straight = NULL;
        if (vips_unpremultiply(in, &straight, NULL) != 0) goto fail;
        int cast = vips_cast(straight, out, format, NULL);
        g_object_unref(straight);
        if (cast != 0) goto fail;
    } else {
        *out = in;
        g_object_ref(in);
    }
    for (int i = 0; i < n; i++) g_object_unref(step[i]);
    g_object_unref(image);
    return 0;
fail:
    for (int i = 0; i < n; i++) g_object_unref(step[i]);
    g_object_unref(image);
    return -1;
}

int cvips_thumbnail(const void *bytes, size_t length, int width, int max_height, int format, int quality, long long deadline_ms,
                    void **out, size_t *out_length, int *out_width, int *out_height) {
    vips_error_clear();
    *out = NULL;
    *out_length = 0;
    if (!allowed(bytes, length)) return -1;
    VipsImage *thumb = NULL;
    if (has_shrink_on_load(bytes, length)) {
        // Truncated or damaged input fails rather than being padded with grey.
        if (vips_thumbnail_buffer((void *)bytes, length, &thumb, width, "height", max_height, "size", VIPS_SIZE_DOWN, "option_string",
                                  "fail_on=truncated", NULL) != 0)
            return -1;
    } else if (box_then_lanczos(bytes, length, width, max_height, &thumb) != 0) {
        return -1;
    }
    vips_image_set_progress(thumb, TRUE);
    g_signal_connect(thumb, "eval", G_CALLBACK(on_eval), &deadline_ms);
    // Every metadata item goes but the colour profile (libvips 8.14's WebP saver writes EXIF
    // despite "strip"): no camera, place or editor leaves through the proxy.
    VipsImage *clean = NULL;
    if (vips_copy(thumb, &clean, NULL) != 0) {
        g_object_unref(thumb);
        return -1;
    }
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
    g_object_unref(thumb);
    if (result != 0 || !*out) {
        if (*out) g_free(*out);
        *out = NULL;
        *out_length = 0;
        return killed ? -2 : -1;
    }
    return 0;
}

void cvips_free(void *bytes) { g_free(bytes); }

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
