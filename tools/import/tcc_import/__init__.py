"""tcc import: a PyTorch nn.Module becomes a tcc model.json and its weights.

The module is traced with torch.fx (symbolic tracing), every node of the
graph is mapped to a model.json op with PyTorch's parameter names, and the
module's state_dict is written as safetensors for `./train --init`
(docs/import.md). Anything model.json cannot express is refused with one
error line (ImportFailure) naming the module path and the PyTorch op.
"""


class ImportFailure(Exception):
    """A user-facing failure: its message is the whole `error:` line."""
