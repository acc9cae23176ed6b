#!/usr/bin/env python3
"""torch_load_strict.py MODEL.json CHECKPOINT [MODEL2.json CHECKPOINT2]

Loads the model part of a tcc checkpoint (parameters and buffers, by their
PyTorch names) into the PyTorch model of MODEL.json, built by the code the
parity tests use (test/e2e/torch_reference.py), with
load_state_dict(strict=True): every tensor the model has must be there, with
its shape, and nothing else. With a second model and checkpoint, both models
evaluate (eval mode: running statistics) one fixed random batch and their
outputs must be equal, bit for bit. Exit 0 on success; otherwise one line
saying what differs and exit 1. Needs Debian's python3-torch."""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch_reference as ref  # noqa: E402

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64}


def model_tensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + size])
    base = 8 + size
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or name == "step" or name.split(".")[0] in (
                "optimizer", "ema", "lookahead"):
            continue
        begin, end = info["data_offsets"]
        array = np.frombuffer(raw[base + begin:base + end], dtype=DTYPES[info["dtype"]])
        tensors[name] = torch.from_numpy(array.reshape(info["shape"]).copy())
    return tensors


def load(model_path, checkpoint):
    with open(model_path) as f:
        spec = json.load(f)
    model = ref.TccModel(spec)
    try:
        model.load_state_dict(model_tensors(checkpoint), strict=True)
    except RuntimeError as e:
        sys.exit("%s into %s: %s" % (checkpoint, model_path, str(e).replace("\n", " ")))
    return spec, model.eval()


def main():
    spec, model = load(sys.argv[1], sys.argv[2])
    if len(sys.argv) < 5:
        return
    _, other = load(sys.argv[3], sys.argv[4])
    shape = [16] + [int(d) for d in spec["input"]["shape"]]
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        a, b = model(x), other(x)
    if not torch.equal(a, b):
        sys.exit("outputs differ: max |difference| %g" % float((a - b).abs().max()))


if __name__ == "__main__":
    main()
