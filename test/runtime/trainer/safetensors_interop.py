#!/usr/bin/env python3
"""Checks tcc's .safetensors files against Python's view of the format.

  safetensors_interop.py check-module FILE   safetensors' own loader reads FILE
  safetensors_interop.py dump FILE           safetensors' own loader reads FILE
                                             and prints {name: [dtype, shape,
                                             values]} as JSON
  safetensors_interop.py torch-load FILE     a PyTorch module with the fake
                                             model's parameters and a
                                             BatchNorm1d loads FILE strictly
  safetensors_interop.py torch-write FILE    writes a PyTorch state_dict
                                             (safetensors.torch.save_file when
                                             available, else the format by
                                             hand) for --init

Exit status 77 means "skipped" (module not installed).
"""
import json
import struct
import sys

SKIP = 77


def read_by_hand(path):
    """A strict reader following the format's rules, into torch tensors."""
    import torch
    dtypes = {"F32": torch.float32, "F16": torch.float16,
              "BF16": torch.bfloat16, "I64": torch.int64, "U8": torch.uint8}
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert 8 + n <= len(data), "header length beyond the file"
    header = json.loads(data[8:8 + n].decode("utf-8"))
    body = data[8 + n:]
    meta = header.pop("__metadata__", {})
    assert all(isinstance(v, str) for v in meta.values())
    spans = sorted((v["data_offsets"][0], v["data_offsets"][1], k)
                   for k, v in header.items())
    end = 0
    for b, e, k in spans:
        assert b == end, f"{k}: gap or overlap"
        end = e
    assert end == len(body), "trailing bytes"
    out = {}
    for k, v in header.items():
        b, e = v["data_offsets"]
        dtype = dtypes[v["dtype"]]
        t = torch.frombuffer(bytearray(body[b:e]), dtype=dtype) if e > b \
            else torch.empty(0, dtype=dtype)
        out[k] = t.reshape(v["shape"])
    return out, meta


def fake_module():
    import torch

    class Fake(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.BatchNorm1d(16)
            self.fc = torch.nn.Linear(16, 3)

    return Fake()


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "dump":
        try:
            from safetensors import safe_open
            import torch  # noqa: F401  (BF16 needs the torch framework)
        except ImportError:
            return SKIP
        out = {}
        with safe_open(path, framework="pt") as f:
            for k in f.keys():
                t = f.get_tensor(k)
                out[k] = [str(t.dtype).replace("torch.", ""), list(t.shape),
                          t.reshape(-1).double().tolist()]
            out["__metadata__"] = f.metadata()
        print(json.dumps(out))
        return 0
    if mode == "check-module":
        try:
            from safetensors import safe_open
        except ImportError:
            return SKIP
        framework = "np"
        try:
            import torch  # noqa: F401
            framework = "pt"
        except ImportError:
            pass
        with safe_open(path, framework=framework) as f:
            keys = list(f.keys())
            assert "fc.weight" in keys and "step" in keys, keys
            for k in keys:
                f.get_tensor(k)
            assert f.metadata()["model"] == "fake_linear"
        print("ok", len(keys))
        return 0
    try:
        import torch
    except ImportError:
        return SKIP
    if mode == "torch-load":
        sd, meta = read_by_hand(path)
        assert meta["model"] == "fake_linear" and meta["format"] == "pt"
        weights = {k: v for k, v in sd.items()
                   if not k.startswith(("optimizer.", "ema.")) and k != "step"}
        m = fake_module()
        m.load_state_dict(weights, strict=True)
        assert int(m.norm.num_batches_tracked) == int(sd["step"]), \
            (m.norm.num_batches_tracked, sd["step"])
        assert torch.equal(m.fc.weight.data, sd["fc.weight"])
        assert sd["step"].dtype == torch.int64 and sd["step"].dim() == 0
        print("ok")
        return 0
    if mode == "torch-write":
        m = fake_module()
        with torch.no_grad():
            m.fc.weight.copy_(torch.arange(48, dtype=torch.float32).reshape(3, 16) / 100)
            m.fc.bias.fill_(-1.5)
            m.norm.running_mean.fill_(0.25)
            m.norm.num_batches_tracked.fill_(123)
        sd = {k: v.contiguous() for k, v in m.state_dict().items()}
        try:
            from safetensors.torch import save_file
            save_file(sd, path, metadata={"format": "pt"})
            print("ok safetensors.torch")
            return 0
        except ImportError:
            pass
        header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
        names = {torch.float32: "F32", torch.int64: "I64"}
        for k in sorted(sd):
            raw = sd[k].numpy().tobytes()
            header[k] = {"dtype": names[sd[k].dtype], "shape": list(sd[k].shape),
                         "data_offsets": [offset, offset + len(raw)]}
            chunks.append(raw)
            offset += len(raw)
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-(8 + len(text)) % 8)
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))
        print("ok by hand")
        return 0
    raise SystemExit("unknown mode " + mode)


if __name__ == "__main__":
    sys.exit(main())
