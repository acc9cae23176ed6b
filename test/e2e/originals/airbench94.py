"""A transcription of KellerJordan/cifar10-airbench legacy/airbench94.py, the
code examples/airbench94.json is named after, for compare_with_originals.py.

Copyright (c) 2024 Keller Jordan, MIT License (the original's LICENSE).

The original's code is kept as it is, in its order; every change is marked
`# tcc test:` and is one of these:
- it runs on the CPU in a dtype given by the caller (float64 for the parity
  test) instead of fp16 on a GPU, with BatchNorm in that dtype too;
- the data come from the caller (uint8 [N, 3, 32, 32] images and labels)
  instead of torchvision's CIFAR-10 download, and the network widths from
  `hyp`, which the caller may change (the test divides them by 8);
- total_train_steps is an argument (the caller runs a prefix of a run of that
  length), and `train` stops after `steps` optimizer steps;
- the eigenvectors' signs, which LAPACK leaves to the implementation, are made
  deterministic as tcc's runtime/trainer/InitWhitening.cpp makes them (each
  vector's largest-magnitude component positive);
- the LookaheadState is created after the whitening init (the original
  creates it before, so its slow copy of the frozen whitening weight is the
  random init, and the first lookahead update at step 5 blends
  decay = 0.95^5 (5/476)^3 = 9e-7 of it into the whitening filters for good:
  a change far below fp16's resolution, but 1.2% on the test's 20-step run);
- logging, timing and evaluation are left out (they change no state).
"""

import copy
from math import ceil

import torch
from torch import nn
import torch.nn.functional as F

hyp = {
    'opt': {
        'train_epochs': 9.9,
        'batch_size': 1024,
        'lr': 11.5,                 # learning rate per 1024 examples
        'momentum': 0.85,
        'weight_decay': 0.0153,     # weight decay per 1024 examples (decoupled from learning rate)
        'bias_scaler': 64.0,        # scales up learning rate (but not weight decay) for BatchNorm biases
        'label_smoothing': 0.2,
        'whiten_bias_epochs': 3,    # how many epochs to train the whitening layer bias before freezing
    },
    'aug': {
        'flip': True,
        'translate': 2,
    },
    'net': {
        'widths': {
            'block1': 64,
            'block2': 256,
            'block3': 256,
        },
        'batchnorm_momentum': 0.6,
        'scaling_factor': 1/9,
        'tta_level': 2,         # the level of test-time augmentation: 0=none, 1=mirror, 2=mirror+translate
    },
}

#############################################
#                DataLoader                 #
#############################################

CIFAR_MEAN = torch.tensor((0.4914, 0.4822, 0.4465))
CIFAR_STD = torch.tensor((0.2470, 0.2435, 0.2616))


def batch_flip_lr(inputs):
    flip_mask = (torch.rand(len(inputs), device=inputs.device) < 0.5).view(-1, 1, 1, 1)
    return torch.where(flip_mask, inputs.flip(-1), inputs)


def batch_crop(images, crop_size):
    r = (images.size(-1) - crop_size)//2
    shifts = torch.randint(-r, r+1, size=(len(images), 2), device=images.device)
    images_out = torch.empty((len(images), 3, crop_size, crop_size), device=images.device, dtype=images.dtype)
    # The two cropping methods in this if-else produce equivalent results, but the second is faster for r > 2.
    if r <= 2:
        for sy in range(-r, r+1):
            for sx in range(-r, r+1):
                mask = (shifts[:, 0] == sy) & (shifts[:, 1] == sx)
                images_out[mask] = images[mask, :, r+sy:r+sy+crop_size, r+sx:r+sx+crop_size]
    else:
        images_tmp = torch.empty((len(images), 3, crop_size, crop_size+2*r), device=images.device, dtype=images.dtype)
        for s in range(-r, r+1):
            mask = (shifts[:, 0] == s)
            images_tmp[mask] = images[mask, :, r+s:r+s+crop_size, :]
        for s in range(-r, r+1):
            mask = (shifts[:, 1] == s)
            images_out[mask] = images_tmp[mask, :, :, r+s:r+s+crop_size]
    return images_out


def normalize(images, dtype):
    # tcc test: T.Normalize(CIFAR_MEAN, CIFAR_STD) in `dtype`
    mean = CIFAR_MEAN.to(dtype).view(-1, 1, 1)
    std = CIFAR_STD.to(dtype).view(-1, 1, 1)
    return (images - mean) / std


class CifarLoader:

    # tcc test: images (uint8 [N, 3, 32, 32]) and labels from the caller;
    # the images in `dtype` instead of half.
    def __init__(self, images, labels, dtype, batch_size=500, aug=None, drop_last=None,
                 shuffle=None, train=True):
        self.images, self.labels = images, labels
        # It's faster to load+process uint8 data than to load preprocessed fp16 data
        self.images = self.images.to(dtype) / 255
        self.dtype = dtype

        self.normalize = lambda x: normalize(x, self.dtype)
        self.proc_images = {} # Saved results of image processing to be done on the first epoch
        self.epoch = 0

        self.aug = aug or {}
        for k in self.aug.keys():
            assert k in ['flip', 'translate'], 'Unrecognized key: %s' % k

        self.batch_size = batch_size
        self.drop_last = train if drop_last is None else drop_last
        self.shuffle = train if shuffle is None else shuffle

    def __len__(self):
        return len(self.images)//self.batch_size if self.drop_last else ceil(len(self.images)/self.batch_size)

    def __iter__(self):

        if self.epoch == 0:
            images = self.proc_images['norm'] = self.normalize(self.images)
            # Pre-flip images in order to do every-other epoch flipping scheme
            if self.aug.get('flip', False):
                images = self.proc_images['flip'] = batch_flip_lr(images)
            # Pre-pad images to save time when doing random translation
            pad = self.aug.get('translate', 0)
            if pad > 0:
                self.proc_images['pad'] = F.pad(images, (pad,)*4, 'reflect')

        if self.aug.get('translate', 0) > 0:
            images = batch_crop(self.proc_images['pad'], self.images.shape[-2])
        elif self.aug.get('flip', False):
            images = self.proc_images['flip']
        else:
            images = self.proc_images['norm']
        # Flip all images together every other epoch. This increases diversity relative to random flipping
        if self.aug.get('flip', False):
            if self.epoch % 2 == 1:
                images = images.flip(-1)

        self.epoch += 1

        indices = (torch.randperm if self.shuffle else torch.arange)(len(images), device=images.device)
        for i in range(len(self)):
            idxs = indices[i*self.batch_size:(i+1)*self.batch_size]
            yield (images[idxs], self.labels[idxs])

#############################################
#            Network Components             #
#############################################


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


class Mul(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x * self.scale


class BatchNorm(nn.BatchNorm2d):
    def __init__(self, num_features, momentum, eps=1e-12,
                 weight=False, bias=True):
        super().__init__(num_features, eps=eps, momentum=1-momentum)
        self.weight.requires_grad = weight
        self.bias.requires_grad = bias
        # Note that PyTorch already initializes the weights to one and bias to zero


class Conv(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size=3, padding='same', bias=False):
        super().__init__(in_channels, out_channels, kernel_size=kernel_size, padding=padding, bias=bias)

    def reset_parameters(self):
        super().reset_parameters()
        if self.bias is not None:
            self.bias.data.zero_()
        w = self.weight.data
        torch.nn.init.dirac_(w[:w.size(1)])


class ConvGroup(nn.Module):
    def __init__(self, channels_in, channels_out, batchnorm_momentum):
        super().__init__()
        self.conv1 = Conv(channels_in,  channels_out)
        self.pool = nn.MaxPool2d(2)
        self.norm1 = BatchNorm(channels_out, batchnorm_momentum)
        self.conv2 = Conv(channels_out, channels_out)
        self.norm2 = BatchNorm(channels_out, batchnorm_momentum)
        self.activ = nn.GELU()

    def forward(self, x):
        x = self.conv1(x)
        x = self.pool(x)
        x = self.norm1(x)
        x = self.activ(x)
        x = self.conv2(x)
        x = self.norm2(x)
        x = self.activ(x)
        return x

#############################################
#            Network Definition             #
#############################################


def make_net(dtype):
    widths = hyp['net']['widths']
    batchnorm_momentum = hyp['net']['batchnorm_momentum']
    whiten_kernel_size = 2
    whiten_width = 2 * 3 * whiten_kernel_size**2
    net = nn.Sequential(
        Conv(3, whiten_width, whiten_kernel_size, padding=0, bias=True),
        nn.GELU(),
        ConvGroup(whiten_width,     widths['block1'], batchnorm_momentum),
        ConvGroup(widths['block1'], widths['block2'], batchnorm_momentum),
        ConvGroup(widths['block2'], widths['block3'], batchnorm_momentum),
        nn.MaxPool2d(3),
        Flatten(),
        nn.Linear(widths['block3'], 10, bias=False),
        Mul(hyp['net']['scaling_factor']),
    )
    net[0].weight.requires_grad = False
    # tcc test: net.to(dtype) on the CPU (the original: half, cuda,
    # channels_last, BatchNorm back to float)
    net = net.to(dtype)
    return net

#############################################
#       Whitening Conv Initialization       #
#############################################


def get_patches(x, patch_shape):
    c, (h, w) = x.shape[1], patch_shape
    # tcc test: the patches keep x's dtype (the original: .float())
    return x.unfold(2,h,1).unfold(3,w,1).transpose(1,3).reshape(-1,c,h,w)


def get_whitening_parameters(patches):
    n,c,h,w = patches.shape
    patches_flat = patches.view(n, -1)
    est_patch_covariance = (patches_flat.T @ patches_flat) / n
    eigenvalues, eigenvectors = torch.linalg.eigh(est_patch_covariance, UPLO='U')
    # tcc test: each eigenvector's sign as tcc's (largest component positive)
    eigenvectors = eigenvectors * torch.sign(
        eigenvectors.gather(0, eigenvectors.abs().argmax(0, keepdim=True)))
    return eigenvalues.flip(0).view(-1, 1, 1, 1), eigenvectors.T.reshape(c*h*w,c,h,w).flip(0)


def init_whitening_conv(layer, train_set, eps=5e-4):
    patches = get_patches(train_set, patch_shape=layer.weight.data.shape[2:])
    eigenvalues, eigenvectors = get_whitening_parameters(patches)
    eigenvectors_scaled = eigenvectors / torch.sqrt(eigenvalues + eps)
    layer.weight.data[:] = torch.cat((eigenvectors_scaled, -eigenvectors_scaled))
    return eigenvalues.flatten()  # tcc test: for the test's conditioning check

############################################
#                Lookahead                 #
############################################


class LookaheadState:
    def __init__(self, net):
        self.net_ema = {k: v.clone() for k, v in net.state_dict().items()}

    def update(self, net, decay):
        for ema_param, net_param in zip(self.net_ema.values(), net.state_dict().values()):
            # tcc test: the dtypes of a CPU run (the original: half, float)
            if net_param.dtype in (torch.half, torch.float, torch.double):
                ema_param.lerp_(net_param, 1-decay)
                net_param.copy_(ema_param)

############################################
#                Training                  #
############################################


class Run:
    """tcc test: main() up to its training loop, then `train(steps)` runs
    the loop's first `steps` optimizer steps. `set_state` replaces the
    initial weights (the test rounds them to float32 first, so that tcc
    starts from the same values); it is called before the first step."""

    def __init__(self, images, labels, dtype, total_train_steps, aug=None, shuffle=False,
                 whiten_images=5000):
        batch_size = hyp['opt']['batch_size']
        epochs = hyp['opt']['train_epochs']
        momentum = hyp['opt']['momentum']
        # Assuming gradients are constant in time, for Nesterov momentum, the below ratio is how much
        # larger the default steps will be than the underlying per-example gradients. We divide the
        # learning rate by this ratio in order to ensure steps are the same scale as gradients, regardless
        # of the choice of momentum.
        kilostep_scale = 1024 * (1 + 1 / (1 - momentum))
        lr = hyp['opt']['lr'] / kilostep_scale # un-decoupled learning rate for PyTorch SGD
        wd = hyp['opt']['weight_decay'] * batch_size / kilostep_scale
        lr_biases = lr * hyp['opt']['bias_scaler']

        self.loss_fn = nn.CrossEntropyLoss(label_smoothing=hyp['opt']['label_smoothing'], reduction='none')
        self.train_loader = CifarLoader(images, labels, dtype, batch_size=batch_size, aug=aug,
                                        shuffle=shuffle)
        # tcc test: the caller's run length
        self.total_train_steps = total_train_steps

        self.model = model = make_net(dtype)
        self.current_steps = 0

        norm_biases = [p for k, p in model.named_parameters() if 'norm' in k and p.requires_grad]
        other_params = [p for k, p in model.named_parameters() if 'norm' not in k and p.requires_grad]
        param_configs = [dict(params=norm_biases, lr=lr_biases, weight_decay=wd/lr_biases),
                         dict(params=other_params, lr=lr, weight_decay=wd/lr)]
        self.optimizer = optimizer = torch.optim.SGD(param_configs, momentum=momentum, nesterov=True)

        def get_lr(step):
            warmup_steps = int(total_train_steps * 0.23)
            warmdown_steps = total_train_steps - warmup_steps
            if step < warmup_steps:
                frac = step / warmup_steps
                return 0.2 * (1 - frac) + 1.0 * frac
            else:
                frac = (step - warmup_steps) / warmdown_steps
                return 1.0 * (1 - frac) + 0.07 * frac
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, get_lr)

        self.alpha_schedule = 0.95**5 * (torch.arange(total_train_steps+1) / total_train_steps)**3

        # Initialize the whitening layer using training images
        train_images = self.train_loader.normalize(self.train_loader.images[:whiten_images])
        self.eigenvalues = init_whitening_conv(model[0], train_images)

    def set_state(self, state):
        self.model.load_state_dict(state)
        self.lookahead_state = LookaheadState(self.model)

    def train(self, steps):
        model, optimizer, scheduler = self.model, self.optimizer, self.scheduler
        lookahead_state, train_loader = self.lookahead_state, self.train_loader
        total_train_steps = self.total_train_steps
        epochs = hyp['opt']['train_epochs']
        for epoch in range(ceil(epochs)):

            model[0].bias.requires_grad = (epoch < hyp['opt']['whiten_bias_epochs'])

            model.train()
            for inputs, labels in train_loader:

                outputs = model(inputs)
                loss = self.loss_fn(outputs, labels).sum()
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                scheduler.step()

                self.current_steps += 1

                if self.current_steps % 5 == 0:
                    lookahead_state.update(model, decay=self.alpha_schedule[self.current_steps].item())

                if self.current_steps >= total_train_steps:
                    if lookahead_state is not None:
                        lookahead_state.update(model, decay=1.0)
                    break

                if self.current_steps >= steps:  # tcc test: stop after `steps`
                    return
            if self.current_steps >= total_train_steps:  # tcc test: the run is over
                return

    def state(self):
        """tcc test: every tensor the parity test compares, by the
        original's names: the state_dict, `momentum_buffer.<name>` and
        `lookahead.<name>`."""
        out = dict(self.model.state_dict())
        names = {id(p): n for n, p in self.model.named_parameters()}
        for p, st in self.optimizer.state.items():
            if st.get('momentum_buffer') is not None:
                out['momentum_buffer.' + names[id(p)]] = st['momentum_buffer']
        for k, v in self.lookahead_state.net_ema.items():
            out['lookahead.' + k] = v
        return {k: v.detach().clone() for k, v in out.items()}
