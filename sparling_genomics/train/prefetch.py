"""Training batches made one ahead on a background thread."""

from __future__ import annotations

import contextlib
from concurrent.futures import Future, ThreadPoolExecutor


class BatchPrefetcher:
    """Training batches, the next one made on a background thread while this one trains.

    Batches are a pure function of (seed, index), so making them ahead changes nothing but
    the wall time: the generators (numpy, scipy FFTs, h5py reads) release the GIL while torch
    computes. One batch ahead, one thread: a task's ``train_batch`` is never called from two
    threads at once. ``enabled=False`` makes each batch when asked.
    """

    def __init__(self, task, batch_size: int, *, enabled: bool = True) -> None:
        self.task = task
        self.batch_size = batch_size
        self.pool = ThreadPoolExecutor(max_workers=1) if enabled else None
        self.pending: tuple[int, Future] | None = None

    def get(self, index: int):
        if self.pool is None:
            return self.task.train_batch(index, self.batch_size)
        if self.pending is not None and self.pending[0] == index:
            batch = self.pending[1].result()
        else:
            self._drop_pending()
            batch = self.task.train_batch(index, self.batch_size)
        self.pending = (
            index + 1,
            self.pool.submit(self.task.train_batch, index + 1, self.batch_size),
        )
        return batch

    def _drop_pending(self) -> None:
        if self.pending is not None:
            self.pending[1].cancel()
            # Wait, so that train_batch never runs twice at once; a batch nobody asked for
            # has no error worth raising.
            with contextlib.suppress(Exception):
                self.pending[1].result()
            self.pending = None

    def close(self) -> None:
        if self.pool is not None:
            self._drop_pending()
            self.pool.shutdown(wait=True)
