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
