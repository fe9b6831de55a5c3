"""Read an 8-bit, non-interlaced RGB or RGBA PNG with the standard library (zlib + struct):
enough to tell whether a browser's screenshot is a real picture, and what is on it."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Colour type → bytes per pixel at bit depth 8 (2: RGB, 6: RGBA).
_CHANNELS = {2: 3, 6: 4}


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    #: One tuple (r, g, b) per pixel, row by row (alpha is dropped).
    pixels: list[tuple[int, int, int]]


def read(path: Path) -> Image:
    data = path.read_bytes()
    if not data.startswith(_SIGNATURE):
        raise ValueError(f"{path} is not a PNG (signature {data[:8]!r})")
    offset, header, compressed = len(_SIGNATURE), b"", bytearray()
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[offset + 8 + length :][:4])[0]:
            raise ValueError(f"{path}: chunk {kind!r} fails its CRC")
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            compressed += body
        elif kind == b"IEND":
            break
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise ValueError(f"{path}: depth {depth}, colour type {colour}, interlace {interlace}")
    step = _CHANNELS[colour]
    raw = zlib.decompress(bytes(compressed))
    stride = width * step
    previous = bytearray(stride)
    pixels: list[tuple[int, int, int]] = []
    for y in range(height):
        start = y * (stride + 1)
        line = _unfilter(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), previous, step)
        pixels += [(line[x], line[x + 1], line[x + 2]) for x in range(0, stride, step)]
        previous = line
    return Image(width, height, pixels)


def _unfilter(kind: int, line: bytearray, above: bytearray, step: int) -> bytearray:
    """Undo one row's PNG filter (none, sub, up, average, Paeth) in place."""
    for i in range(len(line)):
        left = line[i - step] if i >= step else 0
        up = above[i]
        corner = above[i - step] if i >= step else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        elif kind != 0:
            raise ValueError(f"unknown PNG filter {kind}")
    return line


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c
