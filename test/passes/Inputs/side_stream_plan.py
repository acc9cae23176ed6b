"""Checks a planned step (tcc compile --emit=planned-mlir) against the rule
tcc-cuda-overlap-buckets puts on the memory plan: a bucket on the side
stream (tcc.side_stream: an all-reduce, or ZeRO-2's reduce-scatter) reads
its inputs and writes its results (and a reduce-scatter its workspace, the
padded message) until the first op of @train_step that reads one of its
results (the join), so no op in between may write scratch over them. Prints each bucket's inputs, the
ops it checked and the conflicts; exits 1 on a conflict.

--assume-side-stream checks every tcc.bucket as if it were marked (for a
plan made without the pass: the plain lifetimes, which end at the bucket).
"""
import re
import sys

TYPE = re.compile(r"tensor<([0-9x]*)x?(f64|f32|f16|bf16|i64|i32|i1|i8)>")
BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i8": 1, "i1": 1}


def tensor_bytes(t):
    m = TYPE.fullmatch(t.strip())
    if not m:
        return None
    n = 1
    for d in filter(None, m.group(1).split("x")):
        n *= int(d)
    return n * BYTES[m.group(2)]


def result_types(line):
    """The result types of a one-line op: after ' : ' (or the '-> ' part)."""
    sig = line.rsplit(" : ", 1)[-1]
    if "->" in sig:
        sig = sig.rsplit("->", 1)[-1]
    sig = sig.strip().strip("()")
    return [t for t in re.findall(r"tensor<[^>]*>", sig)]


def main():
    args = sys.argv[1:]
    assume = "--assume-side-stream" in args
    path = [a for a in args if not a.startswith("--")][0]
    lines = open(path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if "func.func @train_step(" in l)
    body = []
    for line in lines[start + 1:]:
        if line == "  }":
            break
        body.append(line)
    # Top-level ops: 4 spaces of indentation. Each: results, offsets, sizes.
    ops = []
    for idx, line in enumerate(body):
        if not line.startswith("    ") or line.startswith("     "):
            continue
        m = re.match(r"\s*(%[\w#:]+(?:, %[\w#:]+)*) = ", line)
        names = []
        if m:
            for part in m.group(1).split(", "):
                if ":" in part:
                    base, n = part.split(":")
                    names += [f"{base}#{k}" for k in range(int(n))]
                else:
                    names.append(part)
        pm = re.search(r"#tcc.placement<scratch = \[([-0-9, ]*)\]", line)
        offsets = [int(x) for x in pm.group(1).split(",")] if pm and pm.group(1).strip() else []
        types = result_types(line)
        ws = re.search(r"#tcc.workspace<bytes = (\d+), offset = (\d+)>", line)
        ops.append({"line": idx, "text": line, "names": names, "offsets": offsets,
                    "types": types, "workspace": (int(ws.group(2)), int(ws.group(1))) if ws else None})
    # Text of each top-level op including its region, to find readers.
    spans = []
    for k, op in enumerate(ops):
        end = ops[k + 1]["line"] if k + 1 < len(ops) else len(body)
        spans.append("\n".join(body[op["line"]:end]))
    where = {}
    for k, op in enumerate(ops):
        for name, off, t in zip(op["names"], op["offsets"], op["types"]):
            b = tensor_bytes(t)
            if off >= 0 and b:
                where[name] = (off, b)

    def reads(span, name):
        return re.search(re.escape(name) + r"(?![\w#])", span) is not None

    conflicts = 0
    checked = 0
    for k, op in enumerate(ops):
        collective = re.search(r'tcc.(?:all_reduce "\w+"|reduce_scatter) (.*?) \{', op["text"])
        if not collective or "tcc.bucket" not in op["text"]:
            continue
        if not assume and "tcc.side_stream" not in op["text"]:
            continue
        operands = collective.group(1).split(", ")
        outs = [n for n in op["names"]]
        # Operands named %x#i are spelled %x#i; results likewise.
        join = next((j for j in range(k + 1, len(ops))
                     if any(reads(spans[j], r) for r in outs)), None)
        if join is None:
            continue
        held = [(n, where[n]) for n in operands + outs if n in where]
        if op["workspace"]:
            held.append(("its workspace", op["workspace"]))
        for j in range(k + 1, join):
            writes = [(o, tensor_bytes(t)) for o, t in zip(ops[j]["offsets"], ops[j]["types"])
                      if o >= 0 and tensor_bytes(t)]
            if ops[j]["workspace"]:
                writes.append(ops[j]["workspace"])
            checked += 1
            for (o, b) in writes:
                for n, (ho, hb) in held:
                    if o < ho + hb and ho < o + b:
                        conflicts += 1
                        print(f"conflict: {ops[j]['text'].strip()[:60]} writes [{o}, {o + b}) "
                              f"over {n} [{ho}, {ho + hb}) of bucket at op {k}, joined at op {join}")
        print(f"bucket at op {k}: {len(held)} buffers, joined at op {join}, {join - k - 1} ops between")
    print(f"checked {checked} ops, {conflicts} conflicts")
    return 1 if conflicts else 0


if __name__ == "__main__":
    sys.exit(main())
