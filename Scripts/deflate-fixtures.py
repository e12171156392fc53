#!/usr/bin/env python3
# Writes Tests/StrataSQLiteStoreTests/Fixtures/deflate: raw DEFLATE streams made by zlib (every
# level, the Huffman-only, run-length and fixed strategies, incompressible data, the empty stream)
# beside the bytes each decompresses to, from text and bytes generated here with a fixed seed.
import random, zlib
out = 'Tests/StrataSQLiteStoreTests/Fixtures/deflate'
rng = random.Random(50)
words = ["quake", "magnitude", "depth", "region", "north", "south", "Core", "Data", "entity", "attribute", "relationship",
         "model", "store", "version", "hash", "NSEntityDescription", "NSAttributeDescription", "\n", "  ", "<key>", "</key>"]
def text(n):
    return "".join(rng.choice(words) + (" " if rng.random() < 0.8 else "") for _ in range(n)).encode()
cases = {
    "text-level1": (text(3000), 1, zlib.Z_DEFAULT_STRATEGY),
    "text-level6": (text(3000), 6, zlib.Z_DEFAULT_STRATEGY),
    "text-level9": (text(3000), 9, zlib.Z_DEFAULT_STRATEGY),
    "text-huffman-only": (text(2000), 6, zlib.Z_HUFFMAN_ONLY),
    "text-rle": (text(2000), 6, zlib.Z_RLE),
    "text-fixed": (text(2000), 6, zlib.Z_FIXED),
    "binary-level6": (bytes(rng.randrange(256) if rng.random() < 0.3 else 0 for _ in range(12000)), 6, zlib.Z_DEFAULT_STRATEGY),
    "random-level9": (bytes(rng.randrange(256) for _ in range(5000)), 9, zlib.Z_DEFAULT_STRATEGY),
    "one-byte": (b"a", 6, zlib.Z_DEFAULT_STRATEGY),
    "empty": (b"", 6, zlib.Z_DEFAULT_STRATEGY),
    "long-run": (b"x" * 70000, 9, zlib.Z_DEFAULT_STRATEGY),
}
for name, (data, level, strategy) in cases.items():
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy)
    raw = compressor.compress(data) + compressor.flush()
    open(f"{out}/{name}.deflate", "wb").write(raw)
    open(f"{out}/{name}.expected", "wb").write(data)
