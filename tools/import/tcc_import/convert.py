"""An nn.Module -> model.json nodes and the state to write as weights."""

import operator

import torch

from tcc_import import ImportFailure
from tcc_import import embedding as E
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


def convert(module, input_shape, classes, where, vocab=None):
    """(nodes, state, logits): the model.json graph of `module`, a copy of
    its state_dict taken before anything ran, every entry of which belongs
    to a node of the graph, and the output's per-sample shape ([classes],
    or [T, classes] per position of a token input). `classes` None takes
    the output's; `vocab` (--tokens) makes the input token ids."""
    state = {k: v.detach().clone() for k, v in module.state_dict().items()}
    check_tied(module, where)
    gm = trace(module, where)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != 1:
        raise ImportFailure("%s: forward takes %d inputs (%s); tcc's model has one, the "
                            "image, feature or token batch"
                            % (where, len(placeholders), ", ".join(n.name for n in placeholders)))
    b = Builder(module, input_shape, BATCH, where, vocab)
    E.check_flags(gm, b.modules, where, vocab)
    try:
        propagate_shapes(gm, input_shape, BATCH, vocab)
    except NodeFailed as e:
        b.fail(e.node, "fails on a random input [%d, %s] (--input%s): %s: %s"
               % (BATCH, ", ".join(map(str, input_shape)), ", --tokens" if vocab else "",
                  type(e.error).__name__, " ".join(str(e.error).split())))
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
                           "nn.BatchNorm2d, nn.LayerNorm, nn.MultiheadAttention, "
                           "nn.Embedding), and a [1, ...] tensor broadcast over the batch "
                           "(x + pos, cls.expand(N, -1, -1)) as a parameter node"
                           % b.values[a].target)
            b.values[node] = map_call(b, node)
        elif node.op == "output":
            out = b.values.get(node.args[0]) if isinstance(node.args[0], torch.fx.Node) else None
            if not isinstance(out, Value) or out.perm:
                raise ImportFailure("%s: forward returns %s, not one tensor: tcc's model "
                                    "returns the logits [N, classes]"
                                    % (where, type(node.args[0]).__name__))
    logits = logits_shape(out.shape, input_shape, classes, vocab, where)
    nodes = b.finish(out)
    if vocab and not any(n["op"] == "embedding" for n in nodes):
        raise ImportFailure("%s: --tokens, but no nn.Embedding reads the input on the way "
                            "to the output: tcc's token ids are read by embeddings" % where)
    check_state(nodes, state, where)
    return nodes, state, logits


def logits_shape(shape, input_shape, classes, vocab, where):
    """The output's per-sample shape: [classes] (a class per sample), or
    [T, classes] for the T positions of a token input (a language model's
    next tokens: the loss's sequence targets)."""
    if len(shape) == 3 and shape[0] == BATCH and vocab:
        if shape[1] != input_shape[0]:
            raise ImportFailure("%s: forward returns %s: logits per position must cover the "
                                "%d positions of the input (--input %d), one class for each "
                                "target of [N, %d]" % (where, show(shape), input_shape[0],
                                                       input_shape[0], input_shape[0]))
    elif len(shape) == 3 and shape[0] == BATCH:
        raise ImportFailure("%s: forward returns %s: logits per position [N, T, classes] "
                            "need a token input (--tokens V); tcc's model returns [N, classes] "
                            "otherwise" % (where, show(shape)))
    elif len(shape) != 2 or shape[0] != BATCH:
        raise ImportFailure("%s: forward returns %s (a batch of %d), not the logits [N, "
                            "classes]%s" % (where, show(shape), BATCH,
                                            " or [N, T, classes]" if vocab else ""))
    if classes is not None and shape[-1] != classes:
        raise ImportFailure("%s: forward returns %s (a batch of %d), not the logits %s "
                            "(--classes %d)" % (where, show(shape), BATCH,
                                                show(shape[:-1] + (classes,)), classes))
    return list(shape[1:])


def check_tied(module, where):
    """Weight tying (`head.weight = tok_emb.weight`): one tensor under two
    state_dict names. tcc gives every layer its own parameters, so the two
    would train apart from the first step: refused."""
    names = {}
    for name, t in module.state_dict(keep_vars=True).items():
        names.setdefault(id(t), []).append(name)
    tied = [n for n in names.values() if len(n) > 1]
    if tied:
        raise ImportFailure(
            "%s: %s are one tensor (tied weights): tcc gives each layer its own parameters, "
            "so they would train apart; untie them (a copy: nn.Parameter(w.clone())) or "
            "write the model without the tie" % (where, " and ".join("'%s'" % n
                                                                   for n in tied[0])))


def check_state(nodes, state, where):
    """Every tensor of the state_dict belongs to a node the output uses: the
    trained checkpoint then loads back with a strict load_state_dict."""
    owners = {n["name"] for n in nodes if n["op"] in ("conv2d", "linear", "batch_norm",
                                                      "layer_norm", "embedding")}
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
