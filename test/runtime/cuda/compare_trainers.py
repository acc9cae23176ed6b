"""Two trainers of one model, trained the same steps from the same seed on
the same data, agree: the comparison of host_emulation.py (the emulated cuda
trainer against the cpu trainer) and of scripts/gpu_check.py (the cuda
trainer on a GPU against the cpu trainer).

  - every tensor of the checkpoints: max |a - b| <= 1e-4 * max |b| per
    tensor (the two differ by summation order: a dot product of K = 784 f32
    terms is within K * 2^-24 = 4.7e-5 relative of the exact one), the step
    counter exactly;
  - the metrics the trainers read from their totals: losses within 1e-4
    relative, accuracies within 2 samples of those the record counts (a
    near-tie of two logits may go either way).
"""

import json
import struct

import numpy as np

TOLERANCE = 1e-4
_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64,
           "I32": np.int32, "U8": np.uint8, "BF16": np.uint16}


def read_safetensors(path):
    """name -> numpy array (bf16 widened to f32); NumPy only, so that it runs
    on the GPU machines as it is."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, h in header.items():
        begin, end = h["data_offsets"]
        a = np.frombuffer(raw[8 + n + begin:8 + n + end], dtype=np.dtype(_DTYPES[h["dtype"]]).newbyteorder("<"))
        if h["dtype"] == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        out[name] = a.reshape(h["shape"])
    return out


def read_metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def compare(a, b, batch, steps, test_samples=10000, names=("cuda", "cpu")):
    """a, b: (state, metrics) of the two runs. Returns (failures, worst): the
    lines that say what differs, and the largest |a - b| of a tensor relative
    to its max |b|."""
    (a_state, a_metrics), (b_state, b_metrics) = a, b
    na, nb = names
    failures, worst = [], 0.0
    if sorted(a_state) != sorted(b_state):
        failures.append(f"checkpoint tensors differ: {sorted(a_state)} vs {sorted(b_state)}")
    for key in sorted(set(a_state) & set(b_state)):
        x = np.asarray(a_state[key], dtype=np.float64)
        y = np.asarray(b_state[key], dtype=np.float64)
        if x.shape != y.shape:
            failures.append(f"{key}: shape {x.shape} ({na}) vs {y.shape} ({nb})")
            continue
        scale = float(np.abs(y).max()) if y.size else 0.0
        diff = float(np.abs(x - y).max()) if y.size else 0.0
        exact = key == "step"
        if scale > 0 and not exact:
            worst = max(worst, diff / scale)
        if diff != 0 if exact else not diff <= TOLERANCE * scale:
            failures.append(f"{key}: max |{na} - {nb}| = {diff:.3g} (max |{nb}| = {scale:.3g})")
    if len(a_metrics) != len(b_metrics) or len(b_metrics) < 3:
        failures.append(f"metrics records: {len(a_metrics)} ({na}) vs {len(b_metrics)} ({nb})")
    for x, y in zip(a_metrics, b_metrics):
        for key in ("train_loss", "test_loss"):
            if y.get(key) is not None and not abs(x[key] - y[key]) <= TOLERANCE * abs(y[key]):
                failures.append(f"{y['type']} {key}: {x[key]} ({na}) vs {y[key]} ({nb})")
        # Two samples of the record's: a train record counts at least one
        # log window, a test record the whole test set.
        for key, samples in (("train_acc", batch * (steps // 2)), ("test_acc", test_samples)):
            if y.get(key) is not None and abs(x[key] - y[key]) * samples > 2:
                failures.append(f"{y['type']} {key}: {x[key]} ({na}) vs {y[key]} ({nb})")
        if x["step"] != y["step"]:
            failures.append(f"record steps: {x['step']} ({na}) vs {y['step']} ({nb})")
    return failures, worst
