"""What each channel of an image or spectrogram task's motif layer fires on: the mean input
patch around its activations (an activation-triggered average, one receptive field wide), the
counterpart of a DNA channel's PWM. A run's report draws one small image a channel, named by
the symbol the channel was matched to (``report.figures.channel_glyphs_figure``).

Summed with numpy over the split's fixed batches in the evaluation pass that scores the run (no
library averages an input around a model's own motif-map positions); at most ``cap`` patches a
channel, the first met, so a dense map costs no more than a sparse one.
"""

from __future__ import annotations

import base64

import numpy as np


class GlyphAccumulator:
    """Sums of input patches centred on each channel's active positions.

    The input is ``(N, C, *spatial)`` and the motif map ``(N, K, *spatial / stride)`` (1-D or
    2-D); map position ``p`` is centred on input position ``p * stride`` (the stem's
    ``padding = kernel // 2``), and a patch is ``size`` wide along each spatial dimension.
    """

    def __init__(self, channels: int, size: int, stride: int = 1, cap: int = 2000) -> None:
        self.channels, self.size, self.stride, self.cap = channels, size, stride, cap
        self.sums: np.ndarray | None = None
        self.counts = np.zeros(channels, dtype=np.int64)
        self.fires = np.zeros(channels, dtype=np.int64)

    def add(self, x: np.ndarray, motifs: np.ndarray) -> None:
        """One batch: ``x`` the input, ``motifs`` the motif map (active where > 0)."""
        spatial = x.ndim - 2
        half = self.size // 2
        pad = [(0, 0), (0, 0)] + [(half, half)] * spatial
        padded = np.pad(x.astype(np.float32), pad)
        if self.sums is None:
            self.sums = np.zeros((self.channels, x.shape[1]) + (self.size,) * spatial)
        for channel in range(self.channels):
            on = motifs[:, channel] > 0
            self.fires[channel] += int(on.sum())
            need = max(0, self.cap - int(self.counts[channel]))
            flat = np.flatnonzero(on)[:need]
            for row in zip(*np.unravel_index(flat, on.shape), strict=True):
                # centre p * stride in x is p * stride + half in padded: the window starts at
                # p * stride
                window = tuple(slice(int(p) * self.stride, int(p) * self.stride + self.size)
                               for p in row[1:])  # fmt: skip
                self.sums[channel] += padded[(int(row[0]), slice(None)) + window]
            self.counts[channel] += len(flat)

    def result(self, channel_to_symbol: dict[str, str] | None = None) -> dict:
        """Per channel: activations counted, patches averaged, and the mean patch as 8-bit
        grey levels (min to max of that channel's mean; base64), with its shape."""
        shape = [] if self.sums is None else list(self.sums.shape[1:])
        out: dict = {"size": self.size, "shape": shape, "channels": {}}
        for channel in range(self.channels):
            entry: dict = {"fires": int(self.fires[channel]),
                           "averaged": int(self.counts[channel])}  # fmt: skip
            if channel_to_symbol and str(channel) in channel_to_symbol:
                entry["symbol"] = channel_to_symbol[str(channel)]
            if self.counts[channel] and self.sums is not None:
                mean = self.sums[channel] / self.counts[channel]
                low, high = float(mean.min()), float(mean.max())
                scaled = (mean - low) / (high - low) if high > low else np.zeros_like(mean)
                grey = np.round(scaled * 255).astype(np.uint8)
                entry |= {"low": round(low, 4), "high": round(high, 4),
                          "image": base64.b64encode(grey.tobytes()).decode("ascii")}  # fmt: skip
            out["channels"][str(channel)] = entry
        return out


def glyph_image(entry: dict, shape: list[int]) -> np.ndarray | None:
    """A channel's mean patch from :meth:`GlyphAccumulator.result`, as floats in [0, 1]
    (None: the channel never fired)."""
    if "image" not in entry:
        return None
    grey = np.frombuffer(base64.b64decode(entry["image"]), dtype=np.uint8)
    return grey.reshape(shape).astype(np.float32) / 255.0
