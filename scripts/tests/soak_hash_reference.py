"""An independent Python implementation of the soak's tile hash (kernels/soak/tile_hash.hpp),
for the tests: the known vectors both languages are checked against, and synthetic hash streams
built from synthetic data. Not used by the package (it compares the hashes the GPUs wrote).

    element_hash(position, bits) = mix64(position * 0xD6E8FEB86659FD93 + bits)   (mod 2^64)
    tile hash = XOR of its elements' hashes; an output's hash = XOR of its tiles'
mix64 is SplitMix64's step (add the golden gamma, then the finaliser): mix64(0) is SplitMix64's
first output from state 0, 0xe220a8397b1dcdaf.
"""

from __future__ import annotations

MASK = (1 << 64) - 1
POSITION_MULTIPLIER = 0xD6E8FEB86659FD93


def mix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def element_hash(position: int, bits: int) -> int:
    return mix64((position * POSITION_MULTIPLIER + bits) & MASK)


def tile_hashes(values: list[int], rows: int, cols: int, tile_rows: int, tile_cols: int) -> list[int]:
    """Each tile's hash of a column-major rows x cols matrix of element bits (values[r + c*rows]);
    tile t is (t % tiles_m, t // tiles_m)."""
    tiles_m = -(-rows // tile_rows)
    tiles_n = -(-cols // tile_cols)
    out = []
    for t in range(tiles_m * tiles_n):
        r0, c0 = (t % tiles_m) * tile_rows, (t // tiles_m) * tile_cols
        h = 0
        for c in range(c0, min(cols, c0 + tile_cols)):
            for r in range(r0, min(rows, r0 + tile_rows)):
                p = r + c * rows
                h ^= element_hash(p, values[p])
        out.append(h)
    return out


def combined(hashes: list[int]) -> int:
    h = 0
    for x in hashes:
        h ^= x
    return h
