#!/usr/bin/env python3
"""tcc sample against PyTorch (issue 38 item 5): a tiny causal language model
(models/tiny_lm.json, with EMA weights) and PyTorch's initial weights,
compiled once for the cpu target; then

  (a) the logits of the predict step (./train sample --logits) equal a
      float64 PyTorch forward of the same weights at every generated position,
      short prompts (left-aligned, padded) and windows that slide included;
  (b) greedy sampling (--temperature 0) gives exactly the token ids of a
      PyTorch greedy loop, every step's argmax margin asserted well above the
      float32 error;
  (c) --temperature/--top-k draws equal an independent transcription of the
      documented draw (splitmix64 counters) on tcc's logits; the same seed
      gives the same text on 1 and 3 threads, another seed other text;
  (d) the error lines: a prompt character outside the vocabulary, a
      vocabulary of another size, a checkpoint of another model;
  (e) a checkpoint of a recipe with EMA: the predict step reads its EMA weights;
  and, with --only tcc, `tcc sample` itself prints the greedy loop's text.

    /usr/bin/python3 test/e2e/compare_sample.py --tcc build/bin/tcc [--only trainer|tcc]
        [--keep]

Exits 0 on success, 77 (skipped) without numpy/torch, 1 on a mismatch.
"""

import argparse
import json
import math
import os
import subprocess
import sys

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "models", "tiny_lm.json")
RTOL, FLOOR = 1e-4, 1e-3  # as compare_with_torch.py's tensors
MARGIN = 1e-3  # greedy: the reference's top-2 gap, far above float32's error

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print("SKIPPED: needs numpy and torch for /usr/bin/python3 (%s)" % e)
    sys.exit(SKIP)

sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import compare_with_torch as harness  # noqa: E402
import torch_reference as ref  # noqa: E402

# 17 characters, the model's vocabulary size; "é" is two bytes of UTF-8.
VOCAB = ["\n"] + list("abcdefghijklmnoé")
MASK = (1 << 64) - 1


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def draw(row, temperature, top_k, seed, index):
    """runtime/trainer/Sample.h's drawToken, transcribed; also the distance
    of the uniform number to the nearest boundary of the cumulative sum."""
    ids = sorted(range(len(row)), key=lambda j: (-row[j], j))
    if temperature == 0:
        return ids[0], math.inf
    if 0 < top_k < len(row):
        ids = ids[:top_k]
    ids.sort()
    top = max(float(row[j]) for j in ids)
    weights = [math.exp((float(row[j]) - top) / temperature) for j in ids]
    total = 0.0
    for w in weights:
        total += w
    key = splitmix64(splitmix64(splitmix64(seed) ^ 4) ^ 0)
    r = splitmix64(splitmix64(key ^ index) ^ 0)
    u = (r >> 11) * 2.0 ** -53 * total
    cumulative, chosen, gap = 0.0, None, math.inf
    for j, w in zip(ids, weights):
        cumulative += w
        gap = min(gap, abs(u - cumulative))
        if chosen is None and u < cumulative:
            chosen = j
    return (ids[-1] if chosen is None else chosen), gap / total


def run(cmd, cwd, threads=None, expect=0):
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       encoding="utf-8", env=env)
    if p.returncode != expect:
        raise harness.RunFailed("exit %d, not %d: %s\n%s%s" % (
            p.returncode, expect, " ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout, p.stderr


def check(condition, message, failures):
    print(("ok    " if condition else "FAIL  ") + message)
    if not condition:
        failures.append(message)


def reference_logits(model, window, length, pad):
    """The float64 logits at position len(window) - 1, the window padded to
    `length` with the ids `pad` (other than the sampler's zeros: a causal
    model's logits there do not see them)."""
    ids = list(window) + list(pad[:length - len(window)])
    with torch.no_grad():
        out = model(torch.tensor([ids], dtype=torch.float64))
    return out[0, len(window) - 1].numpy()


def work(args, tmp):
    failures = []
    with open(MODEL) as f:
        spec = json.load(f)
    # One trainer for every check: with EMA weights (decay 0.5 each step), which
    # a state_dict's parameters initialise, and data for the EMA check's steps.
    spec["train"]["ema"] = {"decay": 0.5, "every": 1}
    harness.load_train_data(spec, tmp, 32)
    window = int(spec["input"]["shape"][0])
    torch.manual_seed(0)
    model = ref.TccModel(spec)
    model.eval()
    state = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    model = model.double()
    model.load_state_dict({k: torch.from_numpy(v.astype(np.float64)) for k, v in state.items()})
    harness.write_safetensors(os.path.join(tmp, "weights.safetensors"), state,
                              {"format": "pt"})
    with open(os.path.join(tmp, "vocab.json"), "w") as f:
        json.dump(VOCAB, f)
    model_path = os.path.join(tmp, "model.json")
    with open(model_path, "w") as f:
        json.dump(spec, f)
    common = ["--checkpoint", "weights.safetensors", "--vocab", "vocab.json"]
    pad = np.random.RandomState(1).randint(0, len(VOCAB), size=window).tolist()

    # The PyTorch greedy loop from a short prompt, past the window.
    prompt, length = "dég", 20
    sequence = [VOCAB.index(c) for c in prompt]
    expected_rows, smallest_margin = [], math.inf
    for i in range(length):
        expected_rows.append(reference_logits(model, sequence[-window:], window, pad))
        top2 = np.sort(expected_rows[-1])[-2:]
        smallest_margin = min(smallest_margin, top2[1] - top2[0])
        sequence.append(int(np.argmax(expected_rows[-1])))
    check(smallest_margin > MARGIN, "greedy: every step's top-2 margin %.3g > %g"
          % (smallest_margin, MARGIN), failures)
    expected_text = "".join(VOCAB[t] for t in sequence)
    greedy = ["--prompt", prompt, "--length", str(length), "--temperature", "0"]

    if args.only == "tcc":
        # tcc sample: compiles its own trainer and prints the greedy text.
        out, _ = run([args.tcc, "sample", model_path] + common + greedy, tmp)
        check(out == expected_text + "\n", "tcc sample = PyTorch's greedy loop: %r" % out,
              failures)
        return finish(failures)

    exe = os.path.join(tmp, "train")
    run([args.tcc, "compile", model_path, "--target=cpu", "-o", exe], tmp)

    # (a), (b): the logits of each step, the greedy ids.
    out, _ = run([exe, "sample"] + common + greedy + ["--logits", "greedy.npy"], tmp)
    logits = np.load(os.path.join(tmp, "greedy.npy"))
    check(logits.shape == (length, len(VOCAB)) and logits.dtype == np.float32,
          "--logits is float32 [%d, %d]" % (length, len(VOCAB)), failures)
    worst = max(np.abs(logits[i] - e).max() / max(np.abs(e).max(), FLOOR)
                for i, e in enumerate(expected_rows))
    check(worst <= RTOL, "predict logits = PyTorch float64 at %d positions (max error %.2e "
          "of the largest logit, bound %.0e)" % (length, worst, RTOL), failures)
    check(out == expected_text + "\n", "greedy text = PyTorch's greedy loop: %r" % out,
          failures)

    # (c): draws, thread counts, seeds.
    sampled = ["--prompt", "abc", "--length", "30", "--temperature", "0.8", "--top-k", "6"]
    one, _ = run([exe, "sample"] + common + sampled + ["--seed", "7", "--logits", "s.npy"],
                 tmp, threads=1)
    three, _ = run([exe, "sample"] + common + sampled + ["--seed", "7"], tmp, threads=3)
    other, _ = run([exe, "sample"] + common + sampled + ["--seed", "8"], tmp, threads=1)
    check(one == three, "seed 7: the same text on 1 and 3 threads", failures)
    check(one != other, "seeds 7 and 8 give different text", failures)
    rows = np.load(os.path.join(tmp, "s.npy"))
    drawn = [VOCAB.index(c) for c in one.rstrip("\n")][3:]
    expected_draws, gaps = zip(*(draw(rows[i], 0.8, 6, 7, i) for i in range(30)))
    check(list(expected_draws) == drawn and min(gaps) > 1e-9,
          "temperature 0.8, top-k 6: the documented draws (closest boundary %.1e)"
          % min(gaps), failures)

    # (d): the error lines.
    def one_error(cmd, pattern, what):
        out, err = run(cmd, tmp, expect=1)
        lines = err.splitlines()
        check(out == "" and len(lines) == 1 and lines[0].startswith("error: ") and
              pattern in lines[0], "%s: %s" % (what, err.strip()), failures)

    one_error([exe, "sample"] + common + ["--prompt", "éb#c"],
              "--prompt: character 3, '#', is not in the vocabulary", "unknown character")
    with open(os.path.join(tmp, "short.json"), "w") as f:
        json.dump(VOCAB[:-1], f)
    one_error([exe, "sample", "--checkpoint", "weights.safetensors", "--vocab", "short.json"],
              "lists 16 characters; the model's vocabulary has 17", "vocabulary size")
    # A model of a larger vocabulary: an 18-row head.
    other_state = dict(state)
    other_state["head.weight"] = np.zeros([18, state["head.weight"].shape[1]], np.float32)
    other_state["head.bias"] = np.zeros([18], np.float32)
    harness.write_safetensors(os.path.join(tmp, "other.safetensors"), other_state,
                              {"format": "pt"})
    one_error([exe, "sample", "--checkpoint", "other.safetensors", "--vocab", "vocab.json"],
              "other.safetensors", "a checkpoint of another model")

    # EMA: a checkpoint of ./train --save (3 steps: the EMA weights differ from
    # the parameters) is loaded whole, and the predict step evaluates its EMA
    # weights, as the evaluation does.
    run([exe, "--init", "weights.safetensors", "--steps", "3", "--no-shuffle", "--quiet",
         "--save", "ema.safetensors"], tmp)
    saved, _ = harness.read_safetensors(os.path.join(tmp, "ema.safetensors"))
    moved = max(np.abs(saved["ema." + k] - saved[k]).max() for k in state)
    check(moved > 1e-3, "the EMA weights differ from the parameters (by %.3g)" % moved,
          failures)
    ema_model = ref.TccModel(spec).double()
    ema_model.eval()
    ema_model.load_state_dict({k: torch.from_numpy(saved["ema." + k].astype(np.float64))
                               for k in state})
    run([exe, "sample", "--checkpoint", "ema.safetensors", "--vocab", "vocab.json",
         "--prompt", prompt, "--length", "4", "--temperature", "0", "--logits", "ema.npy"],
        tmp)
    rows = np.load(os.path.join(tmp, "ema.npy"))
    expected = reference_logits(ema_model, [VOCAB.index(c) for c in prompt], window, pad)
    error = np.abs(rows[0] - expected).max() / max(np.abs(expected).max(), FLOOR)
    check(error <= RTOL, "a checkpoint with EMA: the predict step evaluates its EMA weights "
          "(error %.2e)" % error, failures)

    return finish(failures)


def finish(failures):
    if failures:
        print("FAILED: %d check(s)" % len(failures))
        return 1
    print("PASSED")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tcc", default="build/bin/tcc", help="the tcc binary")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--only", choices=["trainer", "tcc"], default="trainer",
                        help="trainer: (a)-(e) with ./train sample (default); tcc: `tcc "
                             "sample` against the greedy loop (each compiles one trainer)")
    args = parser.parse_args()
    args.tcc = os.path.abspath(args.tcc)
    harness.wait_for(args.tcc)
    torch.set_num_threads(1)
    return harness.run_in_temporary_directory("tcc-sample-", args.keep,
                                              lambda tmp: work(args, tmp))


if __name__ == "__main__":
    sys.exit(main())
