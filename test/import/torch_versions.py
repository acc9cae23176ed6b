#!/usr/bin/env python3
"""tcc import under another PyTorch: the model.json each test model imports to
must be the same bytes whatever PyTorch traces it (issue 39: Debian's 1.13
and 2.x). The references in test/import/expected/ are written with Debian's
PyTorch 1.13 (--write); the suite checks that they are current, and the GPU
session (scripts/gpu-session.sh, PyTorch 2.x there) checks them again.

  torch_versions.py [--write] [--python PYTHON] [--json OUT.json]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# model -> factory and input, as test/e2e/compare_import.py imports them
MODELS = {
    "resnet18": ("torchvision_resnet.py:resnet18", "3,48,48"),
    "resnet18_cifar": ("torchvision_resnet.py:resnet18_cifar", "3,16,16"),
    "se_net": ("se_net.py:se_net", "3,16,16"),
    "airbench94": ("originals.py:airbench94", "3,32,32"),
    "resnet9": ("originals.py:resnet9", "3,32,32"),
    "vit": ("vit.py:vit", "3,16,16"),
    "mean_vit": ("vit.py:mean_vit", "3,16,16"),
    "sdpa_vit": ("vit.py:sdpa_vit", "3,16,16"),
    "detr_style": ("vit.py:detr_style", "3,16,16"),
    "char_lm": ("char_lm.py:char_lm", "12", "--tokens", "17"),
    "token_classifier": ("char_lm.py:token_classifier", "8", "--tokens", "13"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the references")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json", help="also write the results as JSON")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools", "import"))
    version = subprocess.run([args.python, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True, env=env).stdout.strip()
    results, failed = {}, 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (factory, shape, *more) in MODELS.items():
            out = os.path.join(tmp, name + ".json")
            p = subprocess.run([args.python, "-m", "tcc_import",
                                os.path.join(HERE, "models", factory), "-o", out,
                                "--input", shape, *more], capture_output=True, text=True,
                               env=env)
            expected = os.path.join(HERE, "expected", name + ".json")
            if p.returncode != 0:
                results[name] = "import failed: " + p.stderr.strip()
            elif args.write:
                shutil.copyfile(out, expected)  # /tmp may be another file system
                results[name] = "written"
            else:
                with open(out, "rb") as a, open(expected, "rb") as b:
                    results[name] = "same" if a.read() == b.read() else "differs"
            failed += results[name] not in ("same", "written")
            print(f"{name}: {results[name]} (torch {version})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": version, "models": results}, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
