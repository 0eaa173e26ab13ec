#!/usr/bin/env python3
"""Reference vectors for thumbd's ThumbHash (Sources/ThumbHash), made with PyPI's
thumbhash-python 1.0.1 (a port of Evan Wallace's JavaScript reference; it rounds halves to even
where the reference rounds them up).

For each image: the RGBA it hashes (EXIF orientation applied, reduced to at most 100x100 px by
Pillow, as thumbhash-python's own image_to_thumbhash does) as NAME.rgba, raw 8-bit RGBA; the
hash, and the header's values before rounding (so a test can tell a tie from a mistake); the
preview thumbhash-python decodes from that hash as NAME.preview.rgba. vectors.tsv lists them.
The tests (ThumbHashTests) read only these files, so CI needs neither PyPI nor the corpus.

    python3 -m venv /tmp/th && /tmp/th/bin/pip install thumbhash-python==1.0.1 pillow
    /tmp/th/bin/python Tests/Scripts/thumbhash-vectors.py   # from the checkout, beside ../shared
"""
import base64
import os
import sys

from PIL import Image
from PIL.ImageOps import exif_transpose
from thumbhash.decode import thumbhash_to_rgba
from thumbhash.encode import rgba_to_thumbhash
from thumbhash.hash import Hash

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CORPUS = os.environ.get("THUMBD_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
OUT = os.path.join(ROOT, "Tests", "Fixtures", "thumbhash")

# name, source (fixtures/ is Tests/Fixtures, corpus/ the shared corpus), what it covers
IMAGES = [
    ("landscape-1", "fixtures/photos/Landscape_1.jpg", "landscape 3:2 photo"),
    ("landscape-6", "fixtures/photos/Landscape_6.jpg", "stored 1200x1800 with EXIF orientation 6: landscape once turned"),
    ("kodak-dc210", "fixtures/photos/kodak-dc210-1998-vga.jpg", "4:3 photo"),
    ("png-rgba-alpha", "fixtures/formats/png-rgba-alpha-2048x1536.png", "mostly transparent: alpha byte, 5 L terms"),
    ("png-interlaced-alpha", "fixtures/formats/png-rgba-interlaced-adam7.png", "32x32 with alpha, smaller than 100"),
    ("ico-alpha", "fixtures/formats/ico-32bit-alpha-64x48.ico", "64x48 icon whose alpha band is all opaque: no alpha byte"),
    ("portrait-3", "corpus/photos/Portrait_3.jpg", "2:3 portrait photo"),
    ("nokia-21x9", "corpus/photos/nokia83-wide-21x9-gps.jpg", "21:9 panorama: 3 L terms down"),
    ("iphone-xr-1x1", "corpus/photos/iphone-xr-1x1-gps.jpg", "a 1x1 px image"),
    ("palette-trns", "corpus/formats/png-palette-trns.png", "palette PNG with tRNS transparency"),
    ("grey-icc", "corpus/formats/jpeg-grayscale-gray-icc.jpg", "greyscale photo"),
    ("gif-photo", "corpus/formats/gif-static-photo.gif", "GIF photo"),
]


def rgba_of(path):
    image = Image.open(path)
    image = exif_transpose(image).convert("RGBA")
    image.thumbnail((100, 100))
    return image.size, image.tobytes()


def unrounded_header(width, height, rgba):
    """The Hash thumbhash-python builds, captured as encode() is called on it."""
    seen = []
    encode = Hash.encode

    def capture(self):
        seen.append(dict(self.__dict__))
        return encode(self)

    Hash.encode = capture
    try:
        digest = rgba_to_thumbhash(width, height, list(rgba))
    finally:
        Hash.encode = encode
    return digest, seen[0]


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = ["name\twidth\theight\tthumbhash\tl_dc\tp_dc\tq_dc\tl_scale\tp_scale\tq_scale\ta_dc\ta_scale"
            "\tpreview_width\tpreview_height\tsource\twhat"]
    for name, source, what in IMAGES:
        base, rest = source.split("/", 1)
        path = os.path.join(ROOT, "Tests", "Fixtures", rest) if base == "fixtures" else os.path.join(CORPUS, rest)
        (width, height), rgba = rgba_of(path)
        digest, h = unrounded_header(width, height, rgba)
        pw, ph, preview = thumbhash_to_rgba(digest)
        with open(os.path.join(OUT, name + ".rgba"), "wb") as f:
            f.write(rgba)
        with open(os.path.join(OUT, name + ".preview.rgba"), "wb") as f:
            f.write(bytes(preview))
        values = [h[k] for k in ("l_dc", "p_dc", "q_dc", "l_scale", "p_scale", "q_scale", "a_dc", "a_scale")]
        rows.append("\t".join([name, str(width), str(height), base64.b64encode(digest).decode()]
                              + [repr(float(v)) for v in values] + [str(pw), str(ph), source, what]))
        print(name, width, height, base64.b64encode(digest).decode(), file=sys.stderr)
    with open(os.path.join(OUT, "vectors.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
