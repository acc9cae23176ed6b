#!/usr/bin/python3
"""An example trained by tcc next to a transcription of the original code it
is named after, in float64 (issue 12's "done when").

    compare_with_originals.py airbench94|resnet9 --tcc PATH [--steps N]

- airbench94: examples/airbench94.json against test/e2e/originals/airbench94.py
  (KellerJordan/cifar10-airbench legacy/airbench94.py);
- resnet9: examples/resnet9.json against test/e2e/originals/new_dawn.py
  (davidcpage/cifar10-fast new_dawn.py with core.py, torch_backend.py and
  dawn_utils.py).

The transcriptions keep the originals' code (their headers list the marked
changes: CPU, a dtype, data and widths from here). Both sides run the same
reduced problem on CIFAR-shaped synthetic images (smooth random fields plus
noise: the patch covariance then has separated eigenvalues, so the whitening
filters are well defined, and max-pool windows rarely hold near-ties). Where
a size changes a hyperparameter of the original, the model file is set as
the original computes it:

- airbench94: widths / 16, batch 4, 8 images (2 steps per epoch), the whole
  run of ceil(2 * 9.9) = 20 steps: the whitening bias freezes after epoch 3
  (step 6), lookahead updates at steps 5, 10, 15, 20 and the copy-back at
  step 20. The schedule's points become [[0, 0.2], [int(0.23 * 20), 1],
  [20, 0.07]] (the example's are for CIFAR-10's 476 steps) and weight_decay
  is scaled by 4/1024 (airbench's weight decay is per 1024 examples:
  wd = 0.0153 * batch_size / kilostep_scale).
- resnet9: widths / 16, batch 16 in 16 strided ghost batches (the original's
  16 splits), CIFAR-10's 97 steps per epoch (1552 images), 6 steps: EMA
  updates after steps 1 and 6. lr = 1/16 and weight_decay = 5e-4 * 16
  (new_dawn: lr_schedule / batch_size, weight decay 5e-4 * batch_size).
  Fewer steps per epoch would cross an epoch within the run, but only at
  learning rates where training amplifies float32 round-off past the
  tolerance within 4 steps (the original's own float32 run strays from its
  float64 run by more than 1e-4); the EMA's restart at each epoch is checked
  by e2e.ema_per_epoch.

Steps:
1. The transcription builds its network (torch.manual_seed(--seed)) and its
   whitening filters from the images, in float64. tcc's own whitening (a
   trainer run without --init) must equal those filters.
2. The transcription's initial state, rounded to float32, is the trainer's
   --init and the transcription's own start; the trainer runs --steps with
   --no-shuffle --no-augment, the transcription the same batches.
3. Every tensor of tcc's checkpoint is compared with the transcription's:
   parameters, batch-norm buffers, momentum buffers, lookahead slow copies
   (airbench94), EMA copies (resnet9): max|tcc - original| <= 1e-4 *
   max(max|original|, 1e-3) per tensor, compare_with_torch.py's bound.

Where the originals' state has another form, the comparison maps it:
new_dawn's GhostBatchNorm keeps one running mean and variance per split
([16 * C], updated by the same linear rule), and tcc one, the mean over the
splits, which is what the original's collation (GhostBatchNorm.train(False))
computes: tcc's [C] buffer is compared with that mean, for the model and its
EMA. The functional batch_norm call leaves new_dawn's num_batches_tracked at
0; tcc's counts the steps (compare_tensors checks it). airbench's lookahead
clones num_batches_tracked and never updates it: not compared.

The data seed is the first from --data-seed for which the comparison means
something: every max-pool window has a margin above float32 round-off in a
float32 and a float64 run of the transcription
(compare_with_torch.max_margin_rows), and that float32 run stays within a
quarter of the tolerance of the float64 one (`conditioning`).

Exit status: 0 all match; 1 a mismatch; 2 a run failed; 77 skipped (no torch).
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import compare_with_torch as cwt  # noqa: E402  (exits 77 without torch)
from compare_with_torch import np, torch, ref  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "originals"))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
SKIP = 77


def smooth_images(rng, n):
    """uint8 [n, 3, 32, 32]: white noise blurred by a 3-tap binomial filter
    along each axis plus some of the noise itself, channels mixed, a random
    brightness per image, scaled to 0..255. Neighbouring pixels correlate, so
    the patch covariance has distinct eigenvalues; the added noise keeps the
    max-pool windows free of near-ties."""
    noise = rng.standard_normal((n, 3, 34, 34))
    k = np.array([1, 2, 1], dtype=np.float64) / 4
    x = noise
    for axis in (2, 3):
        x = np.apply_along_axis(lambda v: np.convolve(v, k, mode="valid"), axis, x)
    x = x + noise[:, :, 1:33, 1:33]
    mix = np.array([[1.0, 0.5, 0.2], [0.4, 1.0, 0.3], [0.1, 0.6, 1.0]])
    x = np.einsum("dc,nchw->ndhw", mix, x) + rng.standard_normal((n, 1, 1, 1)) * 0.3
    x = (x - x.min()) / (x.max() - x.min())
    return np.clip(np.round(x * 255), 0, 255).astype(np.uint8)


# --------------------------------------------------------------------------
# The two examples
# --------------------------------------------------------------------------

class Example:
    """What the run needs of an example: its transcription (`orig`), sizes,
    and the map from the original's tensor names and forms to tcc's."""

    @staticmethod
    def model_state(run):
        return run.model.state_dict()

    def to_tcc(self, name, value):
        return value


class Airbench94(Example):
    example = "airbench94.json"
    batch, steps_per_epoch, steps, width_div = 4, 2, 20, 16

    def __init__(self):
        import airbench94 as orig
        self.orig = orig

    def total_steps(self):
        return math.ceil(self.steps_per_epoch * 9.9)

    def adapt_spec(self, spec):
        total = self.total_steps()
        spec["train"]["schedule"]["points"] = [[0, 0.2], [int(0.23 * total), 1],
                                               [total, 0.07]]
        spec["train"]["optimizer"]["weight_decay"] *= self.batch / 1024

    def make_run(self, x, y, dtype):
        widths = self.orig.hyp['net']['widths']
        for k in widths:
            widths[k] = {'block1': 64, 'block2': 256, 'block3': 256}[k] // self.width_div
        self.orig.hyp['opt']['batch_size'] = self.batch
        return self.orig.Run(x, y, dtype, self.total_steps())

    def whitening(self, run):
        return run.model[0].weight.detach().clone(), run.eigenvalues

    def final_state(self, run):
        return run.state()

    @staticmethod
    def tcc_name(name):
        """The original's name -> tcc's (None: not compared)."""
        prefix = ""
        for p in ("momentum_buffer.", "lookahead."):
            if name.startswith(p):
                prefix, name = p, name[len(p):]
        if prefix == "lookahead." and name.endswith("num_batches_tracked"):
            return None
        head, rest = name.split(".", 1)
        blocks = {"0": "whiten", "2": "block1", "3": "block2", "4": "block3", "7": "head"}
        base = blocks[head] + "." + rest
        if prefix == "momentum_buffer.":
            return "optimizer.%s.momentum_buffer" % base
        return prefix + base


class ResNet9(Example):
    example = "resnet9.json"
    batch, steps_per_epoch, steps, splits, width_div = 16, 97, 6, 16, 16

    def __init__(self):
        import new_dawn as orig
        self.orig = orig

    def total_steps(self):
        return 10 * self.steps_per_epoch

    def adapt_spec(self, spec):
        for node in spec["graph"]:
            if node["op"] == "batch_norm":
                node["ghost_batch"] = self.batch // self.splits
        opt = spec["train"]["optimizer"]
        opt["lr"] = 1.0 / self.batch
        opt["weight_decay"] = 5e-4 * self.batch

    def make_run(self, x, y, dtype):
        channels = {k: v // self.width_div for k, v in
                    {'prep': 64, 'layer1': 128, 'layer2': 256, 'layer3': 512}.items()}
        return self.orig.Run(x, y, dtype, channels, batch_size=self.batch)

    def whitening(self, run):
        return run.model.prep_whiten.weight.detach().clone(), run.eigenvalues

    def final_state(self, run):
        return run.named_state()

    @staticmethod
    def tcc_name(name):
        prefix = ""
        for p in ("v.", "ema."):
            if name.startswith(p):
                prefix, name = p, name[len(p):]
        if name.endswith("num_batches_tracked"):
            return None  # 0 in the original (functional batch_norm)
        module, field = name.rsplit(".", 1)
        parts = module.split("_")
        rename = {"norm": "bn", "residual": None}
        base = ".".join(rename.get(p, p) for p in parts if rename.get(p, p)) + "." + field
        if prefix == "v.":
            return "optimizer.%s.momentum_buffer" % base
        return prefix + base

    def to_tcc(self, name, value):
        if name.endswith(("running_mean", "running_var")):
            return value.view(self.splits, -1).mean(dim=0)
        return value


MODELS = {"airbench94": Airbench94, "resnet9": ResNet9}


# --------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------

def tcc_state_of(model, state):
    out = {}
    for name, value in state.items():
        t = model.tcc_name(name)
        if t is not None:
            v = model.to_tcc(name, value)
            out[t] = (v.float() if v.is_floating_point() else v).numpy()
    return out


def constant_copies(got, final, init):
    """The originals average every float of the state_dict, frozen tensors
    too (batch-norm weights, whitening filters), whose copies stay equal to
    them; tcc keeps no copy of a frozen tensor. Such a copy of the original
    is removed from `final`, after checking that it equals its tensor's
    start bit for bit (one row for all)."""
    names = [n for n in final if n.startswith(("lookahead.", "ema.")) and n not in got]
    moved = [n for n in names if not np.array_equal(final[n], init.get(n.split(".", 1)[1]))]
    for n in names:
        del final[n]
    return [cwt.Row("copies of frozen tensors (not in tcc)", "[%d]" % len(names),
                    ok=not moved, note="changed in the original: " + ", ".join(moved))]


def conditioning(state64, state32):
    """The original's own float32 run against its float64 run: training
    amplifies round-off, and once a float32 run of the original itself
    strays from float64 by a good part of the tolerance, a float32 tcc run
    cannot be told from a wrong one. Passes while the worst tensor's
    difference is below a quarter of its bound."""
    worst, name = 0.0, ""
    for k, a in state64.items():
        if a.is_floating_point():
            err = float((a - state32[k].double()).abs().max())
            ratio = err / (cwt.RTOL * max(float(a.abs().max()), cwt.FLOOR))
            if ratio > worst:
                worst, name = ratio, k
    ok = worst <= 0.25
    return cwt.Row("float32 original vs float64 original", "", None, worst, 1.0, "", ok,
                   "%s at %.2f of its bound: the run is ill-conditioned; take fewer "
                   "steps" % (name, worst))


def probe_max_windows(run, dtype, state, steps):
    """The inputs of every max pool of `steps` steps of the transcription
    in `dtype` from `state` (compare_with_torch.max_margin_rows's records)."""
    records = []
    # new_dawn's layers share one MaxPool2d module: its calls of one forward
    # pass are told apart by their order (graph paths in call order)
    graph = getattr(run.model, "graph", {})
    paths = {}
    for path, (node, _) in graph.items():
        paths.setdefault(id(node), []).append(path)
    calls = {}

    def hook(name):
        def f(module, inputs):
            uses = paths.get(id(module), [name])
            i = calls[id(module)] = calls.get(id(module), -1) + 1
            name_now = uses[i % len(uses)]
            k, s, p = (module.kernel_size, module.stride, module.padding)
            pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)
            records.append(ref.MaxWindow(name_now, inputs[0].detach().clone(), pair(k),
                                         pair(s), pair(p)))
        return f

    handles = [m.register_forward_pre_hook(hook(n or "pool"))
               for n, m in run.model.named_modules() if isinstance(m, torch.nn.MaxPool2d)]
    run.set_state({k: v.to(dtype) if v.is_floating_point() else v for k, v in state.items()})
    run.train(steps)
    for h in handles:
        h.remove()
    return records


def trainer_command(exe, steps, epochs, save, init=None):
    cmd = [exe, "--no-shuffle", "--no-augment", "--steps", str(steps), "--epochs",
           repr(epochs), "--save", save, "--metrics", save + ".jsonl", "--quiet"]
    return cmd + (["--init", init] if init else [])


def compare(args, model, tmp):
    with open(os.path.join(EXAMPLES, model.example)) as f:
        spec = json.load(f)
    cwt.reduce_width(spec, model.width_div)
    spec["train"]["batch_size"] = model.batch
    spec["train"]["precision"] = "fp32"
    spec.pop("eval", None)
    model.adapt_spec(spec)
    n_train = model.batch * model.steps_per_epoch
    epochs = float(spec["train"]["epochs"])
    steps = args.steps or model.steps
    if ref.total_steps_for(epochs, model.steps_per_epoch) != model.total_steps():
        raise cwt.RunFailed("tcc's run would span %d steps, the original's %d"
                            % (ref.total_steps_for(epochs, model.steps_per_epoch),
                               model.total_steps()))

    # data: the first seed whose max windows have a margin (module docstring)
    for seed in range(args.data_seed, args.data_seed + args.data_tries):
        rng = np.random.RandomState(seed)
        x = smooth_images(rng, n_train)
        y = rng.randint(0, 10, size=n_train).astype(np.int64)
        xt, yt = smooth_images(rng, model.batch), rng.randint(0, 10, size=model.batch)
        xs, ys = torch.from_numpy(x), torch.from_numpy(y)
        torch.manual_seed(args.seed)
        run64 = model.make_run(xs, ys, torch.float64)
        white64, eigenvalues = model.whitening(run64)
        # the start of both: the transcription's initial state in float32
        start = {k: (v.float().double() if v.is_floating_point() else v.clone())
                 for k, v in model.model_state(run64).items()}
        probe64 = probe_max_windows(run64, torch.float64, start, steps)
        run32 = model.make_run(xs, ys, torch.float32)
        probe32 = probe_max_windows(run32, torch.float32, start, steps)
        margin_rows = cwt.max_margin_rows(probe32, probe64, 1)
        margin_rows.append(conditioning(model.final_state(run64), model.final_state(run32)))
        if all(r.ok for r in margin_rows):
            break
        print("data seed %d: near-ties in %s; trying the next seed"
              % (seed, ", ".join(r.name for r in margin_rows if not r.ok)))
    final = tcc_state_of(model, model.final_state(run64))
    init = tcc_state_of(model, start)

    cwt.write_npy(spec, tmp, x, y, xt, yt)
    model_path = os.path.join(tmp, "model.json")
    with open(model_path, "w") as f:
        json.dump(spec, f, indent=1)
    cwt.wait_for(args.tcc)
    exe = os.path.join(tmp, "train")
    cwt.run([args.tcc, "compile", model_path, "--target=cpu", "-o", exe], tmp, "tcc compile")

    # 1. tcc's own whitening filters (frozen: unchanged by its one step)
    cwt.run(trainer_command(exe, 1, epochs, "own.safetensors"), tmp, "the tcc trainer")
    own, _ = cwt.read_safetensors(os.path.join(tmp, "own.safetensors"))
    name = [k for k in init if k.endswith("whiten.weight")][0]
    rows = cwt.compare_tensors({name: own[name]}, {name: white64.float().numpy()}, {}, 0)
    rows[0].name = "tcc's whitening " + name
    lam = eigenvalues.flatten().double()
    gap = float(((lam[:-1] - lam[1:]) / lam[0]).abs().min())

    # 2. the run from the transcription's start
    cwt.write_safetensors(os.path.join(tmp, "init.safetensors"),
                          {k: v for k, v in init.items() if not k.startswith(
                              ("optimizer.", "lookahead.", "ema."))},
                          {"format": "pt", "producer": "compare_with_originals.py"})
    cwt.run(trainer_command(exe, steps, epochs, "out.safetensors", "init.safetensors"), tmp,
            "the tcc trainer")
    got, _ = cwt.read_safetensors(os.path.join(tmp, "out.safetensors"))
    rows += constant_copies(got, final, init)
    rows += cwt.compare_tensors(got, final, init, steps)
    rows += margin_rows

    print("%s: %d steps of batch %d (%d per epoch, the run %d) against %s, widths / %d, "
          "data seed %d" % (args.model, steps, model.batch, model.steps_per_epoch,
                            model.total_steps(), model.orig.__name__ + ".py",
                            model.width_div, seed))
    print("whitening eigenvalues: smallest relative gap %.2e" % gap)
    print("tolerance per tensor: max|tcc - original| <= %g * max(max|original|, %g)"
          % (cwt.RTOL, cwt.FLOOR))
    width = max(len(r.name) for r in rows)
    for r in rows:
        print("%-*s  %-16s %10s %10s %8s %9s  %s" % (
            width, r.name, r.shape[:16], cwt._fmt(r.scale), cwt._fmt(r.err),
            cwt._fmt(r.bound, "%.1e"), r.moved, "ok" if r.ok else "MISMATCH " + r.note))
    bad = [r for r in rows if not r.ok]
    if bad:
        print("FAIL: %d of %d mismatch: %s" % (len(bad), len(rows),
                                              ", ".join(r.name for r in bad)))
        return 1
    worst = max(rows, key=lambda r: r.ratio())
    print("PASS: all %d tensors match the original (worst: %s at %.2f of its bound)"
          % (len(rows), worst.name, worst.ratio()))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("--tcc", default="/work/main/build/bin/tcc")
    ap.add_argument("--steps", type=int, help="optimizer steps (default: the model's)")
    ap.add_argument("--seed", type=int, default=0, help="torch.manual_seed of the init")
    ap.add_argument("--data-seed", type=int, default=0)
    ap.add_argument("--data-tries", type=int, default=16)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = MODELS[args.model]()
    return cwt.run_in_temporary_directory("tcc-originals-", args.keep,
                                           lambda tmp: compare(args, model, tmp))


if __name__ == "__main__":
    sys.exit(main())
