"""The trainer's test metrics against PyTorch: test_loss and test_acc.

usage: compare_test_metrics.py --tcc build/bin/tcc [--keep]

For each variant of test/e2e/models/small_cnn.json (cross-entropy with label
smoothing, a "sum" reduction, MSE, flip TTA, flip TTA turned off by the
trainer's --tta off, tiny_vit.json's graph of token ops), compiles the trainer, starts it
from PyTorch's weights (random BN running statistics included) with
`--eval-only`, and compares its metrics line with PyTorch evaluating the same
weights in float64 on the same test images: 45 of them in batches of 16, so
the last batch is padded and the padding must not count.

test_loss is the training criterion averaged over the test samples (for MSE
with "mean", a sample's loss is the mean over its elements); it must agree to
1e-4 relative (the trainer runs float32, where a forward pass of this size is
accurate to ~1e-6). test_acc must agree exactly, except that a sample whose two
largest logits are closer than 1e-4 of the largest may go either way.
Exits 0 when every variant agrees, 1 otherwise, 77 without torch.
"""
import argparse
import copy
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import compare_with_torch as cw  # noqa: E402  (exits 77 without torch)
import torch_reference as ref  # noqa: E402

np, torch = cw.np, cw.torch

N_TEST, EVAL_BATCH = 45, 16
VARIANTS = {
    "cross_entropy, label smoothing 0.1": {"loss": {"op": "cross_entropy", "label_smoothing": 0.1}},
    "cross_entropy, sum": {"loss": {"op": "cross_entropy", "reduction": "sum"}},
    "mse_loss, mean": {"loss": {"op": "mse_loss"}},
    "cross_entropy, flip TTA": {"loss": {"op": "cross_entropy"}, "eval": {"tta": ["flip"]}},
    # The same trainer evaluating without its TTA (./train --tta off): the
    # reference evaluates the plain images.
    "cross_entropy, flip TTA, --tta off": {"loss": {"op": "cross_entropy"},
                                           "eval": {"tta": ["flip"]},
                                           "trainer_args": ["--tta", "off"]},
    # tiny_vit's token ops: its parameters expanded over the evaluation's
    # batch of 16, the last one padded.
    "tokens (tiny_vit), cross_entropy": {
        "loss": {"op": "cross_entropy"},
        "input": {"shape": [3, 8, 8], "classes": 10},
        "graph": json.load(open(os.path.join(HERE, "models", "tiny_vit.json")))["graph"]},
}


def reference_metrics(spec, model, images, labels):
    """float64 PyTorch: (mean per-sample criterion, correct count, near ties)."""
    model = copy.deepcopy(model).to(torch.float64).eval()
    x = images.to(torch.float64)
    with torch.no_grad():
        logits = model(x)
        if "flip" in spec.get("eval", {}).get("tta", []):
            logits = 0.5 * (logits + model(torch.flip(x, dims=[3])))
        loss = ref.loss_fn(dict(spec, loss=dict(spec["loss"], reduction="sum")), logits, labels)
    per_sample = float(loss) / len(labels)
    if spec["loss"]["op"] == "mse_loss" and spec["loss"].get("reduction", "mean") == "mean":
        per_sample /= logits.shape[1]
    top2 = torch.topk(logits, 2, dim=1).values
    near = int(((top2[:, 0] - top2[:, 1]) < 1e-4 * top2[:, 0].abs().clamp(min=1e-3)).sum())
    correct = int((logits.argmax(1) == labels).sum())
    return per_sample, correct, near


def run_variant(args, name, change, tmp):
    spec = json.load(open(os.path.join(HERE, "models", "small_cnn.json")))
    change = copy.deepcopy(change)
    trainer_args = change.pop("trainer_args", [])
    spec.update(change)
    spec["eval"] = dict(spec.get("eval", {}), batch_size=EVAL_BATCH)
    rng = np.random.RandomState(1)
    shape = spec["input"]["shape"]
    x = rng.randint(0, 256, size=[EVAL_BATCH] + shape, dtype=np.uint8)
    y = rng.randint(0, 10, size=[EVAL_BATCH]).astype(np.int64)
    xt = rng.randint(0, 256, size=[N_TEST] + shape, dtype=np.uint8)
    yt = rng.randint(0, 10, size=[N_TEST]).astype(np.int64)
    cw.write_npy(spec, tmp, x, y, xt, yt)
    model_path = os.path.join(tmp, "model.json")
    json.dump(spec, open(model_path, "w"), indent=1)

    torch.manual_seed(0)
    model = ref.TccModel(spec)
    with torch.no_grad():  # running statistics other than the defaults
        for key, buf in model.state_dict().items():
            if key.endswith("running_mean"):
                buf.copy_(torch.randn(buf.shape) * 0.3)
            elif key.endswith("running_var"):
                buf.copy_(0.5 + torch.rand(buf.shape))
    init = {n: t.detach().numpy().copy() for n, t in model.state_dict().items()}
    cw.write_safetensors(os.path.join(tmp, "init.safetensors"), init,
                         {"format": "pt", "producer": "compare_test_metrics.py"})
    exe = os.path.join(tmp, "train")
    cw.run([args.tcc, "compile", model_path, "--target=cpu", "-o", exe], tmp, "tcc compile")
    cw.run([exe, "--init", "init.safetensors", "--eval-only", "--metrics", "m.jsonl",
            "--quiet"] + trainer_args, tmp, "the tcc trainer")
    line = [json.loads(l) for l in open(os.path.join(tmp, "m.jsonl")) if l.strip()][-1]

    reference_spec = copy.deepcopy(spec)
    if "--tta" in trainer_args and trainer_args[trainer_args.index("--tta") + 1] == "off":
        reference_spec["eval"].pop("tta", None)
    loss, correct, near = reference_metrics(reference_spec, model, cw.normalize(spec, xt),
                                            torch.from_numpy(yt))
    failures = []
    got_loss, got_acc = line.get("test_loss"), line.get("test_acc")
    if got_loss is None or abs(got_loss - loss) > 1e-4 * max(abs(loss), 1e-3):
        failures.append("test_loss %s, PyTorch %.9g" % (got_loss, loss))
    if got_acc is None or abs(got_acc * N_TEST - correct) > near + 1e-9:
        failures.append("test_acc %s, PyTorch %d/%d (%d near ties)"
                        % (got_acc, correct, N_TEST, near))
    print("%-36s test_loss tcc %.9g torch %.9g | test_acc tcc %s torch %.4f%s"
          % (name, got_loss if got_loss is not None else float("nan"), loss, got_acc,
             correct / N_TEST, "" if not failures else "  FAIL: " + "; ".join(failures)))
    return not failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tcc", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directories")
    args = parser.parse_args()
    args.tcc = os.path.abspath(args.tcc)
    ok = True
    for name, change in VARIANTS.items():
        tmp = tempfile.mkdtemp(prefix="tcc-test-metrics-")
        try:
            ok &= run_variant(args, name, change, tmp)
        except cw.RunFailed as e:
            print("%s: %s" % (name, e))
            ok = False
        finally:
            if not args.keep:
                shutil.rmtree(tmp, ignore_errors=True)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
