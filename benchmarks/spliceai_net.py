"""SpliceAI's network in PyTorch: the published Keras models and OpenSpliceAI's checkpoints.

The peers benchmark (``benchmarks/peers.py``) scores SpliceAI off the shelf and OpenSpliceAI
retrained on exactly the positions our ``evaluate`` scores, in the project's own environment
and with one batched forward pass per run of windows. Why hand-written rather than each
tool's own predictor: SpliceAI's Keras code needs TensorFlow, which the issue keeps out of the
project's lock (it lives in ``build/peers/.venv``, ``scripts/setup_peers.sh``), and neither
tool's predictor takes a set of positions (SpliceAI scores a VCF, OpenSpliceAI a FASTA).

- :class:`KerasGraph` runs a Keras functional model saved as HDF5 (``model_config`` and
  ``model_weights``, the spliceai wheel's ``spliceai{1..5}.h5``) by walking its layer graph:
  Conv1D, BatchNormalization, Activation, Add and Cropping1D, the layers SpliceAI is built of,
  with Keras's semantics ('same' padding, inference-mode batch norm, epsilon from the file).
  Checked against Keras's own outputs to 1e-5: a small SpliceAI-shaped model stored with its
  Keras outputs (``tests/data/spliceai_keras_tiny.h5``, made by
  ``scripts/peers/keras_reference.py``), and the five real models in every peers run.
- :class:`SpliceAINet` is OpenSpliceAI's module layout (its ``state_dict`` keys), so its
  ``model_*.pt`` checkpoints load as saved; OpenSpliceAI's residual units use LeakyReLU(0.1)
  where SpliceAI's use ReLU.

Inputs are channels-first one-hot ``(N, 4, L)`` in A, C, G, T order (both tools' order and
ours), N all zeros; outputs ``(N, 3, L - context)`` probabilities of (neither, acceptor,
donor): :data:`PEER_CLASSES`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sparling_genomics.errors import InputError

#: The peers' output channels, in order.
PEER_CLASSES = ("none", "acceptor", "donor")

#: SpliceAI's residual-unit kernel widths W and dilations AR for each flank (total context).
ARCHITECTURES: dict[int, tuple[list[int], list[int]]] = {
    80: ([11] * 4, [1] * 4),
    400: ([11] * 8, [1] * 4 + [4] * 4),
    2000: ([11] * 8 + [21] * 4, [1] * 4 + [4] * 4 + [10] * 4),
    10000: ([11] * 8 + [21] * 4 + [41] * 4, [1] * 4 + [4] * 4 + [10] * 4 + [25] * 4),
}


def context_of(widths: list[int], dilations: list[int]) -> int:
    """Total context (both sides) of residual units with these widths and dilations."""
    return int(2 * sum(d * (w - 1) for w, d in zip(widths, dilations)))


class KerasGraph(nn.Module):
    """A Keras functional model from its HDF5 file, run layer by layer in PyTorch."""

    SUPPORTED = ("InputLayer", "Conv1D", "BatchNormalization", "Activation", "Add", "Cropping1D")

    def __init__(self, path: Path) -> None:
        import h5py

        super().__init__()
        self.path = Path(path)
        try:
            with h5py.File(self.path, "r") as h5:
                config = json.loads(_text(h5.attrs["model_config"]))
                group = h5.get("model_weights", h5)
                weights = {name: _layer_weights(group[name]) for name in group
                           if len(group[name].attrs.get("weight_names", []))}  # fmt: skip
        except (OSError, KeyError, ValueError) as exc:
            raise InputError(f"{self.path}: not a Keras HDF5 model ({exc})"[:300]) from None
        body = config["config"]
        self.layers = {layer["name"]: layer for layer in body["layers"]}
        odd = sorted({lay["class_name"] for lay in body["layers"]} - set(self.SUPPORTED))
        if odd:
            raise InputError(f"{self.path}: Keras layer types {', '.join(odd)} are not supported")
        self.inputs = [entry[0] for entry in body["input_layers"]]
        self.output = body["output_layers"][0][0]
        self.params = nn.ParameterDict()
        for name, arrays in weights.items():
            for key, value in arrays.items():
                self.params[f"{name}__{key}"] = nn.Parameter(value, requires_grad=False)
        self.context = self._context()
        self.order = self._order()  # the layers in an order that runs each after its inputs
        self.readers: dict[str, int] = {}  # how many layers read each layer's output
        for name in self.order:
            for i in self._inbound(name):
                self.readers[i] = self.readers.get(i, 0) + 1

    def _inbound(self, name: str) -> list[str]:
        nodes = self.layers[name]["inbound_nodes"]
        return [entry[0] for entry in nodes[0]] if nodes else []

    def _context(self) -> int:
        """Input positions the model trims (its Cropping1D layers, both sides)."""
        crop = [sum(_pair(lay["config"]["cropping"])) for lay in self.layers.values()
                if lay["class_name"] == "Cropping1D"]  # fmt: skip
        return int(sum(crop))

    def _order(self) -> list[str]:
        """The layers the output needs, each after its inputs (depth-first, no recursion)."""
        order, seen, stack = [], set(), [(self.output, False)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                order.append(name)
            elif name not in seen:
                seen.add(name)
                stack.append((name, True))
                stack += [(i, False) for i in self._inbound(name) if i not in seen]
        return order

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(N, 4, L)`` one-hot -> ``(N, C, L - context)`` outputs (channels first). Each
        layer's output is dropped once its last reader has run (a 10k-context row of 35,000
        bases holds a few of SpliceAI's 125 layer outputs at a time, not all of them)."""
        readers = dict(self.readers)
        values: dict[str, torch.Tensor] = {}
        for name in self.order:
            if name in self.inputs:
                values[name] = x
                continue
            inbound = self._inbound(name)
            values[name] = self._run_layer(name, [values[i] for i in inbound])
            for i in inbound:
                readers[i] -= 1
                if readers[i] == 0:
                    del values[i]
        return values[self.output]

    def _weight(self, name: str, key: str) -> torch.Tensor:
        return self.params[f"{name}__{key}"]

    def _run_layer(self, name: str, inputs: list[torch.Tensor]) -> torch.Tensor:
        layer = self.layers[name]
        kind, cfg = layer["class_name"], layer["config"]
        x = inputs[0]
        if kind == "Conv1D":
            kernel = self._weight(name, "kernel").permute(2, 1, 0)  # (k, in, out) -> (out, in, k)
            dilation = _pair(cfg.get("dilation_rate", 1))[0]
            width = kernel.shape[-1]
            if cfg.get("padding", "valid") == "same":
                total = dilation * (width - 1)
                x = F.pad(x, (total // 2, total - total // 2))
            bias = self._weight(name, "bias") if cfg.get("use_bias", True) else None
            x = F.conv1d(x, kernel, bias, dilation=dilation)
            return _activation(x, cfg.get("activation", "linear"), name)
        if kind == "BatchNormalization":
            mean = self._weight(name, "moving_mean")[None, :, None]
            var = self._weight(name, "moving_variance")[None, :, None]
            x = (x - mean) / torch.sqrt(var + float(cfg.get("epsilon", 1e-3)))
            if cfg.get("scale", True):
                x = x * self._weight(name, "gamma")[None, :, None]
            if cfg.get("center", True):
                x = x + self._weight(name, "beta")[None, :, None]
            return x
        if kind == "Activation":
            return _activation(x, cfg["activation"], name)
        if kind == "Add":
            out = inputs[0]
            for other in inputs[1:]:
                out = out + other
            return out
        if kind == "Cropping1D":
            left, right = _pair(cfg["cropping"])
            return x[:, :, left : x.shape[-1] - right]
        raise InputError(f"{self.path}: layer {name} ({kind}) is not supported")


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _pair(value) -> list[int]:
    """A Keras size (``3``, ``[3]`` or ``[3, 3]``) as two ints."""
    values = [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    return values * 2 if len(values) == 1 else values


def _layer_weights(group) -> dict[str, torch.Tensor]:
    """A Keras layer's weights by short name (``kernel``, ``bias``, ``gamma``...)."""
    out = {}
    for full in group.attrs["weight_names"]:
        full = _text(full)
        short = full.rsplit("/", 1)[-1].split(":")[0]
        out[short] = torch.from_numpy(np.asarray(group[full], dtype=np.float32))
    return out


def _activation(x: torch.Tensor, name: str, layer: str) -> torch.Tensor:
    if name == "linear":
        return x
    if name == "relu":
        return torch.relu(x)
    if name == "softmax":
        return torch.softmax(x, dim=1)
    raise InputError(f"layer {layer}: activation {name!r} is not supported")


class ResidualUnit(nn.Module):
    """OpenSpliceAI's pre-activation residual unit: (BN, activation, conv) twice, plus input."""

    def __init__(self, channels: int, width: int, dilation: int, leak: float) -> None:
        super().__init__()
        pad = (width - 1) * dilation // 2
        self.batchnorm1 = nn.BatchNorm1d(channels)
        self.batchnorm2 = nn.BatchNorm1d(channels)
        self.conv1 = nn.Conv1d(channels, channels, width, dilation=dilation, padding=pad)
        self.conv2 = nn.Conv1d(channels, channels, width, dilation=dilation, padding=pad)
        self.leak = leak

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv1(F.leaky_relu(self.batchnorm1(x), self.leak))
        return x + self.conv2(F.leaky_relu(self.batchnorm2(out), self.leak))


class Skip(nn.Module):
    """A 1x1 convolution added to the skip sum."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 1)


class SpliceAINet(nn.Module):
    """SpliceAI's dilated residual network with OpenSpliceAI's parameter names."""

    def __init__(self, flank: int, channels: int = 32, leak: float = 0.1) -> None:
        super().__init__()
        if flank not in ARCHITECTURES:
            raise InputError(f"flank {flank} is not one of {sorted(ARCHITECTURES)}")
        widths, dilations = ARCHITECTURES[flank]
        self.context = context_of(widths, dilations)
        self.initial_conv = nn.Conv1d(4, channels, 1)
        self.initial_skip = Skip(channels)
        units: list[nn.Module] = []
        for i, (w, d) in enumerate(zip(widths, dilations)):
            units.append(ResidualUnit(channels, w, d, leak))
            if (i + 1) % 4 == 0:
                units.append(Skip(channels))
        self.residual_units = nn.ModuleList(units)
        self.final_conv = nn.Conv1d(channels, 3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.initial_conv(x)
        skip = self.initial_skip.conv(x)
        for unit in self.residual_units:
            if isinstance(unit, Skip):
                skip = skip + unit.conv(x)
            else:
                x = unit(x)
        half = self.context // 2
        skip = skip[:, :, half : skip.shape[-1] - half]
        return torch.softmax(self.final_conv(skip), dim=1)


def load_openspliceai(path: Path, flank: int) -> SpliceAINet:
    """An OpenSpliceAI ``model_*.pt`` checkpoint (a state dict) in eval mode."""
    net = SpliceAINet(flank)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        net.load_state_dict(state)
    except (OSError, RuntimeError, KeyError) as exc:
        raise InputError(
            f"{path}: not an OpenSpliceAI flank-{flank} checkpoint ({exc})"[:300]
        ) from None
    return net.eval()


class Ensemble(nn.Module):
    """The mean of several models' probabilities (SpliceAI's five)."""

    def __init__(self, models: list[nn.Module]) -> None:
        super().__init__()
        self.members = nn.ModuleList(models)
        contexts = {int(m.context) for m in models}
        if len(contexts) != 1:
            raise InputError(f"ensemble members differ in context: {sorted(contexts)}")
        self.context = contexts.pop()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.members[0](x)
        for member in self.members[1:]:
            out = out + member(x)
        return out / len(self.members)


def spliceai_models_dir(python: Path) -> Path:
    """The ``spliceai/models`` folder of the package installed for ``python`` (the peers'
    venv): found without importing it, since it imports Keras."""
    for lib in (Path(python).parent.parent / "lib").glob("python3*/site-packages"):
        folder = lib / "spliceai" / "models"
        if folder.is_dir():
            return folder
    raise InputError(
        f"{python}: no spliceai package beside it (run `bash scripts/setup_peers.sh`)"
    )


def load_spliceai(models_dir: Path) -> Ensemble:
    """SpliceAI's five published models (``spliceai1.h5`` .. ``spliceai5.h5``) as one ensemble."""
    paths = [Path(models_dir) / f"spliceai{i}.h5" for i in range(1, 6)]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise InputError(f"{missing[0]}: SpliceAI model file not found")
    return Ensemble([KerasGraph(p) for p in paths]).eval()
