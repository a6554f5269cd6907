#!/usr/bin/env python3
"""Writes Fixtures/artwork/: real-shaped podcast artwork and the hostile files the image
proxy must refuse. Run once when they change (needs Pillow); the files are committed.

- cover-3000.jpg  3000x3000 JPEG, the size Apple asks publishers for
- logo-1400.png   1400x1400 PNG with transparency
- square-600.webp 600x600 WebP
- small-100.gif   100x100 GIF (two frames: the first is used)
- edge-64.png     64x64: opaque red on the left, fully transparent green on the right (no green may bleed in)
- grey16-64.png   64x64 16-bit grey ramp
- bomb.png        a PNG whose header declares 50000x50000 pixels in under 1 KB
- truncated.jpg   the first third of cover-3000.jpg
- lying.png       the PNG signature, then noise
- vector.svg      SVG (never decoded: refused by type)
"""
import io
import os
import struct
import zlib

from PIL import Image, ImageDraw

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "Fixtures", "artwork")


def cover(size):
    img = Image.new("RGB", (size, size))
    draw = ImageDraw.Draw(img)
    for y in range(0, size, 4):
        draw.rectangle([0, y, size, y + 3], fill=(30 + y * 180 // size, 60, 200 - y * 150 // size))
    draw.ellipse([size // 4, size // 4, size * 3 // 4, size * 3 // 4], fill=(250, 200, 40))
    return img


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def main():
    os.makedirs(OUT, exist_ok=True)
    big = io.BytesIO()
    cover(3000).save(big, "JPEG", quality=85)
    with open(os.path.join(OUT, "cover-3000.jpg"), "wb") as f:
        f.write(big.getvalue())
    with open(os.path.join(OUT, "truncated.jpg"), "wb") as f:
        f.write(big.getvalue()[: len(big.getvalue()) // 3])

    logo = Image.new("RGBA", (1400, 1400), (0, 0, 0, 0))
    draw = ImageDraw.Draw(logo)
    draw.rounded_rectangle([100, 100, 1300, 1300], radius=200, fill=(200, 30, 60, 255))
    draw.ellipse([400, 400, 1000, 1000], fill=(255, 255, 255, 128))
    logo.save(os.path.join(OUT, "logo-1400.png"), optimize=True)

    edge = Image.new("RGBA", (64, 64), (0, 255, 0, 0))
    edge.paste((255, 0, 0, 255), (0, 0, 32, 64))
    edge.save(os.path.join(OUT, "edge-64.png"))
    ramp = Image.new("I;16", (64, 64))
    ramp.putdata([x * 1040 for _ in range(64) for x in range(64)])
    ramp.save(os.path.join(OUT, "grey16-64.png"))

    cover(600).save(os.path.join(OUT, "square-600.webp"), "WEBP", quality=80)
    frames = [cover(100).convert("P"), Image.new("P", (100, 100), 3)]
    frames[0].save(os.path.join(OUT, "small-100.gif"), save_all=True, append_images=frames[1:], duration=100)

    # 50000 x 50000 grey: the header alone says 2.5 gigapixels; a few rows of data follow.
    ihdr = struct.pack(">IIBBBBB", 50000, 50000, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" * (50001 * 4))
    with open(os.path.join(OUT, "bomb.png"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", rows) + chunk(b"IEND", b""))

    with open(os.path.join(OUT, "lying.png"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + bytes((i * 97 + 13) % 256 for i in range(4096)))
    with open(os.path.join(OUT, "vector.svg"), "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><circle cx="50" cy="50" r="40"/></svg>\n')


if __name__ == "__main__":
    main()
