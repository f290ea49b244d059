"""Slim a CPU image whose torch is PyPI's CUDA wheel (scripts/images.sh --local): keep the
NVIDIA libraries the dynamic linker needs to load torch, remove the rest.

    python prune_cuda.py SITE_PACKAGES        (prints what it removed and the MB freed)

A CPU-only torch (PyTorch's CPU index, the image's default) has no nvidia/ packages, and
this does nothing. PyPI's torch is the CUDA build: `import torch` links libtorch_cuda.so,
and through it cuBLAS, cuFFT, cuSPARSE, NCCL, ..., which must stay. What the linker never
loads on a machine without a GPU goes:

- every library under nvidia/ that no torch library needs (DT_NEEDED, transitively): cuDNN's
  engines, which libcudnn.so.9 opens only when a convolution runs on a GPU; the profiler's
  and NVSHMEM's plugins; cuSOLVER, which only libtorch_cuda_linalg.so needs, and torch opens
  that one itself on the first linear-algebra call on a CUDA tensor;
- the CUDA headers, static archives and device bitcode (inputs of GPU code compilation);
- Triton, the GPU code generator of torch.compile (imported only there).

About 2.3 GB of the 6.3 GB image with torch 2.15. The GPU image keeps all of it.
"""

from __future__ import annotations

import re
import shutil
import struct
import sys
from pathlib import Path

# loaded by torch with dlopen when a GPU needs it, never by the linker at import
_OPENED_ON_DEMAND = {"libtorch_cuda_linalg.so"}
_SHARED = re.compile(r"\.so(\.[0-9]+)*$")
_DT_NEEDED, _DT_STRTAB, _PT_DYNAMIC, _PT_LOAD = 1, 5, 2, 1


def needed(path: Path) -> list[str]:
    """The DT_NEEDED names of a 64-bit little-endian ELF shared library ([] for anything else)."""
    data = path.read_bytes()
    if data[:6] != b"\x7fELF\x02\x01":
        return []
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for i in range(phnum):
        kind, _, offset, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if kind == _PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif kind == _PT_DYNAMIC:
            dynamic = (offset, filesz)
    if dynamic is None:
        return []
    entries = [struct.unpack_from("<qQ", data, dynamic[0] + j) for j in range(0, dynamic[1], 16)]
    strtab = next(value for tag, value in entries if tag == _DT_STRTAB)
    # DT_STRTAB is an address: the file offset is the one of the segment that holds it
    base = next(offset + strtab - vaddr for vaddr, offset, size in loads if vaddr <= strtab < vaddr + size)
    names = []
    for tag, value in entries:
        if tag == _DT_NEEDED:
            start = base + value
            names.append(data[start:data.index(b"\0", start)].decode())
    return names


def _libraries(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.so*") if _SHARED.search(p.name) and p.is_file() and not p.is_symlink()]


def prune(site: Path) -> tuple[list[Path], int]:
    nvidia = site / "nvidia"
    if not nvidia.is_dir():
        return [], 0
    by_name: dict[str, list[Path]] = {}
    for lib in _libraries(nvidia):
        by_name.setdefault(lib.name, []).append(lib)
    roots = [lib for lib in _libraries(site / "torch") if lib.name not in _OPENED_ON_DEMAND]
    keep: set[Path] = set()
    todo = list(roots)
    while todo:
        for name in needed(todo.pop()):
            for lib in by_name.get(name, []):
                if lib not in keep:
                    keep.add(lib)
                    todo.append(lib)
    removed = [lib for libs in by_name.values() for lib in libs if lib not in keep]
    removed += [d for d in nvidia.glob("*/include") if d.is_dir()]
    # static archives and device bitcode: inputs of GPU code compilation, never loaded
    removed += [f for f in nvidia.glob("*/lib/*") if f.suffix in (".a", ".bc") and f.is_file()]
    removed += [d for d in site.glob("triton") if d.is_dir()]
    freed = 0
    for path in removed:
        if path.is_dir():
            freed += sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            shutil.rmtree(path)
        else:
            freed += path.stat().st_size
            path.unlink()
    for dist in site.glob("triton-*.dist-info"):
        shutil.rmtree(dist)  # pip then no longer lists it
    return removed, freed


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    site = Path(argv[0])
    removed, freed = prune(site)
    for path in removed:
        print(f"removed {path.relative_to(site)}")
    print(f"prune_cuda: {len(removed)} removed, {freed // 2**20} MB freed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
