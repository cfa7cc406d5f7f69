"""Which GPU code an executable carries: SASS (per sm_XY) and PTX (per compute_XY), read from
the ELF section `.nv_fatbin` without any CUDA tool. Used by `doctor` to predict "no kernel image
is available for execution on the device" before it happens.

Fatbin layout (as nvcc writes it): a 16-byte header (magic 0xBA55ED50, version, header size,
size of the entries), then entries, each with its own header: kind (1 PTX, 2 ELF/SASS), header
size, payload size, ..., the target architecture as an integer (90 for sm_90) at offset 28, and
a flags word at offset 40 in which bit 20 marks architecture-specific code (sm_90a, compute_100a)
and bit 21 family-specific code (sm_100f). Those bits were read off nvcc 13.0's output for
sm_90/90a/100/100a/100f/120 (tests/test_doctor.py builds the same cases when nvcc is present).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from triaudit.core.errors import TriauditError

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
FLAG_ARCH_SPECIFIC, FLAG_FAMILY_SPECIFIC = 1 << 20, 1 << 21


class FatbinError(TriauditError):
    pass


@dataclass(frozen=True)
class GpuCode:
    kind: str  # "sass" or "ptx"
    arch: int  # 90 for sm_90 / compute_90
    variant: str = ""  # "a": this exact architecture only (sm_90a); "f": its family (sm_100f)

    @property
    def name(self) -> str:
        return f"{'sm' if self.kind == 'sass' else 'compute'}_{self.arch}{self.variant}"


def _section(data: bytes, name: bytes) -> bytes | None:
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise FatbinError("not a 64-bit ELF file")
    endian = "<" if data[5] == 1 else ">"
    (e_shoff,) = struct.unpack_from(endian + "Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from(endian + "HHH", data, 0x3A)
    if e_shoff == 0 or e_shnum == 0:
        return None
    headers = [struct.unpack_from(endian + "IIQQQQIIQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    strtab = headers[e_shstrndx]
    names = data[strtab[4] : strtab[4] + strtab[5]]
    for h in headers:
        end = names.find(b"\0", h[0])
        if names[h[0] : end] == name:
            return data[h[4] : h[4] + h[5]]
    return None


def parse_fatbin(blob: bytes) -> set[GpuCode]:
    codes: set[GpuCode] = set()
    pos = 0
    while pos + 16 <= len(blob):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # fatbins are 8-byte aligned inside the section
            continue
        entry, end = pos + header_size, pos + header_size + fat_size
        while entry + 32 <= end:
            kind, _unk, ehsize, payload = struct.unpack_from("<HHIQ", blob, entry)
            (arch,) = struct.unpack_from("<I", blob, entry + 28)
            (flags,) = struct.unpack_from("<Q", blob, entry + 40) if entry + 48 <= end else (0,)
            variant = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY_SPECIFIC else ""
            if kind in (KIND_PTX, KIND_ELF) and 0 < arch < 1000:
                codes.add(GpuCode("ptx" if kind == KIND_PTX else "sass", arch, variant))
            if ehsize == 0:
                break
            entry += ehsize + payload
        pos = max(end, pos + 16)
    return codes


def gpu_code_of(path: str | Path) -> set[GpuCode]:
    data = Path(path).read_bytes()
    section = _section(data, b".nv_fatbin")
    if section is None:
        return set()
    return parse_fatbin(section)


def runs_on(codes: set[GpuCode], cc_major: int, cc_minor: int) -> tuple[bool, str]:
    """Can a device of this compute capability run this code, and how.

    SASS for sm_AB (and family code sm_ABf) runs on devices A.D with D >= B (same major); PTX for
    compute_AB is compiled by the driver for any device >= A.B, compute_ABf within the family.
    Architecture-specific code (sm_90a, compute_90a) runs on exactly that device.
    """
    dev = cc_major * 10 + cc_minor

    def fits(c: GpuCode) -> bool:
        if c.variant == "a":
            return c.arch == dev
        if c.kind == "sass" or c.variant == "f":
            return c.arch // 10 == cc_major and c.arch <= dev
        return c.arch <= dev

    def key(c):  # newest last; plain code before a/f at one arch
        return (c.arch, c.variant == "")

    sass = sorted((c for c in codes if c.kind == "sass" and fits(c)), key=key)
    if sass:
        return True, f"SASS for {sass[-1].name}"
    ptx = sorted((c for c in codes if c.kind == "ptx" and fits(c)), key=key)
    if ptx:
        return True, f"PTX for {ptx[-1].name} (JIT-compiled by the driver at first launch)"
    return False, "no SASS for this major version and no PTX old enough"


def describe(codes: set[GpuCode]) -> str:
    def order(c):
        return (c.arch, c.variant)

    sass = ", ".join(c.name for c in sorted((c for c in codes if c.kind == "sass"), key=order))
    ptx = ", ".join(c.name for c in sorted((c for c in codes if c.kind == "ptx"), key=order))
    return f"SASS: {sass or 'none'}; PTX: {ptx or 'none'}"
