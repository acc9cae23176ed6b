#!/usr/bin/env python3
"""Writes a data set as the four NPY files of tcc's "npy" data format.

    python3 scripts/to_npy.py torchvision:CIFAR10 ROOT OUT_DIR    # needs torchvision
    python3 scripts/to_npy.py torchvision:MNIST ROOT OUT_DIR

or, from Python, with any pair of splits that have images and labels:

    from to_npy import save_split
    save_split(train_images, train_labels, test_images, test_labels, "out/")

Layout (docs/data.md): OUT_DIR/train_x.npy, train_y.npy, test_x.npy,
test_y.npy; images uint8 [N, C, H, W] (or [N, H, W] for one channel; float32
also accepted: then used as they are, not divided by 255), labels int64 [N]
in [0, classes). torchvision datasets hold CIFAR images channels-last
([N, H, W, C]) and MNIST ones as [N, H, W] tensors; both are converted.
"""
import os
import sys

import numpy as np


def as_nchw(images):
    """uint8 or float32 images as [N, C, H, W] (from [N, H, W], [N, C, H, W]
    or channels-last [N, H, W, C] with C in 1, 3, 4)."""
    x = np.asarray(images)
    if x.dtype not in (np.uint8, np.float32):
        raise ValueError("images must be uint8 or float32, got %s" % x.dtype)
    if x.ndim == 3:
        return x[:, None, :, :]
    if x.ndim != 4:
        raise ValueError("images must be [N, H, W] or [N, C, H, W], got %s" % (x.shape,))
    if x.shape[3] in (1, 3, 4) and x.shape[1] not in (1, 3, 4):
        return np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    return x


def as_labels(labels):
    y = np.asarray(labels).astype(np.int64).reshape(-1)
    if y.size and y.min() < 0:
        raise ValueError("labels must be >= 0")
    return y


def save_split(train_images, train_labels, test_images, test_labels, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name, images, labels in (("train", train_images, train_labels),
                                 ("test", test_images, test_labels)):
        x, y = as_nchw(images), as_labels(labels)
        if x.shape[0] != y.shape[0]:
            raise ValueError("%s: %d images but %d labels" % (name, x.shape[0], y.shape[0]))
        np.save(os.path.join(out_dir, name + "_x.npy"), np.ascontiguousarray(x))
        np.save(os.path.join(out_dir, name + "_y.npy"), y)


def torchvision_split(dataset):
    """(images, labels) of a torchvision dataset object: .data and .targets
    (numpy arrays, tensors or lists)."""
    data = dataset.data
    data = data.numpy() if hasattr(data, "numpy") else np.asarray(data)
    targets = dataset.targets
    targets = targets.numpy() if hasattr(targets, "numpy") else np.asarray(targets)
    return data, targets


def main(argv):
    if len(argv) != 4 or not argv[1].startswith("torchvision:"):
        print(__doc__)
        return 1
    import torchvision  # noqa: only for this command
    cls = getattr(torchvision.datasets, argv[1].split(":", 1)[1])
    train = torchvision_split(cls(argv[2], train=True, download=False))
    test = torchvision_split(cls(argv[2], train=False, download=False))
    save_split(*train, *test, argv[3])
    print("wrote %s/{train,test}_{x,y}.npy: %d + %d samples" % (argv[3], len(train[1]),
                                                                  len(test[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
