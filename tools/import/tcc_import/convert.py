"""An nn.Module -> model.json nodes and the state to write as weights."""

import operator

import torch

from tcc_import import ImportFailure
from tcc_import.functions import map_call
from tcc_import.graph import Builder, Value
from tcc_import.modules import map_module
from tcc_import.shapes import show
from tcc_import.tokens import parameter
from tcc_import.tracing import NodeFailed, propagate_shapes, trace

# Shapes are propagated with this batch: odd, and unlike the channel
# counts of common models, so that a reshape that folds the batch into
# another dim shows as a dim 0 that is not the batch.
BATCH = 3


# The uses of a module's [1, ...] tensor that broadcast it over the batch,
# which a `parameter` node's value is (tokens.parameter), and indexing of
# its non-batch dims (`pos_embedding[:, :T]`).
BROADCASTS = {"expand", operator.add, torch.add, "add", operator.getitem}


class _Attr:
    """A parameter or buffer read by a get_attr node."""

    def __init__(self, target):
        self.target = target


def convert(module, input_shape, classes, where):
    """(nodes, state): the model.json graph of `module` and a copy of its
    state_dict taken before anything ran, every entry of which belongs to a
    node of the graph."""
    state = {k: v.detach().clone() for k, v in module.state_dict().items()}
    gm = trace(module, where)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != 1:
        raise ImportFailure("%s: forward takes %d inputs (%s); tcc's model has one, the "
                            "image or feature batch" % (where, len(placeholders),
                                                        ", ".join(n.name for n in placeholders)))
    b = Builder(module, input_shape, BATCH, where)
    try:
        propagate_shapes(gm, input_shape, BATCH)
    except NodeFailed as e:
        b.fail(e.node, "fails on a random input [%d, %s] (--input): %s: %s"
               % (BATCH, ", ".join(map(str, input_shape)), type(e.error).__name__,
                  " ".join(str(e.error).split())))
    out = None
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            b.values[node] = b.input
        elif node.op == "get_attr":
            b.values[node] = _Attr(node.target)
        elif node.op == "call_module":
            b.values[node] = map_module(b, node)
        elif node.op in ("call_function", "call_method"):
            for a in node.all_input_nodes:
                if isinstance(b.values.get(a), _Attr) and node.target in BROADCASTS:
                    b.values[a] = parameter(b, node, b.values[a].target)
                if isinstance(b.values.get(a), _Attr):
                    b.fail(node, "uses the parameter or buffer '%s' directly; tcc maps "
                           "parameters through their modules (nn.Conv2d, nn.Linear, "
                           "nn.BatchNorm2d, nn.LayerNorm, nn.MultiheadAttention), and a "
                           "[1, ...] tensor broadcast over the batch (x + pos, "
                           "cls.expand(N, -1, -1)) as a parameter node"
                           % b.values[a].target)
            b.values[node] = map_call(b, node)
        elif node.op == "output":
            out = b.values.get(node.args[0]) if isinstance(node.args[0], torch.fx.Node) else None
            if not isinstance(out, Value) or out.perm:
                raise ImportFailure("%s: forward returns %s, not one tensor: tcc's model "
                                    "returns the logits [N, classes]"
                                    % (where, type(node.args[0]).__name__))
    if out.shape != (BATCH, classes):
        raise ImportFailure("%s: forward returns %s (a batch of %d), not the logits "
                            "[N, %d] (--classes %d)" % (where, show(out.shape), BATCH,
                                                        classes, classes))
    nodes = b.finish(out)
    check_state(nodes, state, where)
    return nodes, state


def check_state(nodes, state, where):
    """Every tensor of the state_dict belongs to a node the output uses: the
    trained checkpoint then loads back with a strict load_state_dict."""
    owners = {n["name"] for n in nodes if n["op"] in ("conv2d", "linear", "batch_norm",
                                                      "layer_norm")}
    own = {n["name"] for n in nodes if n["op"] == "parameter"}
    attention = tuple(n["name"] + "." for n in nodes if n["op"] == "attention")
    stray = [k for k in state if k.rsplit(".", 1)[0] not in owners and k not in own
             and not k.startswith(attention)]
    if stray:
        raise ImportFailure(
            "%s: %d tensor(s) of the state_dict belong to no layer that computes the "
            "output (%s): a module the forward never calls, or a tensor used outside a "
            "module; tcc's checkpoint would not hold them. Remove the module or register "
            "the tensor in it" % (where, len(stray), ", ".join(stray[:4])))
