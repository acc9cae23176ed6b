"""Writes token-id NPY data sets for token-data.test: python3 token_npy.py
OUT_DIR CASE. Each case is good data (T 4, ids in [0, 10), 3 classes; the
lm-* cases next-token targets [N, T] in [0, 10) or -100) with one thing
wrong. Plain Python (the lit python need not have numpy)."""
import os
import random
import struct
import sys


def save(path, descr, shape, values):
    """An NPY 1.0 file of a C-ordered array."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    fmt = {"<i4": "i", "<i8": "q", "<u2": "H", "<f4": "f"}[descr]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


out, case = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
rng = random.Random(0)
t = 5 if case == "length" else 4
x = [rng.randrange(10) for _ in range(8 * t)]
xt = [rng.randrange(10) for _ in range(4 * t)]
y = [rng.randrange(3) for _ in range(8)]
yt = [rng.randrange(3) for _ in range(4)]
dtype = {"float": "<f4", "uint16": "<u2"}.get(case, "<i4")
if case == "id-too-large":
    xt[2 * t + 3] = 10
elif case == "id-negative":
    x[5 * t + 1] = -1
else:
    assert case in ("good", "length", "float", "uint16") or case.startswith("lm-"), case
save(os.path.join(out, "train_x.npy"), dtype, [8, t], x)
save(os.path.join(out, "test_x.npy"), dtype, [4, t], xt)
y_shape, yt_shape = [8], [4]
if case.startswith("lm-") and case != "lm-per-sample":
    # the next token at each position, the last one ignored
    def next_tokens(ids, n):
        return [ids[i + 1] if (i + 1) % t else -100 for i in range(n * t)]
    y, yt, y_shape, yt_shape = next_tokens(x, 8), next_tokens(xt, 4), [8, t], [4, t]
    if case == "lm-target-range":
        y[1 * t + 2] = 10
    elif case == "lm-shape":
        y, y_shape = y + [0] * 8, [8, t + 1]
    else:
        assert case == "lm-good", case
save(os.path.join(out, "train_y.npy"), "<i8", y_shape, y)
save(os.path.join(out, "test_y.npy"), "<i8", yt_shape, yt)
