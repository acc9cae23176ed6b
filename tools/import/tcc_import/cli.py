"""tcc import MODULE.py:FACTORY -o model.json [options] (docs/import.md)."""

import argparse
import importlib.util
import os
import sys
import traceback

from tcc_import import ImportFailure

DESCRIPTION = """\
Imports a PyTorch model: FACTORY (a function or class of MODULE.py, called
with no arguments) returns an nn.Module, which is traced with torch.fx and
written as model.json ops with PyTorch's parameter names. With --weights
the module's state_dict is written too, for `./train --init W.safetensors`;
the trained checkpoint loads back with load_state_dict. A layer or call that
model.json cannot express is refused with one error line naming its module
path. docs/import.md lists what maps to what.

A token model (nn.Embedding on the ids) takes --tokens V --input T: the
input is T int64 ids in [0, V). Its output [N, classes] trains with a class
per sample; [N, T, classes] (a causal language model's logits at every
position) with a class per position: the loss's "targets": "sequence"."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        # tcc's convention: one "error:" line and status 1
        raise ImportFailure(message + " (tcc import --help)")


def parse_args(argv):
    ap = Parser(prog="tcc import", description=DESCRIPTION,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("factory", metavar="MODULE.py:FACTORY",
                    help="the Python file and the function (or class) in it that "
                    "returns the nn.Module")
    ap.add_argument("-o", "--output", required=True, metavar="MODEL.json",
                    help="the model.json to write (atomically)")
    ap.add_argument("--weights", metavar="W.safetensors",
                    help="also write the module's state_dict (float32) here, for "
                    "./train --init")
    ap.add_argument("--input", metavar="C,H,W",
                    help="the per-sample input shape (default 3,32,32; F for a flat input; "
                    "T, the sequence length, with --tokens)")
    ap.add_argument("--tokens", type=int, metavar="V",
                    help="the input is token ids in [0, V) (V at most the rows of the "
                    "nn.Embedding reading them), T of them per sample (--input T)")
    ap.add_argument("--classes", type=int, metavar="N",
                    help="the number of classes, the size of the logits (default: the "
                    "output's last dim; checked when given)")
    ap.add_argument("--recipe", metavar="RECIPE.json",
                    help="model.json sections (loss, train, data, eval, name, "
                    "description) that replace the defaults (docs/import.md)")
    ap.add_argument("--name", help="the model's name (default: FACTORY)")
    return ap.parse_args(argv)


def parse_shape(text, tokens):
    if text is None:
        if tokens is not None:
            raise ImportFailure("--tokens needs --input T, the number of token ids per sample")
        text = "3,32,32"
    if tokens is not None and "," in text:
        raise ImportFailure("--input with --tokens is T, the number of token ids per sample, "
                            "got '%s'" % text)
    try:
        shape = [int(d) for d in text.split(",")]
    except ValueError:
        shape = []
    if not shape or len(shape) not in (1, 3) or min(shape) < 1:
        raise ImportFailure("--input must be C,H,W or F (positive integers), got '%s'"
                            % text)
    return shape


def load_factory(spec):
    """The nn.Module that MODULE.py:FACTORY returns."""
    import torch
    path, sep, factory = spec.rpartition(":")
    if not sep or not path or not factory:
        raise ImportFailure("'%s' is not MODULE.py:FACTORY (a Python file and the "
                            "function in it that returns the model)" % spec)
    if not os.path.isfile(path):
        raise ImportFailure("%s: no such file" % path)
    name = "tcc_import_user_" + os.path.splitext(os.path.basename(path))[0]
    # the module's own folder first, so that it imports its neighbours
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        source = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(source)
        source.loader.exec_module(module)
    except Exception as e:
        raise ImportFailure("%s: loading it raised %s: %s"
                            % (path, type(e).__name__, " ".join(str(e).split())))
    make = getattr(module, factory, None)
    if not callable(make):
        raise ImportFailure("%s: has no function or class '%s'" % (path, factory))
    try:
        model = make()
    except Exception as e:
        raise ImportFailure("%s: %s() raised %s: %s" % (spec, factory, type(e).__name__,
                                                       " ".join(str(e).split())))
    if not isinstance(model, torch.nn.Module):
        raise ImportFailure("%s: %s() returned %s, not a torch.nn.Module"
                            % (spec, factory, type(model).__name__))
    return model


def run(argv):
    args = parse_args(argv)
    shape = parse_shape(args.input, args.tokens)
    if args.tokens is not None and not 1 <= args.tokens <= 2 ** 24:
        # model.json's bound: the ids travel in the f32 batch as exact integers
        raise ImportFailure("--tokens must be a vocabulary in [1, 2^24], got %d" % args.tokens)
    if args.classes is not None and args.classes < 2:
        raise ImportFailure("--classes must be at least 2, got %d" % args.classes)
    if args.weights and os.path.abspath(args.weights) == os.path.abspath(args.output):
        raise ImportFailure("--weights and -o name the same file, %s" % args.output)
    recipe = {}
    if args.recipe:
        from tcc_import.output import read_recipe
        recipe = read_recipe(args.recipe)
    try:
        import torch  # noqa: F401  (here, to say so in one line if it is missing)
    except ImportError:
        raise ImportFailure("tcc import needs PyTorch for %s (Debian: python3-torch)"
                            % sys.executable)
    from tcc_import.convert import convert
    from tcc_import import output

    model = load_factory(args.factory)
    factory = args.factory.rpartition(":")[2]
    nodes, state, logits = convert(model, shape, args.classes, args.factory, args.tokens)
    description = "Imported by tcc import from %s:%s." % (
        os.path.basename(args.factory.rpartition(":")[0]), factory)
    text = output.model_json(args.name or output.default_name(factory), description, shape,
                             logits, nodes, recipe, args.tokens)
    files = {args.output: text.encode()}
    if args.weights:
        files[args.weights] = output.safetensors_bytes(state)
    output.write_files(files)
    return 0


def main(argv=None):
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except ImportFailure as e:
        print("error: %s" % " ".join(str(e).split()), file=sys.stderr)
        return 1
    except Exception as e:
        # a bug of tcc import's own: still one line, with where it happened
        frame = traceback.extract_tb(e.__traceback__)[-1]
        print("error: internal error in tcc import (%s:%d): %s: %s; please report it with "
              "the model" % (os.path.basename(frame.filename), frame.lineno,
                             type(e).__name__, " ".join(str(e).split())), file=sys.stderr)
        return 1
