"""The recipe, the model.json text and the weights file, written atomically."""

import json
import os
import re
import struct
import tempfile

import torch

from tcc_import import ImportFailure

# The recipe of a model imported without --recipe (docs/import.md,
# "The recipe"): SGD with Nesterov momentum and a cosine schedule, a
# common baseline for image classifiers, and the data format tcc reads
# for the input's shape.
DEFAULT_RECIPE = {
    "loss": {"op": "cross_entropy"},
    "train": {
        "batch_size": 128,
        "epochs": 10,
        "optimizer": {"type": "sgd", "lr": 0.05, "momentum": 0.9, "nesterov": True,
                      "weight_decay": 0.0005},
        "schedule": {"type": "cosine"},
    },
}
DEFAULT_DATA = {
    (3, 32, 32): {"format": "cifar10",
                  "augment": {"random_crop_padding": 4, "flip": True},
                  "normalize": {"mean": [0.4914, 0.4822, 0.4465],
                                "std": [0.247, 0.2435, 0.2616]}},
    (1, 28, 28): {"format": "idx", "normalize": {"mean": [0.286], "std": [0.353]}},
}
RECIPE_KEYS = ("name", "description", "loss", "train", "data", "eval")


def read_recipe(path):
    """The --recipe fragment: recipe sections of model.json, each replacing
    the default section whole."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ImportFailure("%s: cannot read the recipe: %s" % (path, e.strerror))
    try:
        recipe = json.loads(text)
    except ValueError as e:
        raise ImportFailure("%s: malformed JSON: %s" % (path, e))
    if not isinstance(recipe, dict):
        raise ImportFailure("%s: the recipe must be a JSON object of model.json sections"
                            % path)
    for key in recipe:
        if key not in RECIPE_KEYS:
            raise ImportFailure("%s: '%s' is not a recipe section; a recipe holds %s (the "
                                "graph, input and format come from the module)"
                                % (path, key, ", ".join(RECIPE_KEYS)))
    return recipe


def model_json(name, description, input_shape, logits, nodes, recipe, vocab=None):
    """The model.json text: fixed key order, one graph node per line.
    `logits` is the output's per-sample shape, [classes] or [T, classes]
    (sequence targets); `vocab` makes the input token ids."""
    recipe = dict(recipe)
    data = recipe.pop("data", DEFAULT_DATA.get(tuple(input_shape),
                                               {"format": "npy", "path": "data"}))
    source = {"shape": list(input_shape)}
    if vocab:
        source.update(type="tokens", vocab=vocab)
    source["classes"] = logits[-1]
    head = {"format": "tcc-model/1", "name": recipe.pop("name", name),
            "description": recipe.pop("description", description), "input": source}
    sections = dict(DEFAULT_RECIPE, **recipe)
    sections["loss"] = loss_section(sections["loss"], len(logits) == 2)
    lines = ["{"]
    for k, v in head.items():
        lines.append("  %s: %s," % (json.dumps(k), json.dumps(v)))
    lines.append('  "graph": [')
    lines.append(",\n".join("    " + json.dumps(n) for n in nodes))
    lines.append("  ],")
    tail = [(k, sections[k]) for k in ("loss", "train", "eval") if k in sections]
    tail.insert(2, ("data", data))
    for i, (k, v) in enumerate(tail):
        lines.append("  %s: %s%s" % (json.dumps(k), _section(v), "," if i + 1 < len(tail) else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def loss_section(loss, sequence):
    """The loss for the output: per-position logits [N, T, classes] train
    with a class per position ("targets": "sequence" and, written out,
    PyTorch's cross_entropy default ignore_index -100), added to the loss
    (the default or --recipe's) where it does not say; a recipe that says
    otherwise is refused here rather than when compiled."""
    if not isinstance(loss, dict):
        return loss  # the frontend says what is wrong with it
    targets = loss.get("targets", "sample")
    if sequence and "targets" not in loss:
        if loss.get("op") != "cross_entropy":
            raise ImportFailure("the recipe's loss op %s: the output has logits per position "
                                "[N, T, classes], which train with cross_entropy (\"targets\": "
                                "\"sequence\")" % json.dumps(loss.get("op")))
        loss = dict(loss, targets="sequence")
        loss.setdefault("ignore_index", -100)
    elif sequence != (targets == "sequence"):
        raise ImportFailure("the recipe's loss has \"targets\": %s, but the output is %s"
                            % (json.dumps(targets), "per position [N, T, classes]: \"sequence\""
                               if sequence else "one class per sample [N, classes]: "
                               "\"sample\""))
    return loss


def _section(value):
    """A recipe section with one field per line, each value on one line."""
    if not isinstance(value, dict) or not value:
        return json.dumps(value)
    fields = ["    %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in value.items()]
    return "{\n" + ",\n".join(fields) + "\n  }"


def default_name(factory):
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", factory)[:100]
    return name if name not in (".", "..") and not name.startswith("-") else "model"


def safetensors_bytes(state):
    """A safetensors file of the state, in the state_dict's order: floats as
    float32 (tcc's state), integers (num_batches_tracked) as int64."""
    header, blobs, offset = {}, [], 0
    for name, t in state.items():
        t = t.detach().cpu().contiguous()
        if t.is_floating_point():
            t, dtype = t.to(torch.float32), "F32"
        else:
            t, dtype = t.to(torch.int64), "I64"
        data = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt", "producer": "tcc import"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data start 8-byte aligned
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def write_files(files):
    """Writes {path: bytes} so that each file is either whole or untouched:
    every file goes to a temporary beside it first, then all are renamed."""
    temps = []
    try:
        for path, data in files.items():
            directory = os.path.dirname(os.path.abspath(path))
            fd, temp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".",
                                        dir=directory)
            temps.append((temp, path))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        for temp, path in temps:
            os.chmod(temp, 0o644)
            os.replace(temp, path)
    except OSError as e:
        for temp, _ in temps:
            if os.path.exists(temp):
                os.unlink(temp)
        raise ImportFailure("cannot write %s: %s" % (e.filename or "the output", e.strerror))
