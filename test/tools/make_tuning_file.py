"""Writes a tuning file (docs/tuning.md) for a conv-plans table, as `tcc tune`
would after measuring, choosing for each problem a real engine configuration
that is not the heuristics' first: so that a compile that bakes the file is
told apart from one that ignores it. The times are made up (the measuring is
checked on a GPU, scripts/gpu_check.py); the plans are real: they come from
`tcc-tune --list`, which builds every candidate for the described GPU. The
matmuls' algorithms are made up too (cuBLASLt offers them only on a GPU),
each a distinct configuration in cuBLASLt's form.

usage: make_tuning_file.py PLANS.json LIST.json OUT.json [--drop N]
         [--gpu NAME] [--cudnn V] [--plan PLAN]
  --drop N     leave out the N-th problem (0-based)
  --gpu NAME   record another GPU; --cudnn V another cuDNN version
  --plan PLAN  give every problem this plan (e.g. one that does not exist)
  --workspace B  with --plan: the workspace it asked for on the GPU
  --drop-matmul N  leave out the N-th matmul problem
  --algo ALGO  give every matmul this algorithm; --algo-workspace B its workspace
  --no-cublaslt-version  leave "cublaslt_version" out
  --cutlass F  give each plain 16-bit NHWC convolution (no epilogue, one
               group) a CUTLASS record
               (tcc-tune-cutlass): its kernel (--cutlass-tile, default
               128x64x32_c1) timed at F times the engine's time, with
               --cutlass-workspace bytes (default 65536), then a failed one
Prints each problem's chosen plan, one per line, "PROBLEM = PLAN", then each
matmul's "PROBLEM = ALGO".
"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("plans")
ap.add_argument("list")
ap.add_argument("out")
ap.add_argument("--drop", type=int)
ap.add_argument("--gpu")
ap.add_argument("--cudnn", type=int)
ap.add_argument("--plan")
ap.add_argument("--workspace", type=int, default=0)
ap.add_argument("--drop-matmul", type=int)
ap.add_argument("--algo")
ap.add_argument("--algo-workspace", type=int, default=0)
ap.add_argument("--no-cublaslt-version", action="store_true")
# CUTLASS records (tcc-tune-cutlass) for each plain 16-bit NHWC convolution:
# one kernel of its direction and type, FACTOR times the chosen engine's time.
ap.add_argument("--cutlass", type=float, metavar="FACTOR")
ap.add_argument("--cutlass-tile", default="128x64x32_c1")
ap.add_argument("--cutlass-workspace", type=int, default=65536)
args = ap.parse_args()

table = json.load(open(args.plans))
listed = {c["problem"]: c for c in json.load(open(args.list))["convs"]}
convs = []
for i, row in enumerate(table["convs"]):
    if i == args.drop:
        continue
    heuristic = row["plan"]
    others = [p for p in listed[row["problem"]]["plans"] if p["plan"] != heuristic]
    assert others, "no alternative to the heuristics' plan for " + row["problem"]
    chosen = ({"plan": args.plan, "workspace_bytes": args.workspace} if args.plan
              else others[-1])
    convs.append({"problem": row["problem"], "plan": chosen["plan"],
                  "workspace_bytes": chosen["workspace_bytes"], "microseconds": 10.0 + i,
                  "heuristic_plan": heuristic, "heuristic_microseconds": 20.0 + i,
                  "timed": [{"plan": chosen["plan"], "microseconds": 10.0 + i}]})
    words = row["problem"].split()
    if args.cutlass and words[1] in ("f16", "bf16") and words[2] == "nhwc" and \
            words[-1] == "g1":
        direction = {"fwd": "fprop", "bwd-data": "dgrad", "bwd-filter": "wgrad"}[words[0]]
        kernel = "cutlass_sm90_%s_%s_%s" % (words[1], direction, args.cutlass_tile)
        convs[-1]["cutlass"] = [
            {"kernel": kernel, "microseconds": args.cutlass * (10.0 + i),
             "workspace_bytes": args.cutlass_workspace, "difference": 0.001},
            {"kernel": kernel.replace(args.cutlass_tile, "64x64x64_c1"),
             "failure": "it does not run on this GPU"}]
        print("%s = %s (CUTLASS, %.2fx the engine's time)" % (row["problem"], kernel,
                                                             args.cutlass))
    print("%s = %s" % (row["problem"], chosen["plan"]))
matmuls = []
for i, row in enumerate(table["matmuls"]):
    if i == args.drop_matmul:
        continue
    algo = args.algo or ("algo%d_tile%d_stages%d_splitk1_reduction0_swizzle%d_custom0_inner0_"
                         "cluster0" % (20 + i, 15 + i, 8 + i, i % 2))
    matmuls.append({"problem": row["problem"], "algo": algo,
                    "workspace_bytes": args.algo_workspace, "microseconds": 5.0 + i,
                    "heuristic_algo": "algo0_tile0_stages0_splitk1_reduction0_swizzle0_"
                                      "custom0_inner0_cluster0",
                    "heuristic_microseconds": 6.0 + i,
                    "timed": [{"algo": algo, "microseconds": 5.0 + i}]})
    print("%s = %s" % (row["problem"], algo))
tuning = {"format": "tcc-tuning/1", "gpu": args.gpu or table["gpu"],
          "device": "NVIDIA " + (args.gpu or table["gpu"]).upper(), "sm": table["sm"],
          "cudnn_version": args.cudnn or table["cudnn_version"],
          "workspace_limit_bytes": table["workspace_limit_bytes"],
          "tuned_at": "2026-11-26T00:00:00Z", "convs": convs,
          "cublaslt_version": 130100, "matmuls": matmuls}
if args.no_cublaslt_version:
    del tuning["cublaslt_version"]
json.dump(tuning, open(args.out, "w"), indent=1)
