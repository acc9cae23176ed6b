#!/usr/bin/env python3
"""Writes a text file as a character-level language-model data set in tcc's
"npy" layout (docs/data.md#token-ids):

    python3 scripts/text_to_npy.py TEXT... OUT_DIR --seq-len T [--test-fraction F] [--stride S]

The vocabulary is the text's distinct characters in code-point order (id i is
vocab[i]); OUT_DIR/vocab.json holds it. Windows of T + 1 characters, starting
every S (default T) characters, become train_x.npy / test_x.npy (int32 ids
[N, T]: characters 0..T-1 of the window) and train_y.npy / test_y.npy (int64
next-character targets [N, T]: characters 1..T). The last F of the text
(default 0.1) makes the test windows, so no test window overlaps a training
one. The line to put in model.json is printed. Plain Python: no numpy needed.
"""
import argparse
import json
import os
import struct
import sys


def save_npy(path, descr, shape, values):
    """A C-ordered NPY 1.0 array of int32 ('<i4') or int64 ('<i8')."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), {"<i4": "i", "<i8": "q"}[descr]), *values))


def windows(ids, seq_len, stride):
    """(x, y) flattened: every window of seq_len + 1 ids from 0 by stride."""
    x, y, n = [], [], 0
    for start in range(0, len(ids) - seq_len, stride):
        x += ids[start:start + seq_len]
        y += ids[start + 1:start + seq_len + 1]
        n += 1
    return x, y, n


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("text", nargs="+", help="text files, read in order as one text")
    ap.add_argument("out_dir")
    ap.add_argument("--seq-len", type=int, required=True, help="T, tokens per sample")
    ap.add_argument("--stride", type=int, help="characters between windows (default T)")
    ap.add_argument("--test-fraction", type=float, default=0.1)
    args = ap.parse_args(argv)
    t, stride = args.seq_len, args.stride or args.seq_len
    if t < 1 or stride < 1 or not 0 < args.test_fraction < 1:
        sys.exit("error: --seq-len and --stride must be >= 1, --test-fraction in (0, 1)")
    text = ""
    for name in args.text:
        with open(name, encoding="utf-8", errors="replace") as f:
            text += f.read()
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    ids = [index[c] for c in text]
    split = int(len(ids) * (1 - args.test_fraction))
    parts = {"train": windows(ids[:split], t, stride), "test": windows(ids[split:], t, stride)}
    for name, (x, y, n) in parts.items():
        if n == 0:
            sys.exit("error: %s: the %s part (%d characters) holds no window of %d; use a "
                     "longer text or a smaller --seq-len" % (" ".join(args.text), name,
                                                             len(x) or (split if name == "train"
                                                                        else len(ids) - split),
                                                             t + 1))
    os.makedirs(args.out_dir, exist_ok=True)
    for name, (x, y, n) in parts.items():
        save_npy(os.path.join(args.out_dir, name + "_x.npy"), "<i4", [n, t], x)
        save_npy(os.path.join(args.out_dir, name + "_y.npy"), "<i8", [n, t], y)
    with open(os.path.join(args.out_dir, "vocab.json"), "w") as f:
        json.dump(vocab, f)
    print(json.dumps({"input": {"shape": [t], "type": "tokens", "vocab": len(vocab),
                                "classes": len(vocab)}})[1:-1])
    print("# %d training and %d test windows of %d characters, vocabulary of %d"
          % (parts["train"][2], parts["test"][2], t, len(vocab)))


if __name__ == "__main__":
    main(sys.argv[1:])
