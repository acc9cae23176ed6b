#!/usr/bin/env python3
"""state_dict_of.py CHECKPOINT OUT: writes the model's state_dict part of a
tcc checkpoint (parameters and buffers; no step counter, optimizer, EMA or
Lookahead tensors) as a .safetensors file, as a PyTorch model's
state_dict() would be saved: what `train --init` takes."""
import json
import struct
import sys

with open(sys.argv[1], "rb") as f:
    raw = f.read()
(size,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + size])
base = 8 + size
out_header, blobs, offset = {}, [], 0
for name, info in header.items():
    if name == "__metadata__" or name == "step" or name.split(".")[0] in (
            "optimizer", "ema", "lookahead"):
        continue
    begin, end = info["data_offsets"]
    blobs.append(raw[base + begin:base + end])
    out_header[name] = {"dtype": info["dtype"], "shape": info["shape"],
                        "data_offsets": [offset, offset + end - begin]}
    offset += end - begin
text = json.dumps(out_header).encode()
text += b" " * (-len(text) % 8)
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
