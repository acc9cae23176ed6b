"""Shapes of fx nodes, as the shape propagation recorded them."""


def torch_shape(node):
    """PyTorch's shape of a node's tensor (batch first), or None."""
    shape = node.meta.get("tcc_shape")
    return tuple(shape) if shape is not None else None


def show(shape):
    """A shape for a message, the batch as N: [N, 3, 32, 32]."""
    return "[%s]" % ", ".join(["N"] + [str(d) for d in shape[1:]])
