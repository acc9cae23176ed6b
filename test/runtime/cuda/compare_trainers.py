"""Two trainers of one model, trained the same steps from the same seed on
the same data, agree: the comparison of host_emulation.py (the emulated cuda
trainer against the cpu trainer) and of scripts/gpu_check.py (the cuda
trainer on a GPU against the cpu trainer).

  - every tensor of the checkpoints: max |a - b| <= 1e-4 * max |b| per
    tensor (the two differ by summation order: a dot product of K = 784 f32
    terms is within K * 2^-24 = 4.7e-5 relative of the exact one), the step
    counter exactly;
  - the metrics the trainers read from their totals (with --eval both the
    raw weights' too): losses within 1e-4 relative, accuracies within 2 samples of those the record counts (a
    near-tie of two logits may go either way).

A 16-bit step (bf16-mixed, fp16-mixed, bf16, fp16) is compared by
compare_mixed instead: two 16-bit implementations differ by round-off that
no fixed bound describes (a sum in another order rounds to a neighbouring
16-bit value, and every later op inherits it), so each is measured against
the same model's f32 step, as test/e2e/compare_bf16_autocast.py measures
tcc's bf16 step against torch.autocast's (docs/passes.md, "Numerics"), and
against each other within the part of that round-off two implementations
can do differently (docs/cuda.md, "The 16-bit comparison's bound").
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
        for key in ("train_loss", "test_loss", "raw_test_loss"):
            if y.get(key) is None:
                continue
            value = x.get(key)  # a non-finite loss is written as a string
            if not isinstance(value, (int, float)) or not abs(value - y[key]) <= TOLERANCE * abs(y[key]):
                failures.append(f"{y['type']} {key}: {value} ({na}) vs {y[key]} ({nb})")
        # Two samples of the record's: a train record counts at least one
        # log window, a test record the whole test set.
        for key, samples in (("train_acc", batch * (steps // 2)), ("test_acc", test_samples),
                             ("raw_test_acc", test_samples)):
            if y.get(key) is not None and abs(x[key] - y[key]) * samples > 2:
                failures.append(f"{y['type']} {key}: {x[key]} ({na}) vs {y[key]} ({nb})")
        if x["step"] != y["step"]:
            failures.append(f"record steps: {x['step']} ({na}) vs {y['step']} ({nb})")
    return failures, worst


def _norm(a):
    return float(np.linalg.norm(np.asarray(a, dtype=np.float64).ravel()))


# The unit round-off u of each 16-bit step's format: a value rounded to it
# is within u of itself, relative (half the spacing of its binade).
UNIT_ROUNDOFF = {"fp16": 2.0 ** -11, "fp16-mixed": 2.0 ** -11,
                 "bf16": 2.0 ** -8, "bf16-mixed": 2.0 ** -8}


# The longest f32-accumulated sum whose result the 16-bit steps round (a
# convolution's or matmul's K = C_in k^2 or in_features: ResNet-9's 512 * 9
# = 4608 is the largest of the checked models), as a power of two.
LONGEST_SUM_LOG2 = 13


def flip_fraction(u):
    """p: the fraction of 16-bit roundings that two correct implementations
    of one step may take to neighbouring values. Their f32 sums of K terms,
    added in other orders, differ by about sqrt(K) 2^-24 of the terms
    (random-walk round-off); a result rounds otherwise only where it lies
    that close to a rounding boundary, spaced u to 2u apart."""
    return min(1.0, 2.0 ** (LONGEST_SUM_LOG2 / 2 - 24) / u)


def implementations_bound(d16, n32, u):
    """The largest |a - ref16| of two correct 16-bit steps (compare_mixed):
    a flipped rounding moves a value by one spacing (<= 2u of it), energy
    4u^2 p against the u^2 / 3 of a rounding to nearest, so the roundings
    the two do differently are sqrt(12 p) of all the roundings that make
    d(ref16), carried through the same steps; twice that (two draws), plus
    a flip of p of every element of the tensor itself."""
    p = flip_fraction(u)
    return 2 * (12 * p) ** 0.5 * d16 + 4 * u * p ** 0.5 * n32


def distances(a_state, s16, s32):
    """Per float tensor of the f32 step's state: (name, elements, |a - s16|,
    |a - s32|, |s16 - s32|, |s32|), Euclidean norms."""
    rows = []
    for key in sorted(set(a_state) & set(s16) & set(s32)):
        if a_state[key].dtype.kind in "iu" or key.endswith("loss_scale"):
            continue
        x, y, z = (np.asarray(t[key], dtype=np.float64) for t in (a_state, s16, s32))
        if not x.shape == y.shape == z.shape:
            continue
        rows.append((key, x.size, _norm(x - y), _norm(x - z), _norm(y - z), _norm(z)))
    return rows


def compare_mixed(a, ref16, ref32, precision, names=("cuda", "cpu"), test_samples=None):
    """a, ref16: (state, metrics) of the two 16-bit runs (the one checked and
    the cpu trainer's); ref32: the cpu trainer's f32 run of the same model,
    seed and steps; precision: the 16-bit step's (UNIT_ROUNDOFF). The bound
    (docs/cuda.md, "The 16-bit comparison's bound"):

    Both 16-bit steps round the same values to the same format (the same
    precision assignment), where their sums differ in order: each rounding
    moves a value by at most u of it, and their differences from the f32
    step, d(x) = |x - ref32| (Euclidean), are those roundings carried
    through the same training steps. So d(a) and d(ref16) are two draws of
    one size, and for every float tensor, whatever its size, and for the
    whole state

        d(a) <= 2 d(ref16) + u |ref32|

    (the second term: one rounding of every element, the least two correct
    16-bit steps may differ by where a tensor's own draw d(ref16) came out
    small by chance), and for the whole state d(a) >= d(ref16) / 4 (a step
    that silently ran in f32 is about a thousand times closer). Integer
    tensors (the step counter, the loss scale's growth tracker) and the loss
    scale (state of the fp16 step only) equal ref16's.

    The two 16-bit steps against each other: their f32 sums differ only in
    order, so only a fraction p of their roundings may differ
    (flip_fraction: p = sqrt(K) 2^-24 / u, 2^-6.5 for fp16, 2^-9.5 for
    bf16), and for the whole state

        |a - ref16| <= 2 sqrt(12 p) d(ref16) + 4 u sqrt(p) |ref32|

    (implementations_bound: 0.73 d(ref16) for fp16, 0.26 for bf16). This is
    what catches a kernel wrong by a rounding's size: it moves a several
    times that far from ref16 while barely further from the f32 step.

    The evaluation records (EMA weights and TTA, as the trainer evaluates):
    test_loss and test_acc (and raw_test_* under --eval both) of a are no
    further from the f32 run's than twice ref16's, plus the rounding floor of
    each (metric_floor). Training records line up with finite losses.

    Returns (failures, summary): summary has "ratio" = d(a) / d(ref16) of
    the whole state, "whole" and "tensors" (the three distances and |ref32|)
    and "metrics" (each evaluation value of the three runs and its bound)."""
    (a_state, a_metrics), (s16, m16), (s32, m32) = a, ref16, ref32
    na, nb = names
    u = UNIT_ROUNDOFF[precision]
    failures = []
    if sorted(a_state) != sorted(s16):
        failures.append(f"checkpoint tensors differ: {sorted(a_state)} vs {sorted(s16)}")
    for key in sorted(set(a_state) & set(s16)):
        x, y = a_state[key], s16[key]
        if x.shape != y.shape:
            failures.append(f"{key}: shape {x.shape} ({na}) vs {y.shape} ({nb})")
        elif (x.dtype.kind in "iu" or key.endswith("loss_scale")) and not np.array_equal(x, y):
            failures.append(f"{key}: {x.ravel()[:4]} ({na}) vs {y.ravel()[:4]} ({nb})")
    rows = distances(a_state, s16, s32)
    for key, size, d_ab, da, d16, n32 in rows:
        if not da <= 2 * d16 + u * n32:
            failures.append(f"{key} ({size}): |{na} - f32| = {da:.3g} > 2 |{nb} - f32| + u |f32| "
                            f"= {2 * d16 + u * n32:.3g} (|{na} - {nb}| = {d_ab:.3g})")
    whole = {k: sum(r[i] ** 2 for r in rows) ** 0.5
             for i, k in ((2, "a_16"), (3, "a_32"), (4, "16_32"), (5, "f32"))}
    if not whole["a_32"] <= 2 * whole["16_32"] + u * whole["f32"]:
        failures.append(f"whole state: |{na} - f32| = {whole['a_32']:.3g} > 2 |{nb} - f32| + "
                        f"u |f32| = {2 * whole['16_32'] + u * whole['f32']:.3g}")
    if not whole["a_16"] <= implementations_bound(whole["16_32"], whole["f32"], u):
        failures.append(f"whole state: |{na} - {nb}| = {whole['a_16']:.3g} > "
                        f"{2 * (12 * flip_fraction(u)) ** 0.5:.2f} |{nb} - f32| + "
                        f"{4 * flip_fraction(u) ** 0.5:.2f} u |f32| = "
                        f"{implementations_bound(whole['16_32'], whole['f32'], u):.3g}: more "
                        "apart than two 16-bit steps that round alike")
    if not whole["a_32"] >= whole["16_32"] / 4:
        failures.append(f"whole state: |{na} - f32| = {whole['a_32']:.3g} < |{nb} - f32| / 4 = "
                        f"{whole['16_32'] / 4:.3g}: did the step run in 16 bits?")
    metrics = []
    if len(a_metrics) != len(m16) or len(m16) != len(m32) or len(m16) < 3:
        failures.append(f"metrics records: {len(a_metrics)} ({na}) vs {len(m16)} ({nb}) vs "
                        f"{len(m32)} (f32)")
    for x, y, z in zip(a_metrics, m16, m32):
        if not x["step"] == y["step"] == z["step"]:
            failures.append(f"record steps: {x['step']} ({na}) vs {y['step']} ({nb}) vs "
                            f"{z['step']} (f32)")
        for key in ("train_loss", "test_loss", "raw_test_loss"):
            if y.get(key) is not None and not np.isfinite(_number(x.get(key))):
                failures.append(f"{y['type']} {key}: {x.get(key)} ({na})")
        for key in ("test_loss", "test_acc", "raw_test_loss", "raw_test_acc"):
            values = [_number(r.get(key)) for r in (x, y, z)]
            if y.get(key) is None or not all(np.isfinite(values)):
                continue
            va, v16, v32 = values
            bound = 2 * abs(v16 - v32) + metric_floor(key, v32, u, test_samples)
            metrics.append({"step": y["step"], "metric": key, na: va, nb: v16, "f32": v32,
                            "bound": bound})
            if not abs(va - v32) <= bound:
                failures.append(f"step {y['step']} {key}: |{na} - f32| = |{va:.6g} - {v32:.6g}| "
                                f"> 2 |{nb} - f32| + floor = {bound:.3g} ({nb}: {v16:.6g})")
    ratio = whole["a_32"] / whole["16_32"] if whole["16_32"] > 0 else float("inf")
    return failures, {"ratio": ratio, "whole": whole, "metrics": metrics,
                      "implementations_bound": implementations_bound(whole["16_32"],
                                                                     whole["f32"], u),
                      "tensors": [dict(zip(("name", "elements", "a_16", "a_32", "16_32", "f32"), r))
                                  for r in rows]}


def _number(v):
    """A metrics value: a non-finite one is written as a string."""
    return float(v) if isinstance(v, (int, float)) else float("nan")


def metric_floor(key, value32, u, test_samples):
    """The least difference two correct 16-bit evaluations of one metric may
    show beyond twice ref16's distance (compare_mixed). A loss: each
    evaluation rounds every logit z at least once (u |z|), the cross entropy
    moves by at most twice the largest logit's change, and in the check's
    short runs the logits' size is that of the loss (near ln C): two
    roundings, 4 u loss. An accuracy: a sample whose two largest logits lie
    within those roundings may go either way: 2 samples of the test set."""
    if key.endswith("loss"):
        return 4 * u * abs(value32)
    return 2 / test_samples if test_samples else 0.0


def distance_table(summary, names=("cuda", "cpu")):
    """compare_mixed's distances as text lines: the whole state first, then
    each tensor."""
    na, nb = names
    lines = [f"{'tensor':<40} {'elements':>9} {'|' + na + '-' + nb + '16|':>12} "
             f"{'|' + na + '-f32|':>11} {'|' + nb + '16-f32|':>12} {'|f32|':>10}"]
    w = summary["whole"]
    rows = [("(whole state)", sum(t["elements"] for t in summary["tensors"]), w["a_16"],
             w["a_32"], w["16_32"], w["f32"])]
    rows += [(t["name"], t["elements"], t["a_16"], t["a_32"], t["16_32"], t["f32"])
             for t in summary["tensors"]]
    for name, size, d_ab, da, d16, n32 in rows:
        lines.append(f"{name:<40} {size:>9} {d_ab:>12.3g} {da:>11.3g} {d16:>12.3g} {n32:>10.3g}")
    for m in summary["metrics"]:
        lines.append(f"step {m['step']} {m['metric']}: {na} {m[na]:.6g}, {nb} {m[nb]:.6g}, "
                     f"f32 {m['f32']:.6g} (|{na} - f32| bound {m['bound']:.3g})")
    return lines
