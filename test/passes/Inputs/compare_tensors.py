#!/usr/bin/env python3
"""compare_tensors.py A.safetensors B.safetensors [--zero NAME]...

Exit 0 when every tensor the two checkpoints share is byte-identical, and
every tensor named by --zero (in A) is all zeros; otherwise print what
differs and exit 1. Reads the safetensors format directly (8-byte header
length, JSON header, raw data): no third-party module."""
import json
import struct
import sys


def tensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + size])
    base = 8 + size
    return {name: raw[base + info["data_offsets"][0]:base + info["data_offsets"][1]]
            for name, info in header.items() if name != "__metadata__"}


def main():
    args = sys.argv[1:]
    zero = [args[i + 1] for i, a in enumerate(args) if a == "--zero"]
    paths = [a for i, a in enumerate(args) if a != "--zero" and (i == 0 or args[i - 1] != "--zero")]
    a, b = tensors(paths[0]), tensors(paths[1])
    bad = [n for n in sorted(set(a) & set(b)) if a[n] != b[n]]
    bad += ["%s is not all zeros" % n for n in zero if n not in a or any(a[n])]
    shared = len(set(a) & set(b))
    if bad or shared == 0:
        print("differ: " + (", ".join(bad) or "no tensor in common"))
        return 1
    print("%d shared tensors identical" % shared)
    return 0


if __name__ == "__main__":
    sys.exit(main())
