"""The soak's tile hash in Python (soak_hash_reference.py) against the C++ host reference
(kernels/soak/tile_hash_reference.hpp): both must give the same numbers for the same data. The
known vectors are asserted here and in tests/cpu/test_tile_hash.cpp; the second test reads the C++
test's own constants, so the two files cannot drift apart unnoticed."""

from __future__ import annotations

import re

from conftest import REPO
from soak_hash_reference import MASK, combined, element_hash, mix64, tile_hashes

CPP_TEST = REPO / "tests" / "cpu" / "test_tile_hash.cpp"


def sample_values(n: int) -> list[int]:
    """The 16-bit values the C++ test's sample_values() makes: (p * 2654435761 >> 7) & 0xffff."""
    return [((p * 2654435761) >> 7) & 0xFFFF for p in range(n)]


def test_known_vectors():
    assert mix64(0) == 0xE220A8397B1DCDAF  # SplitMix64's first output from state 0
    assert element_hash(0, 0) == 0xE220A8397B1DCDAF
    assert element_hash(1, 0) == 0xA7B77319D39F7883
    assert element_hash(0, 1) == 0x910A2DEC89025CC1
    assert element_hash(12345, 0x3F80) == 0xA1E8C64EE62A7EEB
    v = sample_values(15)
    assert (v[1], v[14]) == (28403, 4431)
    tiles = tile_hashes(v, 3, 5, 2, 2)
    assert tiles == [
        0x0BB7CE4D8BF3A45C,
        0x058590D783B07A3D,
        0xEB3668E20F422AF4,
        0xC001EFE0437CC887,
        0xC4E0A4537FDDD8CA,
        0x899C8BC7C70FAFB0,
    ]
    assert combined(tiles) == 0x6879F60CFCAF4B68
    assert tile_hashes(v, 3, 5, 128, 128) == [0x6879F60CFCAF4B68]  # one tile: the same XOR


def test_the_cpp_tests_constants_are_what_python_computes():
    text = CPP_TEST.read_text()
    pairs = re.findall(r"EXPECT_EQ\(element_hash\((\w+), (\w+)\), (0x[0-9a-f]+)ULL\)", text)
    assert len(pairs) == 4, pairs
    for position, bits, want in pairs:
        assert element_hash(int(position, 0), int(bits, 0)) == int(want, 16), (position, bits)
    block = re.search(r"const std::vector<std::uint64_t> want = \{(.*?)\};", text, re.S)
    assert block is not None
    want = [int(h, 16) for h in re.findall(r"0x([0-9a-f]+)ULL", block.group(1))]
    assert want == tile_hashes(sample_values(15), 3, 5, 2, 2)


def test_one_flipped_bit_changes_only_its_tile():
    rows, cols = 8, 6
    values = [(p * 40503) & 0xFFFF for p in range(rows * cols)]
    before = tile_hashes(values, rows, cols, 4, 3)
    for p in range(rows * cols):
        for bit in range(16):
            flipped = list(values)
            flipped[p] ^= 1 << bit
            after = tile_hashes(flipped, rows, cols, 4, 3)
            tile = (p % rows) // 4 + (p // rows) // 3 * 2
            assert [t for t in range(len(before)) if before[t] != after[t]] == [tile]
    assert all(0 <= h <= MASK for h in before)
