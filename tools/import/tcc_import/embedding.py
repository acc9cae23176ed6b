"""Token inputs (--tokens V): nn.Embedding -> model.json's `embedding`
node, and the checks that keep the token ids for embeddings only.

model.json's token input is read by embedding nodes and nothing else, and
an embedding reads nothing but that input (docs/model-format.md, "Token
inputs"): an nn.Embedding of positions (`wpe(torch.arange(T))`), of
another tensor or of a float input is refused, as is any other layer or
call on the ids.
"""

import torch
import torch.nn.functional as F
from torch import nn

from tcc_import import ImportFailure
from tcc_import.graph import Missing
from tcc_import.modules import param
from tcc_import.tracing import module_class

POSITIONS = ("a positional table is a learnt nn.Parameter [1, T, D] added to the token "
             "embedding (x = self.tok_emb(idx) + self.pos[:, :idx.size(1)])")


def check_flags(gm, modules, where, vocab):
    """Before the shape propagation (which would fail inside PyTorch): an
    nn.Embedding or F.embedding in a model imported without --tokens, and
    --tokens for a model without one."""
    place = None
    for node in gm.graph.nodes:
        if node.op == "call_module" and isinstance(modules[node.target], nn.Embedding):
            place = "module '%s' (%s)" % (node.target, module_class(modules[node.target]))
        elif node.op == "call_function" and node.target is F.embedding:
            place = "F.embedding"
        if place:
            break
    if place and vocab is None:
        raise ImportFailure("%s: %s reads token ids: import a token model with --tokens V "
                            "(its vocabulary) and --input T (its sequence length)"
                            % (where, place))
    if not place and vocab is not None:
        raise ImportFailure("%s: --tokens, but the model has no nn.Embedding: tcc's token ids "
                            "are read by embeddings (an image or feature model takes --input "
                            "without --tokens)" % where)


def embedding(b, node, m):
    """An nn.Embedding call on the token input: the `embedding` node named
    by the module's path, its table `<path>.weight` as the state_dict's."""
    if node.kwargs or len(node.args) != 1:
        b.fail(node, "is called with more than one argument; tcc's embedding takes the "
               "token ids only")
    if m.max_norm is not None:
        b.fail(node, "max_norm=%g renormalises the rows it reads, in place, in every "
               "forward: tcc's embedding looks rows up as they are; remove max_norm"
               % m.max_norm)
    if m.scale_grad_by_freq:
        b.fail(node, "scale_grad_by_freq=True divides each row's gradient by its id's count "
               "in the batch: tcc's embedding sums the gradients as they are; remove it")
    if m.sparse:
        b.fail(node, "sparse=True gives a sparse gradient, for sparse optimizers: tcc's "
               "embedding gradient is dense (the same sums, for tcc's optimizers); use "
               "sparse=False")
    arg = node.args[0]
    x = b.values.get(arg) if isinstance(arg, torch.fx.Node) else arg
    if x is not b.input:
        what = "positions (torch.arange)" if isinstance(x, Positions) else \
            (arg.name if isinstance(arg, torch.fx.Node) else repr(arg))
        b.fail(node, "reads %s, not the token ids: tcc's embedding reads the model's token "
               "input only; %s" % (what, POSITIONS))
    if m.num_embeddings < b.vocab:  # every id in [0, V) needs a row
        b.fail(node, "has num_embeddings %d, fewer rows than --tokens %d: ids up to %d would "
               "index past its table; give --tokens its vocabulary (at most num_embeddings)"
               % (m.num_embeddings, b.vocab, b.vocab - 1))
    fields = {"num_embeddings": m.num_embeddings, "embedding_dim": m.embedding_dim}
    if m.padding_idx is not None:
        fields["padding_idx"] = m.padding_idx  # PyTorch keeps it in [0, num_embeddings)
    weight = param(m.weight)
    if weight is not True:
        fields["weight"] = weight
    return b.emit(b.name_for(node), "embedding", [x], fields, b.out_shape(node))


class Positions(Missing):
    """torch.arange's result: a tensor tcc's graph does not compute, which
    an embedding of positions reads (GPT-2's `wpe(torch.arange(T))`)."""


def arange(b, node):
    return Positions("torch.arange, a tensor of positions that tcc's graph does not "
                     "compute; " + POSITIONS)
