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

A 16-bit step (bf16-mixed, fp16-mixed) is compared by compare_mixed
instead: two 16-bit implementations differ by round-off that no fixed
bound describes (a sum in another order rounds to a neighbouring 16-bit
value, and every later op inherits it), so each is measured against the
same model's f32 step, as test/e2e/compare_bf16_autocast.py measures tcc's
bf16 step against torch.autocast's (docs/passes.md, "Numerics").
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
            if y.get(key) is None:
                continue
            value = x.get(key)  # a non-finite loss is written as a string
            if not isinstance(value, (int, float)) or not abs(value - y[key]) <= TOLERANCE * abs(y[key]):
                failures.append(f"{y['type']} {key}: {value} ({na}) vs {y[key]} ({nb})")
        # Two samples of the record's: a train record counts at least one
        # log window, a test record the whole test set.
        for key, samples in (("train_acc", batch * (steps // 2)), ("test_acc", test_samples)):
            if y.get(key) is not None and abs(x[key] - y[key]) * samples > 2:
                failures.append(f"{y['type']} {key}: {x[key]} ({na}) vs {y[key]} ({nb})")
        if x["step"] != y["step"]:
            failures.append(f"record steps: {x['step']} ({na}) vs {y['step']} ({nb})")
    return failures, worst


def _norm(a):
    return float(np.linalg.norm(np.asarray(a, dtype=np.float64).ravel()))


def compare_mixed(a, ref16, ref32, names=("cuda", "cpu")):
    """a, ref16: (state, metrics) of the two 16-bit runs (the one checked and
    the cpu trainer's); ref32: the cpu trainer's f32 run of the same model,
    seed and steps. With d(x) = |x - ref32| (Euclidean): for every float
    tensor of at least 64 elements and for the whole state,
    d(a) <= 2 d(ref16) + 1e-4 |ref32| (no further from the f32 step than
    twice the cpu 16-bit step is), and for the whole state d(a) >=
    d(ref16) / 4 (a step that silently ran in f32 is about a thousand times
    closer); integer tensors (the step counter, the loss scale's growth
    tracker) and the loss scale (state of the fp16 step only) equal
    ref16's. The metrics records line up
    with finite losses (their values are the f32 step's code, compared by
    compare()). Returns (failures, ratio): ratio = d(a) / d(ref16) for the
    whole state."""
    (a_state, a_metrics), (s16, m16), (s32, _) = a, ref16, ref32
    na, nb = names
    failures = []
    if sorted(a_state) != sorted(s16):
        failures.append(f"checkpoint tensors differ: {sorted(a_state)} vs {sorted(s16)}")
    whole_a = whole_16 = whole_32 = 0.0
    for key in sorted(set(a_state) & set(s16)):
        x, y = (np.asarray(t, dtype=np.float64) for t in (a_state[key], s16[key]))
        if x.shape != y.shape:
            failures.append(f"{key}: shape {x.shape} ({na}) vs {y.shape} ({nb})")
            continue
        if a_state[key].dtype.kind in "iu" or key.endswith("loss_scale"):
            if not np.array_equal(x, y):
                failures.append(f"{key}: {x.ravel()[:4]} ({na}) vs {y.ravel()[:4]} ({nb})")
            continue
        if key not in s32:  # state of the 16-bit step only
            continue
        z = np.asarray(s32[key], dtype=np.float64)
        da, d16, n32 = _norm(x - z), _norm(y - z), _norm(z)
        whole_a, whole_16, whole_32 = whole_a + da * da, whole_16 + d16 * d16, whole_32 + n32 * n32
        if x.size >= 64 and not da <= 2 * d16 + 1e-4 * n32:
            failures.append(f"{key}: |{na} - f32| = {da:.3g} > 2 |{nb} - f32| + 1e-4 |f32| = "
                            f"{2 * d16 + 1e-4 * n32:.3g}")
    whole_a, whole_16, whole_32 = whole_a ** 0.5, whole_16 ** 0.5, whole_32 ** 0.5
    if not whole_a <= 2 * whole_16 + 1e-4 * whole_32:
        failures.append(f"whole state: |{na} - f32| = {whole_a:.3g} > 2 |{nb} - f32| + 1e-4 "
                        f"|f32| = {2 * whole_16 + 1e-4 * whole_32:.3g}")
    if not whole_a >= whole_16 / 4:
        failures.append(f"whole state: |{na} - f32| = {whole_a:.3g} < |{nb} - f32| / 4 = "
                        f"{whole_16 / 4:.3g}: did the step run in 16 bits?")
    if len(a_metrics) != len(m16) or len(m16) < 3:
        failures.append(f"metrics records: {len(a_metrics)} ({na}) vs {len(m16)} ({nb})")
    for x, y in zip(a_metrics, m16):
        if x["step"] != y["step"]:
            failures.append(f"record steps: {x['step']} ({na}) vs {y['step']} ({nb})")
        for key in ("train_loss", "test_loss"):
            if y.get(key) is not None and not np.isfinite(x.get(key, np.nan)):
                failures.append(f"{y['type']} {key}: {x.get(key)} ({na})")
    return failures, (whole_a / whole_16 if whole_16 > 0 else float("inf"))
