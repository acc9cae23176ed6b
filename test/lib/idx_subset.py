#!/usr/bin/env python3
"""idx_subset.py SRC DST TRAIN TEST: the first TRAIN training and TEST test
samples of an IDX data set (Fashion-MNIST's four files, each optionally
.gz) written uncompressed to DST, for tests whose trainers train a few
steps and would otherwise spend their time evaluating 10000 test images.
Standard library only (lit's Python)."""
import gzip
import os
import sys


def read(folder, stem):
    for name, opener in ((stem, open), (stem + ".gz", gzip.open)):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with opener(path, "rb") as f:
                return f.read()
    sys.exit(f"error: {folder}: no {stem}[.gz]")


def first(data, n):
    """The IDX file `data` cut to its first n items."""
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    if n > dims[0]:
        sys.exit(f"error: asked for {n} items of {dims[0]}")
    per_item = 1
    for d in dims[1:]:
        per_item *= d
    head = data[:4] + n.to_bytes(4, "big") + data[8:4 + 4 * rank]
    return head + data[4 + 4 * rank:4 + 4 * rank + n * per_item]


def main():
    src, dst, train, test = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    os.makedirs(dst, exist_ok=True)
    for prefix, n in (("train", train), ("t10k", test)):
        for kind in ("images-idx3-ubyte", "labels-idx1-ubyte"):
            stem = f"{prefix}-{kind}"
            with open(os.path.join(dst, stem), "wb") as f:
                f.write(first(read(src, stem), n))


if __name__ == "__main__":
    main()
