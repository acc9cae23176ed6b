"""Synthetic data of a token model with sequence targets, for
host_emulation.py and scripts/gpu_check.py: each sequence follows a fixed
rule (next = 3 * id + 1 modulo the ids after the padding row 0) with one id
in 5 drawn at random, its targets the next ids; a third of them end in a run
of padding ids (id 0, the embedding's padding_idx in the test models) whose
targets are ignore_index, and one target in 10 is ignore_index elsewhere
too. Fixed seed: the same files on every machine."""

import os

import numpy as np


def write_token_data(folder, t, vocab, ignore_index, n_train, n_test):
    """train_x/train_y/test_x/test_y.npy ([N, T] int32 ids, int64 targets,
    docs/data.md "Token ids") in `folder`."""
    rng = np.random.RandomState(0)
    os.makedirs(folder, exist_ok=True)
    for split, n in (("train", n_train), ("test", n_test)):
        seq = np.zeros((n, t + 1), np.int64)
        seq[:, 0] = rng.randint(1, vocab, n)
        for j in range(1, t + 1):
            rule = (3 * seq[:, j - 1] + 1) % (vocab - 1) + 1
            seq[:, j] = np.where(rng.rand(n) < 0.2, rng.randint(1, vocab, n), rule)
        x, y = seq[:, :t].copy(), seq[:, 1:].copy()
        padded = rng.rand(n) < 1 / 3
        starts = rng.randint(t // 2, t, n)
        for i in np.nonzero(padded)[0]:
            x[i, starts[i]:] = 0
            y[i, starts[i] - 1:] = ignore_index
        y[rng.rand(n, t) < 0.1] = ignore_index
        np.save(os.path.join(folder, split + "_x.npy"), x.astype(np.int32))
        np.save(os.path.join(folder, split + "_y.npy"), y)
