#!/usr/bin/env python3
"""Nothing in model.json is silently ignored: every field of the schema
(frontend/model.schema.json) either changes what tcc compiles, or warns, or
is refused.

    schema_audit.py TCC SCHEMA BASE_MODEL TOKEN_MODEL IDS_MODEL

For each field the schema declares, MUTATIONS below sets it to a
non-default value in BASE_MODEL (test/e2e/models/op_zoo.json, every op of
images) or, for an entry marked TOKENS, in TOKEN_MODEL
(test/e2e/models/tiny_vit.json, the token ops) or, marked IDS, in IDS_MODEL
(test/e2e/models/token_classifier.json, a token-id input and its
embedding) and compiles with
--emit=planned-mlir. Each entry expects one outcome: "ir" (the
default: the planned IR, its recipe attributes included, differs from the
base model's), "warns" (a setting not implemented yet says so) or "refused"
(one `error:` line, exit 1); any other outcome fails. A field of the
schema with no entry here fails the audit: a new field is audited when it is
added. `description` is the only field that documents and does nothing.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile


def fields_of(schema):
    """Every property the schema declares, as "<definition>.<property>"
    ("model.<property>" at the top level)."""
    out = set()

    def walk(node, prefix):
        if not isinstance(node, dict):
            return
        for name, sub in node.get("properties", {}).items():
            out.add(prefix + "." + name)
            walk(sub, prefix + "." + name)
        for key in ("items", "anyOf", "oneOf", "allOf", "then", "else"):
            sub = node.get(key)
            for s in (sub if isinstance(sub, list) else [sub]):
                walk(s, prefix)

    walk({"properties": schema["properties"]}, "model")
    for name, definition in schema["$defs"].items():
        walk(definition, name)
    return out


def node(spec, op):
    return next(n for n in spec["graph"] if n["op"] == op)


def named(spec, name):
    return next(n for n in spec["graph"] if n["name"] == name)


def with_block(op="block", graph=None, params=("f",), **node_fields):
    """A mutation that defines block "b" (a linear and a scale by "$f") and
    puts an instance of it (op "block" or "repeat") in place of node "sc"."""
    def apply(spec):
        spec["blocks"] = {"b": {"params": list(params), "graph": graph or [
            {"name": "fc", "op": "linear", "out_features": 10},
            {"name": "s", "op": "scale", "factor": "$f"}]}}
        fields = {"name": "sc", "op": op, "block": "b", "with": {"f": 1.5}}
        if op == "repeat":
            fields["count"] = 2
        fields.update(node_fields)
        spec["graph"] = [fields if n["name"] == "sc" else n for n in spec["graph"]]
    return apply


def setter(path, value):
    """A mutation setting spec[path...] = value; path elements are keys, or
    "op:<op>" / "node:<name>" for a graph node."""
    def apply(spec):
        target = spec
        for key in path[:-1]:
            if key.startswith("op:"):
                target = node(spec, key[3:])
            elif key.startswith("node:"):
                target = named(spec, key[5:])
            else:
                target = target.setdefault(key, {})
        target[path[-1]] = value
    return apply


def schedule(**fields):
    return setter(["train", "schedule"], fields)


def fp16_loss_scale(**fields):
    def apply(spec):
        spec["train"]["precision"] = "fp16-mixed"
        spec["train"]["loss_scale"] = fields
    return apply


def optimizer(**fields):
    def apply(spec):
        spec["train"]["optimizer"].update(fields)
    return apply


def chain(*mutations):
    def apply(spec):
        for m in mutations:
            m(spec)
    return apply


def with_ema(**fields):
    return setter(["train", "ema"], dict({"decay": 0.9}, **fields))


UNIFORM = {"init": {"type": "uniform", "low": -0.2, "high": 0.3}}


def whitening(**fields):
    """c1 as a 1x1 patch-whitening conv (6 = 2 * 3 * 1 * 1 filters) with
    `fields` in its init."""
    return chain(setter(["node:c1", "kernel"], 1), setter(["node:c1", "padding"], 0),
                 setter(["node:c1", "groups"], 1),
                 setter(["node:c1", "weight"],
                        {"init": dict({"type": "patch_whitening"}, **fields),
                         "trainable": False}))

TOKENS = "tokens"  # the entry mutates TOKEN_MODEL


def tokens(mutation, expected="ir"):
    return (mutation, expected, TOKENS)


IDS = "ids"  # the entry mutates IDS_MODEL


def per_token_targets(**loss):
    """IDS_MODEL with a class per token: the mean over the tokens becomes a
    GELU, so the head maps every token."""
    def apply(spec):
        spec["loss"].update(dict({"targets": "sequence"}, **loss))
        pooled = named(spec, "pooled")
        pooled.clear()
        pooled.update({"name": "pooled", "op": "gelu"})
    return apply


def ids(mutation, expected="ir"):
    return (mutation, expected, IDS)


MUTATIONS = {
    "model.format": (setter(["format"], "tcc-model/2"), "refused"),
    "model.name": setter(["name"], "renamed"),
    "model.description": "documentation only",
    "model.input": setter(["input", "shape"], [3, 16, 16]),
    "model.graph": lambda s: s["graph"].insert(
        s["graph"].index(named(s, "r")) + 1, {"name": "r2", "op": "relu"}),
    "model.output": chain(lambda s: s["graph"].pop(), setter(["output"], "sc")),
    "model.loss": setter(["loss"], {"op": "mse_loss"}),
    "model.train": setter(["train", "epochs"], 3),
    "model.data": lambda s: s["data"].pop("normalize"),
    "model.eval": setter(["eval"], {"tta": ["flip"]}),
    "input.shape": setter(["input", "shape"], [3, 16, 16]),
    "input.classes": chain(setter(["input", "classes"], 7),
                           setter(["node:fc2", "out_features"], 7),
                           setter(["node:fc3", "out_features"], 7)),
    "node.name": setter(["node:c1", "name"], "renamed"),
    "node.op": setter(["node:sig", "op"], "tanh"),
    "node.inputs": setter(["node:gap", "inputs"], "g"),
    "op.add.inputs": setter(["node:add2", "inputs"], ["sig", "th"]),
    "op.mul.inputs": setter(["node:m", "inputs"], ["a2", "p1"]),
    "op.concat.inputs": setter(["node:cat", "inputs"], ["a2", "m"]),
    # (the squeeze-and-excitation gate "se" follows the channel count)
    "op.concat.axis": chain(setter(["node:cat", "axis"], 2),
                            setter(["node:se.fc", "out_features"], 6)),
    "op.conv2d.out_channels": chain(setter(["node:c1", "out_channels"], 12),
                                    setter(["node:c2", "out_channels"], 12),
                                    setter(["node:se.fc", "out_features"], 24)),
    "op.conv2d.kernel": setter(["node:c1", "kernel"], 5),
    "op.conv2d.stride": setter(["node:c1", "stride"], 2),
    "op.conv2d.padding": setter(["node:c1", "padding"], 2),
    "op.conv2d.dilation": setter(["node:c1", "dilation"], 2),
    "op.conv2d.groups": setter(["node:c1", "groups"], 1),
    "op.conv2d.bias": setter(["node:c1", "bias"], False),
    "op.conv2d.weight": setter(["node:c1", "weight"], UNIFORM),
    "op.linear.out_features": setter(["node:fc1", "out_features"], 24),
    "op.linear.bias": setter(["node:fc1", "bias"], True),
    "op.linear.weight": setter(["node:fc1", "weight"], {"trainable": False}),
    "op.batch_norm.momentum": setter(["node:bn", "momentum"], 0.3),
    "op.batch_norm.eps": setter(["node:bn", "eps"], 1e-3),
    "op.batch_norm.ghost_batch": setter(["node:bn", "ghost_batch"], 8),
    "op.batch_norm.ghost_grouping": chain(setter(["node:bn", "ghost_batch"], 8),
                                          setter(["node:bn", "ghost_grouping"], "strided")),
    "op.batch_norm.weight": setter(["node:bn", "weight"], False),
    "op.batch_norm.bias": setter(["node:bn", "bias"], False),
    "op.layer_norm.normalized_dims": setter(["node:ln", "normalized_dims"], 1),
    "op.layer_norm.eps": setter(["node:ln", "eps"], 1e-3),
    "op.layer_norm.weight": setter(["node:ln", "weight"], False),
    "op.layer_norm.bias": setter(["node:ln", "bias"], False),
    "op.leaky_relu.negative_slope": setter(["node:a1", "negative_slope"], 0.2),
    "op.elu.alpha": setter(["node:a2", "alpha"], 0.5),
    "op.celu.alpha": setter(["node:cel", "alpha"], 0.7),
    "op.gelu.approximate": setter(["node:g", "approximate"], "none"),
    "op.max_pool2d.kernel": setter(["node:mp", "kernel"], 2),
    "op.max_pool2d.stride": setter(["node:mp", "stride"], 1),
    "op.max_pool2d.padding": setter(["node:mp", "padding"], 0),
    "op.avg_pool2d.kernel": setter(["node:ap", "kernel"], 5),
    "op.avg_pool2d.stride": setter(["node:ap", "stride"], 2),
    "op.avg_pool2d.padding": setter(["node:ap", "padding"], 0),
    "op.avg_pool2d.count_include_pad": setter(["node:ap", "count_include_pad"], True),
    "op.scale.factor": setter(["node:sc", "factor"], 2.5),
    "op.reshape.shape": setter(["node:rs", "shape"], [-1, 12]),
    "op.transpose.perm": setter(["node:tr", "perm"], [0, 2, 1, 3]),
    "op.dropout.p": setter(["node:drop", "p"], 0.3),
    "op.slice.axis": tokens(setter(["node:v", "axis"], 1)),
    "op.slice.start": tokens(setter(["node:v", "start"], -7)),
    "op.slice.end": tokens(setter(["node:v", "end"], 23)),
    "op.slice.step": tokens(setter(["node:v", "step"], 2), "refused"),
    "op.select.axis": tokens(chain(setter(["node:cls", "axis"], 2),
                                   setter(["node:pooled", "axis"], 2))),
    "op.select.index": tokens(setter(["node:cls", "index"], 1)),
    "op.parameter.shape": tokens(chain(setter(["node:class_token", "shape"], [1, 2, 8]),
                                       setter(["node:encoder.pos_embedding", "shape"],
                                              [1, 6, 8]))),
    "op.parameter.init": tokens(setter(["node:class_token", "init"], 0.5)),
    "op.parameter.trainable": tokens(setter(["node:class_token", "trainable"], False)),
    "op.parameter.train_epochs": tokens(setter(["node:class_token", "train_epochs"], 2)),
    "op.matmul.inputs": tokens(setter(["node:scores", "inputs"], ["k", "q"])),
    "op.matmul.transpose_a": tokens(setter(["node:mixed", "transpose_a"], True)),
    "op.matmul.transpose_b": tokens(chain(setter(["node:scores", "transpose_a"], True),
                                          setter(["node:scores", "transpose_b"], False),
                                          setter(["node:mixed", "inputs"], ["v", "probs"]))),
    "op.mean.axis": tokens(chain(setter(["node:pooled", "axis"], 2),
                                 setter(["node:cls", "axis"], 2))),
    "op.mean.keepdim": tokens(setter(["node:gate", "keepdim"], False)),
    "input.type": ids(setter(["input", "type"], "float"), "refused"),
    "input.vocab": ids(setter(["input", "vocab"], 15)),
    "op.embedding.num_embeddings": ids(setter(["node:tok_emb", "num_embeddings"], 20)),
    "op.embedding.embedding_dim": ids(chain(setter(["node:tok_emb", "embedding_dim"], 8),
                                            setter(["node:pos_emb", "shape"], [1, 12, 8]),
                                            setter(["node:fc2", "out_features"], 8))),
    "op.embedding.padding_idx": ids(setter(["node:tok_emb", "padding_idx"], 3)),
    "op.embedding.weight": ids(setter(["node:tok_emb", "weight"],
                                      {"init": {"type": "normal", "std": 0.02}})),
    "op.softmax.axis": setter(["node:sm", "axis"], 1),
    "op.attention.heads": setter(["node:mha", "heads"], 3),
    "op.attention.causal": setter(["node:mha", "causal"], True),
    "op.attention.dropout": setter(["node:mha", "dropout"], 0.1),
    "op.attention.bias": setter(["node:mha", "bias"], False),
    "op.attention.key_padding_mask": (setter(["node:mha", "key_padding_mask"], "pad"), "refused"),
    "op.scaled_dot_product_attention.heads": setter(["node:att", "heads"], 3),
    "op.scaled_dot_product_attention.causal": setter(["node:att", "causal"], False),
    "op.scaled_dot_product_attention.dropout": setter(["node:att", "dropout"], 0.1),
    "op.scaled_dot_product_attention.scale": setter(["node:att", "scale"], 0.3),
    # lsm is 2-d: axis 1 is its only valid axis, and the batch axis is refused
    "op.log_softmax.axis": (setter(["node:lsm", "axis"], 0), "refused"),
    "param.init": setter(["node:fc3", "bias"], {"init": {"type": "constant", "value": 0.5}}),
    "param.trainable": setter(["node:fc3", "bias"], {"trainable": False}),
    "param.train_epochs": setter(["node:fc3", "bias"], {"train_epochs": 2}),
    "init.type": setter(["node:fc3", "bias"], {"init": {"type": "constant", "value": 0.1}}),
    "init.value": setter(["node:fc3", "bias"], {"init": {"type": "constant", "value": 2}}),
    "init.low": setter(["node:bn", "weight"], {"init": {"type": "uniform", "low": 0.1,
                                                        "high": 1.5}}),
    "init.high": setter(["node:bn", "weight"], {"init": {"type": "uniform", "low": 0.5,
                                                         "high": 2.5}}),
    "init.mean": setter(["node:bn", "bias"], {"init": {"type": "normal", "mean": 1,
                                                       "std": 0.1}}),
    "init.eps": whitening(eps=0.01),
    "init.images": whitening(images=100),
    "init.unbiased": whitening(unbiased=True),
    "init.std": setter(["node:bn", "bias"], {"init": {"type": "normal", "mean": 0,
                                                      "std": 0.5}}),
    "loss.op": setter(["loss", "op"], "mse_loss"),
    "loss.label_smoothing": setter(["loss", "label_smoothing"], 0.1),
    "loss.reduction": setter(["loss", "reduction"], "sum"),
    "loss.targets": ids(per_token_targets()),
    "loss.ignore_index": ids(per_token_targets(ignore_index=0)),
    "train.batch_size": setter(["train", "batch_size"], 8),
    "train.epochs": setter(["train", "epochs"], 2),
    "train.seed": setter(["train", "seed"], 5),
    "train.drop_last": setter(["train", "drop_last"], False),
    "train.optimizer": setter(["train", "optimizer"], {"type": "adamw", "lr": 1e-3}),
    "train.schedule": schedule(type="constant"),
    "train.precision": setter(["train", "precision"], "bf16-mixed"),
    "train.ema": with_ema(),
    "train.loss_scale": fp16_loss_scale(init_scale=1024),
    "train.grad_clip_norm": setter(["train", "grad_clip_norm"], 1.0),
    "train.accumulate": setter(["train", "accumulate"], 2),
    # Under op_zoo's planned 0.44 MiB, above the 0.38 MiB recompute reaches.
    "train.memory_budget": setter(["train", "memory_budget"], 420000),
    "train.deterministic": setter(["train", "deterministic"], True),
    "optimizer.type": setter(["train", "optimizer"], {"type": "lamb", "lr": 0.02}),
    "optimizer.lr": optimizer(lr=0.05),
    "optimizer.weight_decay": optimizer(weight_decay=0.01),
    "optimizer.momentum": optimizer(momentum=0.8),
    "optimizer.nesterov": optimizer(nesterov=False),
    "optimizer.dampening": optimizer(nesterov=False, dampening=0.1),
    "optimizer.momentum_of": optimizer(momentum_of="update"),
    "optimizer.betas": lambda s: s["train"].__setitem__(
        "optimizer", {"type": "adamw", "lr": 1e-3, "betas": [0.8, 0.9]}),
    "optimizer.eps": lambda s: s["train"].__setitem__(
        "optimizer", {"type": "adamw", "lr": 1e-3, "eps": 1e-6}),
    "optimizer.groups": optimizer(groups=[{"match": "*.bias", "lr_scale": 2}]),
    "optimizer.groups.match": optimizer(groups=[{"match": "fc*", "lr_scale": 2}]),
    "optimizer.groups.lr_scale": optimizer(groups=[{"match": "*", "lr_scale": 3}]),
    "optimizer.groups.weight_decay_scale": optimizer(
        groups=[{"match": "*", "weight_decay_scale": 0}]),
    "optimizer.lookahead": optimizer(lookahead={"every": 5, "alpha": 0.5}),
    "optimizer.lookahead.every": optimizer(lookahead={"every": 3}),
    "optimizer.lookahead.alpha": optimizer(lookahead={"alpha": 0.7}),
    "optimizer.lookahead.alpha_schedule": optimizer(lookahead={"alpha_schedule": "cubic"}),
    "optimizer.lookahead.buffers": optimizer(lookahead={"buffers": True}),
    "optimizer.lookahead.copy_back": optimizer(lookahead={"copy_back": True}),
    # blocks: expanded into nodes (a block's own fields are read after the
    # "$param" substitution, as any node's)
    "model.blocks": with_block(),
    # (a block of the base's own "sc" node alone compiles to the base's IR)
    "block.graph": with_block(graph=[{"name": "s", "op": "scale", "factor": "$f"},
                                     {"name": "r", "op": "relu"}]),
    "block.params": (with_block(params=("f", "g")), "refused"),
    "op.block.block": (with_block(block="nope"), "refused"),
    "op.block.with": with_block(**{"with": {"f": 3.0}}),
    "op.repeat.block": with_block(op="repeat"),
    "op.repeat.count": with_block(op="repeat", count=3),
    "op.repeat.from": with_block(op="repeat", **{"from": 4}),
    "op.repeat.with": with_block(op="repeat", **{"with": {"f": 0.5}}),
    "schedule.type": schedule(type="linear_warmup", warmup=2),
    "schedule.unit": schedule(type="cosine", unit="epoch", warmup=1),
    "schedule.count_from": schedule(type="linear_warmup", warmup=2, count_from=1),
    "schedule.warmup": schedule(type="cosine", unit="step", warmup=3),
    "schedule.min_factor": schedule(type="cosine", unit="step", warmup=1, min_factor=0.1),
    "schedule.step_size": schedule(type="step", step_size=2),
    "schedule.gamma": schedule(type="step", step_size=1, gamma=0.5),
    "schedule.pct_start": schedule(type="one_cycle", pct_start=0.4, cycle_momentum=False),
    "schedule.div_factor": schedule(type="one_cycle", div_factor=10, cycle_momentum=False),
    "schedule.final_div_factor": schedule(type="one_cycle", final_div_factor=100,
                                           cycle_momentum=False),
    "schedule.anneal": schedule(type="one_cycle", anneal="linear", cycle_momentum=False),
    # false (the schema's only value) records the choice; true is refused
    "schedule.cycle_momentum": (schedule(type="one_cycle", cycle_momentum=True), "refused"),
    "schedule.points": schedule(type="piecewise_linear", points=[[0, 1], [1, 0]]),
    "lossScale.init_scale": fp16_loss_scale(init_scale=256),
    "lossScale.growth_factor": fp16_loss_scale(growth_factor=4),
    "lossScale.backoff_factor": fp16_loss_scale(backoff_factor=0.25),
    "lossScale.growth_interval": fp16_loss_scale(growth_interval=100),
    "ema.decay": with_ema(decay=0.5),
    "ema.every": with_ema(every=3),
    "ema.per_epoch": with_ema(every=3, per_epoch=True),
    # the npy base has a [3, 12, 12] input: CIFAR-10's files are [3, 32, 32]
    "data.format": (setter(["data", "format"], "cifar10"), "refused"),
    "data.path": setter(["data", "path"], "elsewhere"),
    "data.augment": setter(["data", "augment"], {"flip": True}),
    "data.augment.random_crop_padding": setter(["data", "augment"], {"random_crop_padding": 2}),
    "data.augment.flip": setter(["data", "augment"], {"flip": True}),
    "data.augment.translate": setter(["data", "augment"], {"translate": 2}),
    "data.augment.cutout": setter(["data", "augment"], {"cutout": 4}),
    "data.augment.padding_mode": setter(["data", "augment"], {"translate": 2,
                                                             "padding_mode": "reflect"}),
    "data.augment.draws": setter(["data", "augment"], {"random_crop_padding": 2, "flip": True,
                                                      "draws": "balanced"}),
    "data.normalize": lambda s: s["data"].pop("normalize"),
    "data.normalize.mean": setter(["data", "normalize", "mean"], [0.4, 0.4, 0.4]),
    "data.normalize.std": setter(["data", "normalize", "std"], [0.5, 0.5, 0.5]),
    "eval.tta": setter(["eval", "tta"], ["flip"]),
    "eval.translate": setter(["eval", "translate"], 3),
    "eval.batch_size": setter(["eval", "batch_size"], 32),
}


def compile_model(tcc, spec, tmp, name):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(spec, f)
    p = subprocess.run([tcc, "compile", path, "--target=cpu", "--emit=planned-mlir"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def main():
    tcc, schema_path, base_path, tokens_path, ids_path = sys.argv[1:6]
    with open(schema_path) as f:
        schema = json.load(f)
    with open(base_path) as f:
        base = json.load(f)
    with open(tokens_path) as f:
        token_base = json.load(f)
    with open(ids_path) as f:
        ids_base = json.load(f)
    base["graph"].insert(base["graph"].index(named(base, "r")) + 1,
                         {"name": "drop", "op": "dropout"})
    problems = []
    fields = fields_of(schema)
    for extra in sorted(set(MUTATIONS) - fields):
        problems.append("%s: audited here but not in the schema" % extra)
    with tempfile.TemporaryDirectory(prefix="tcc-audit-") as tmp:
        base["data"]["path"] = tmp
        token_base["data"]["path"] = tmp
        ids_base["data"]["path"] = tmp
        bases = {}
        for key, model in (("", base), (TOKENS, token_base), (IDS, ids_base)):
            status, ir, err = compile_model(tcc, model, tmp, "base")
            if status != 0 or "warning:" in err:
                print("FAIL: the base model %s does not compile cleanly:\n%s"
                      % (model["name"], err))
                return 1
            bases[key] = (model, ir)
        for field in sorted(fields):
            mutation = MUTATIONS.get(field)
            if mutation is None:
                problems.append("%s: in the schema, not audited (add it to MUTATIONS)"
                                % field)
                continue
            if isinstance(mutation, str):
                print("%-40s %s" % (field, mutation))
                continue
            mutation, expected, which = (mutation + ("",))[:3] if isinstance(
                mutation, tuple) else (mutation, "ir", "")
            model, base_ir = bases[which]
            spec = copy.deepcopy(model)
            mutation(spec)
            status, ir, err = compile_model(tcc, spec, tmp, "mutated")
            errors = [l for l in err.splitlines() if l.startswith("error:")]
            if status == 1 and len(errors) == 1:
                verdict, text = "refused", errors[0]
            elif status != 0:
                verdict, text = "crashed", "exit %d: %s" % (status, err.strip()[:300])
            elif "warning:" in err:
                verdict, text = "warns", err.strip().splitlines()[0]
            elif ir != base_ir:
                verdict, text = "ir", "changes the planned IR"
            else:
                verdict, text = "ignored", "nothing compiled changed"
            print("%-40s %-8s %s" % (field, verdict, text[:90]))
            if verdict != expected:
                problems.append("%s: expected %s, got %s: %s" % (field, expected, verdict,
                                                                 text))
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems))
        return 1
    print("PASS: all %d fields of the schema take effect, warn or are refused"
          % len(fields))
    return 0


if __name__ == "__main__":
    sys.exit(main())
