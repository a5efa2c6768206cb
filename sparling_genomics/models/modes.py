"""Running a module in eval mode for a while: measurements read a model as it predicts
(batch-norm statistics fixed, the sparse layer's running threshold not updated), then leave it
in the mode it was in, so a measurement in the middle of training does not switch training
off."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import nn


@contextmanager
def eval_mode(module: nn.Module) -> Iterator[nn.Module]:
    """``module`` in eval mode inside the ``with`` block; its train/eval mode as before after
    it, also when the block raises."""
    was_training = module.training
    module.eval()
    try:
        yield module
    finally:
        module.train(was_training)
