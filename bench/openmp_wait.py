#!/usr/bin/env python3
"""How a cpu trainer's OpenMP waiting behaves on an idle and on a shared
machine (docs/performance.md, "OpenMP waiting").

Runs each trainer command under libgomp's default spin count (300000),
OMP_WAIT_POLICY=passive and tcc's default (GOMP_SPINCOUNT=10000), first
alone, then beside one busy process per core, interleaved, `--repeat` times;
prints one JSON object with every wall time and the medians.

usage: openmp_wait.py [--repeat N] -- NAME=CMD [NAME=CMD ...]
  e.g. openmp_wait.py -- "mlp=./mlp --steps 300 --quiet" "deep=./deep_2000 --steps 1 --quiet"
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

SETTINGS = {
    "libgomp-default": {"GOMP_SPINCOUNT": "300000"},
    "passive": {"OMP_WAIT_POLICY": "passive"},
    "tcc-default": {"GOMP_SPINCOUNT": "10000"},
}


def timed(cmd, env):
    start = time.monotonic()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("runs", nargs="+", help="NAME=COMMAND")
    args = ap.parse_args()
    base = {k: v for k, v in os.environ.items()
            if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    result = {"cores": os.cpu_count(), "seconds": {}, "median": {}}
    for load in ("idle", "loaded"):
        hogs = []
        if load == "loaded":
            hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(os.cpu_count())]
        try:
            for run in args.runs:
                name, cmd = run.split("=", 1)
                for _ in range(args.repeat):
                    for setting, env in SETTINGS.items():
                        key = f"{name} {load} {setting}"
                        seconds = timed(shlex.split(cmd), {**base, **env})
                        result["seconds"].setdefault(key, []).append(round(seconds, 3))
                        print(f"{key}: {seconds:.2f} s", file=sys.stderr, flush=True)
        finally:
            for h in hogs:
                h.kill()
    for key, values in result["seconds"].items():
        result["median"][key] = statistics.median(values)
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
