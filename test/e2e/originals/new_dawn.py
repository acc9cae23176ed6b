"""A transcription of davidcpage/cifar10-fast new_dawn.py (with the parts of
core.py, torch_backend.py and dawn_utils.py it uses), the code
examples/resnet9.json is named after, for compare_with_originals.py.

Copyright (c) 2018 davidcpage, MIT License (the original's LICENSE).

The original's code is kept as it is; every change is marked `# tcc test:`
and is one of these:
- it runs on the CPU in a dtype given by the caller (float64 for the parity
  test) instead of fp16 on a GPU, with BatchNorm in that dtype too;
- the data come from the caller (uint8 [N, 3, 32, 32] images and labels)
  instead of torchvision's CIFAR-10 download; the widths and the batch size
  are arguments (the test divides the widths by 8 and keeps 16 ghost splits);
- torch.symeig, removed from recent PyTorch, is torch.linalg.eigh (the same
  ascending eigenvalues from the same lower triangle); the eigenvectors'
  signs, which LAPACK leaves to the implementation, are made deterministic as
  tcc's runtime/trainer/InitWhitening.cpp makes them (each vector's
  largest-magnitude component positive);
- `Tensor.add_(Number, Tensor)`, deprecated, is `add_(Tensor, alpha=Number)`;
- without augmentation the training set is not padded (the original pads by
  4 for its Crop(32, 32)); the batches come in file order when not shuffled;
- the run stops after `steps` optimizer steps; logging, timing and
  evaluation are left out (they change no state).
"""

import copy
from collections import namedtuple, defaultdict
from functools import partial
from itertools import count, chain

import numpy as np
import torch
from torch import nn

#####################
# core.py
#####################



def path_iter(nested_dict, pfx=()):
    for name, val in nested_dict.items():
        if isinstance(val, dict): yield from path_iter(val, (*pfx, name))
        else: yield ((*pfx, name), val)


def group_by_key(items):
    res = defaultdict(list)
    for k, v in items:
        res[k].append(v)
    return res


sep = '/'


def normpath(path):
    #simplified os.path.normpath
    parts = []
    for p in path.split(sep):
        if p == '..': parts.pop()
        elif p.startswith(sep): parts = [p]
        else: parts.append(p)
    return sep.join(parts)


has_inputs = lambda node: type(node) is tuple


def pipeline(net):
    return [(sep.join(path), (node if has_inputs(node) else (node, [-1]))) for (path, node) in path_iter(net)]


def build_graph(net):
    flattened = pipeline(net)
    resolve_input = lambda rel_path, path, idx: normpath(sep.join((path, '..', rel_path))) if isinstance(rel_path, str) else flattened[idx+rel_path][0]
    return {path: (node[0], [resolve_input(rel_path, path, idx) for rel_path in node[1]]) for idx, (path, node) in enumerate(flattened)}


class PiecewiseLinear(namedtuple('PiecewiseLinear', ('knots', 'vals'))):
    def __call__(self, t):
        return np.interp([t], self.knots, self.vals)[0]


class Const(namedtuple('Const', ['val'])):
    def __call__(self, x):
        return self.val


def normalise(x, mean, std):
    return (x - mean) / std


cifar10_mean, cifar10_std = [
    (125.31, 122.95, 113.87), # equals np.mean(cifar10()['train']['data'], axis=(0,1,2))
    (62.99, 62.09, 66.70), # equals np.std(cifar10()['train']['data'], axis=(0,1,2))
]

#####################
# torch_backend.py
#####################

chunks = lambda data, splits: (data[start:end] for (start, end) in zip(splits, splits[1:]))


class GPUBatches():
    def __init__(self, batch_size, transforms=(), dataset=None, shuffle=True, drop_last=False, max_options=None):
        self.dataset, self.transforms, self.shuffle, self.max_options = dataset, transforms, shuffle, max_options
        N = len(dataset['data'])
        self.splits = list(range(0, N+1, batch_size))
        if not drop_last and self.splits[-1] != N:
            self.splits.append(N)

    def __iter__(self):
        data, targets = self.dataset['data'], self.dataset['targets']
        assert not self.transforms  # tcc test: the --no-augment run
        if self.shuffle:
            i = torch.randperm(len(data))
            data, targets = data[i], targets[i]
        return ({'input': x.clone(), 'target': y} for (x, y) in zip(chunks(data, self.splits), chunks(targets, self.splits)))

    def __len__(self):
        return len(self.splits) - 1


class Network(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.graph = build_graph(net)
        for path, (val, _) in self.graph.items():
            setattr(self, path.replace('/', '_'), val)

    def nodes(self):
        return (node for node, _ in self.graph.values())

    def forward(self, inputs):
        outputs = dict(inputs)
        for k, (node, ins) in self.graph.items():
            #only compute nodes that are not supplied as inputs.
            if k not in outputs:
                outputs[k] = node(*[outputs[x] for x in ins])
        return outputs


class Identity(namedtuple('Identity', [])):
    def __call__(self, x): return x


class Add(namedtuple('Add', [])):
    def __call__(self, x, y): return x + y


class AddWeighted(namedtuple('AddWeighted', ['wx', 'wy'])):
    def __call__(self, x, y): return self.wx*x + self.wy*y


class Mul(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = weight
    def __call__(self, x):
        return x*self.weight


class Flatten(nn.Module):
    def forward(self, x): return x.view(x.size(0), x.size(1))


class BatchNorm(nn.BatchNorm2d):
    def __init__(self, num_features, eps=1e-05, momentum=0.1, weight_freeze=False, bias_freeze=False, weight_init=1.0, bias_init=0.0):
        super().__init__(num_features, eps=eps, momentum=momentum)
        if weight_init is not None: self.weight.data.fill_(weight_init)
        if bias_init is not None: self.bias.data.fill_(bias_init)
        self.weight.requires_grad = not weight_freeze
        self.bias.requires_grad = not bias_freeze


class GhostBatchNorm(BatchNorm):
    def __init__(self, num_features, num_splits, **kw):
        super().__init__(num_features, **kw)
        self.num_splits = num_splits
        self.register_buffer('running_mean', torch.zeros(num_features*self.num_splits))
        self.register_buffer('running_var', torch.ones(num_features*self.num_splits))

    def train(self, mode=True):
        if (self.training is True) and (mode is False): #lazily collate stats when we are going to use them
            self.running_mean = torch.mean(self.running_mean.view(self.num_splits, self.num_features), dim=0).repeat(self.num_splits)
            self.running_var = torch.mean(self.running_var.view(self.num_splits, self.num_features), dim=0).repeat(self.num_splits)
        return super().train(mode)

    def forward(self, input):
        N, C, H, W = input.shape
        if self.training or not self.track_running_stats:
            return nn.functional.batch_norm(
                input.view(-1, C*self.num_splits, H, W), self.running_mean, self.running_var,
                self.weight.repeat(self.num_splits), self.bias.repeat(self.num_splits),
                True, self.momentum, self.eps).view(N, C, H, W)
        else:
            return nn.functional.batch_norm(
                input, self.running_mean[:self.num_features], self.running_var[:self.num_features],
                self.weight, self.bias, False, self.momentum, self.eps)


class CrossEntropyLoss(namedtuple('CrossEntropyLoss', [])):
    def __call__(self, log_probs, target):
        return torch.nn.functional.nll_loss(log_probs, target, reduction='none')


class KLLoss(namedtuple('KLLoss', [])):
    def __call__(self, log_probs):
        return -log_probs.mean(dim=1)


class Correct(namedtuple('Correct', [])):
    def __call__(self, classifier, target):
        return classifier.max(dim = 1)[1] == target


class LogSoftmax(namedtuple('LogSoftmax', ['dim'])):
    def __call__(self, x):
        return torch.nn.functional.log_softmax(x, self.dim)


label_smoothing_loss = lambda alpha: Network({
        'logprobs': (LogSoftmax(dim=1), ['logits']),
        'KL':  (KLLoss(), ['logprobs']),
        'xent':  (CrossEntropyLoss(), ['logprobs', 'target']),
        'loss': (AddWeighted(wx=1-alpha, wy=alpha), ['xent', 'KL']),
        'acc': (Correct(), ['logits', 'target']),
    })

trainable_params = lambda model: {k:p for k,p in model.named_parameters() if p.requires_grad}


def nesterov_update(w, dw, v, lr, weight_decay, momentum):
    dw.add_(w, alpha=weight_decay).mul_(-lr)  # tcc test: add_(weight_decay, w)
    v.mul_(momentum).add_(dw)
    w.add_(dw.add_(v, alpha=momentum))  # tcc test: add_(momentum, v)


def zeros_like(weights):
    return [torch.zeros_like(w) for w in weights]


def optimiser(weights, param_schedule, update, state_init):
    weights = list(weights)
    return {'update': update, 'param_schedule': param_schedule, 'step_number': 0, 'weights': weights,  'opt_state': state_init(weights)}


def opt_step(update, param_schedule, step_number, weights, opt_state):
    step_number += 1
    param_values = {k: f(step_number) for k, f in param_schedule.items()}
    for w, v in zip(weights, opt_state):
        if w.requires_grad:
            update(w.data, w.grad.data, v, **param_values)
    return {'update': update, 'param_schedule': param_schedule, 'step_number': step_number, 'weights': weights,  'opt_state': opt_state}


SGD = partial(optimiser, update=nesterov_update, state_init=zeros_like)


def reduce(batches, state, steps):
    #state: is a dictionary
    #steps: are functions that take (batch, state)
    #and return a dictionary of updates to the state (or None)

    for batch in chain(batches, [None]):
    #we send an extra batch=None at the end for steps that
    #need to do some tidying-up (e.g. log_activations)
        for step in steps:
            updates = step(batch, state)
            if updates:
                for k,v in updates.items():
                    state[k] = v
    return state


MODEL = 'model'
LOSS = 'loss'
VALID_MODEL = 'valid_model'
OUTPUT = 'output'
OPTS = 'optimisers'


def forward(training_mode):
    def step(batch, state):
        if not batch: return
        model = state[MODEL] if training_mode or (VALID_MODEL not in state) else state[VALID_MODEL]
        if model.training != training_mode: #without the guard it's slow!
            model.train(training_mode)
        return {OUTPUT: state[LOSS](model(batch))}
    return step


def backward(dtype=None):
    def step(batch, state):
        state[MODEL].zero_grad()
        if not batch: return
        loss = state[OUTPUT][LOSS]
        if dtype is not None:
            loss = loss.to(dtype)
        loss.sum().backward()
    return step


def opt_steps(batch, state):
    if not batch: return
    return {OPTS: [opt_step(**opt) for opt in state[OPTS]]}


def update_ema(momentum, update_freq=1):
    n = iter(count())
    rho = momentum**update_freq
    def step(batch, state):
        if not batch: return
        if (next(n) % update_freq) != 0: return
        for v, ema_v in zip(state[MODEL].state_dict().values(), state[VALID_MODEL].state_dict().values()):
            if not v.dtype.is_floating_point: continue #skip things like num_batches_tracked.
            ema_v *= rho
            ema_v += (1-rho)*v
    return step


default_train_steps = (forward(training_mode=True), backward(), opt_steps)  # tcc test: no logging


def cov(X):
    X = X/np.sqrt(X.size(0) - 1)
    return X.t() @ X


def patches(data, patch_size=(3, 3), dtype=torch.float32):
    h, w = patch_size
    c = data.size(1)
    return data.unfold(2,h,1).unfold(3,w,1).transpose(1,3).reshape(-1, c, h, w).to(dtype)


def eigens(patches):
    n,c,h,w = patches.shape
    Σ = cov(patches.reshape(n, c*h*w))
    Λ, V = torch.linalg.eigh(Σ)  # tcc test: torch.symeig(Σ, eigenvectors=True)
    V = V * torch.sign(V.gather(0, V.abs().argmax(0, keepdim=True)))  # tcc test: tcc's signs
    return Λ.flip(0), V.t().reshape(c*h*w, c, h, w).flip(0)


def whitening_filter(Λ, V, eps=1e-2):
    filt = nn.Conv2d(3, 27, kernel_size=(3,3), padding=(1,1), bias=False)
    filt.weight.data = (V/torch.sqrt(Λ+eps)[:,None,None,None])
    filt.weight.requires_grad = False
    return filt

#####################
# dawn_utils.py
#####################


def residual(c, conv_bn, **kw):
    return {
        'in': Identity(),
        'res1': conv_bn(c, c, **kw),
        'res2': conv_bn(c, c, **kw),
        'add': (Add(), ['in', 'res2/relu']),
    }


def net(channels=None, weight=0.125, pool=nn.MaxPool2d(2), extra_layers=(), res_layers=('layer1', 'layer3'), conv_bn=None, prep=None):
    channels = channels or {'prep': 64, 'layer1': 128, 'layer2': 256, 'layer3': 512}
    n = {
        'input': (None, []),
        'prep': prep(3, channels['prep']),
        'layer1': conv_bn(channels['prep'], channels['layer1'], pool=pool),
        'layer2': conv_bn(channels['layer1'], channels['layer2'], pool=pool),
        'layer3': conv_bn(channels['layer2'], channels['layer3'], pool=pool),
        'pool': nn.MaxPool2d(4),
        'flatten': Flatten(),
        'linear': nn.Linear(channels['layer3'], 10, bias=False),
        'logits': Mul(weight),
    }
    for layer in res_layers:
        n[layer]['residual'] = residual(channels[layer], conv_bn)
    for layer in extra_layers:
        n[layer]['extra'] = conv_bn(channels[layer], channels[layer])
    return n

#####################
# new_dawn.py
#####################

batch_norm = partial(GhostBatchNorm, num_splits=16, weight_freeze=True)
relu = partial(nn.CELU, alpha=0.3)


def conv_bn(c_in, c_out, pool=None):
    block = {
        'conv': nn.Conv2d(c_in, c_out, kernel_size=3, stride=1, padding=1, bias=False),
        'bn': batch_norm(c_out),
        'relu': relu(),
    }
    if pool: block = {'conv': block['conv'], 'pool': pool, 'bn': block['bn'], 'relu': block['relu']}
    return block


def whitening_block(c_in, c_out, Λ=None, V=None, eps=1e-2):
    return {
        'whiten': whitening_filter(Λ, V, eps),
        'conv': nn.Conv2d(27, c_out, kernel_size=(1, 1), bias=False),
        'norm': batch_norm(c_out),
        'act':  relu(),
    }


class Run:
    """tcc test: main() from its whitening to its training loop (epochs,
    lr_schedule, batch_size, the optimisers, the EMA step created anew each
    epoch); `train(steps)` runs the first `steps` optimizer steps, and
    `set_state` replaces the initial weights of the model and of its EMA copy
    (the test rounds them to float32 first, so that tcc starts from the same
    values)."""

    def __init__(self, images, labels, dtype, channels, batch_size=512, whiten_images=10000,
                 shuffle=False):
        epochs, ema_epochs = 10, 2
        lr_schedule = PiecewiseLinear([0, epochs/5, epochs-ema_epochs], [0, 1.0, 0.1])
        self.epochs = epochs

        # tcc test: new_dawn's preprocessing (to dtype, normalise, NHWC ->
        # NCHW; the caller's images are NCHW already), without the pad
        T = lambda x: torch.tensor(x, dtype=dtype)
        data = normalise(images.to(dtype), mean=T(cifar10_mean).view(-1, 1, 1),
                         std=T(cifar10_std).view(-1, 1, 1))
        train_set = {'data': data, 'targets': labels}

        Λ, V = eigens(patches(train_set['data'][:whiten_images], dtype=dtype))
        self.eigenvalues = Λ
        model = Network(net(channels=channels, weight=1/16, conv_bn=conv_bn, prep=partial(whitening_block, Λ=Λ, V=V))).to(dtype)

        self.train_batches = train_batches = GPUBatches(batch_size=batch_size, dataset=train_set, shuffle=shuffle, drop_last=True)
        is_bias = group_by_key(('bias' in k, v) for k, v in trainable_params(model).items())
        opts = [
            SGD(is_bias[False], {'lr': (lambda step: lr_schedule(step/len(train_batches))/batch_size), 'weight_decay': Const(5e-4*batch_size), 'momentum': Const(0.9)}),
            SGD(is_bias[True], {'lr': (lambda step: lr_schedule(step/len(train_batches))*(64/batch_size)), 'weight_decay': Const(5e-4*batch_size/64), 'momentum': Const(0.9)})
        ]
        self.model = model
        self.loss = label_smoothing_loss(0.2)
        self.opts = opts
        self.steps_done = 0

    def set_state(self, state):
        self.model.load_state_dict(state)
        self.state = {MODEL: self.model, VALID_MODEL: copy.deepcopy(self.model),
                      LOSS: self.loss, OPTS: self.opts}

    def train(self, steps):
        state = self.state
        for epoch in range(self.epochs):
            if self.steps_done >= steps:
                return
            # tcc test: train_epoch's reduce(train_batches, state,
            # train_steps) over the first `steps` batches of the run
            left = steps - self.steps_done
            batches = [b for _, b in zip(range(left), self.train_batches)]
            reduce(batches, state, (*default_train_steps, update_ema(momentum=0.99, update_freq=5)))
            self.steps_done += len(batches)

    def named_state(self):
        """tcc test: every tensor the parity test compares, by the
        original's names: the model's state_dict, `v.<name>` (the
        optimiser's buffers) and `ema.<name>` (VALID_MODEL's state_dict)."""
        out = dict(self.model.state_dict())
        trainable = trainable_params(self.model)
        ids = {id(p): n for n, p in trainable.items()}
        for opt in self.state[OPTS]:
            for w, v in zip(opt['weights'], opt['opt_state']):
                out['v.' + ids[id(w)]] = v
        for k, v in self.state[VALID_MODEL].state_dict().items():
            out['ema.' + k] = v
        return {k: v.detach().clone() for k, v in out.items()}
