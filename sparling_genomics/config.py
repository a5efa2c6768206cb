"""Run configuration: per-task defaults, presets, user overrides, validation.

A config is a nested dict. It is built as ``defaults[task]`` <- ``presets[task][preset]``
<- user file <- command-line overrides; every key a user sets must exist in the defaults
and keep its type, so typos and wrong types fail before anything runs. The resolved config
(every default written out) is saved as ``RUN/config.yaml``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError

PLANTED_MOTIFS = [
    "MA0573.2",  # ATHB-9   (HD-ZIP)   GTAATGATTACTCGC
    "MA1350.1",  # BZIP42   (bZIP)     TGCTGACGTGGC
    "MA1313.2",  # WRKY7    (W-box)    CGTTGACTTTT
    "MA1285.2",  # TCP9     (TCP)      GTGGGTCCCAC
    "MA2429.1",  # SPL13D   (SBP)      AGCGGTAGTACCGCT
    "MA0571.2",  # ANT      (AP2)      GCACAGTTCCCGAGGT
]

#: The trainer's start-of-run guards (``train`` keys), off unless a task turns them on.
START_GUARDS: dict[str, Any] = {
    "warmup_samples": 0,  # linear learning-rate ramp over an initialisation's first samples
    # Give up an initialisation that has not learnt the task (best validation accuracy below
    # plateau_accuracy) after this many samples, before any annealing step, and start again
    # from a new one, at most plateau_max_restarts times (0: never).
    "plateau_restart_samples": 0,
    "plateau_accuracy": 0.05,
    "plateau_max_restarts": 2,
}

DEFAULTS: dict[str, dict[str, Any]] = {
    "planted": {
        "task": "planted",
        "seed": 0,
        "device": "auto",
        "data": {
            "motifs": PLANTED_MOTIFS,
            "jaspar_release": "JASPAR2024",
            "background": "genome",
            "min_relative_score": 0.85,
            "length": 200,
            "min_instances": 1,
            "max_instances": 4,
            "min_gap": 6,
            "cell_pad": 2,
            "val_size": 1000,
            "test_size": 2000,
        },
        "model": {
            "motif_channels": 0,  # 0: one channel per planted motif
            "hidden": 32,
            "first_kernel": 15,
            "residual_units": 2,
            "unit_kernel": 3,
            "reverse_complement": True,
            "head_hidden": 64,
            "head_pool": 4,
            "head_layers": 2,
            "head_recurrent": False,
            "head_saturate": True,
            "sparse": {
                "affine": False,
                "per_channel": True,
                "momentum": 0.1,
                "min_hits": 20.0,
                "peak_window": 5,  # one activation per site; 0 = the paper's layer
                "peak_below": 0.01,  # ... once the density is at most this
            },
        },
        "train": {
            "batch_size": 64,
            "lr": 0.002,
            "max_samples": 3_000_000,
            "max_seconds": 840.0,
            "eval_every": 5_000,
            "eval_batch_size": 500,
            "final_samples": 100_000,
            "final_lr_scale": 0.3,
            "final_lr_schedule": "constant",
            **START_GUARDS,
            "log_motif_metrics": True,  # FNE/FPE/CE at every evaluation (the report's figure)
            "checkpoint_every_seconds": 120.0,
            "threads": 0,  # 0: torch's default
            # Make the next training batch on a thread while this one trains. Off where not
            # measured: with two torch threads the extra thread can slow a step (audio: 86 -> 73
            # samples/s); on for digit_circle (+7%) and audio (one torch thread: +19%).
            "prefetch": False,
        },
        "annealing": {
            "enabled": True,
            "start_density": 0.5,
            "stop_density": "auto",  # 'auto': the task's true motif density
            "multiplier": 0.75,
            "initial_bar": 1.0,
            "bar_decay_per_sample": 1e-6,
        },
    },
    "splicing": {
        "task": "splicing",
        "seed": 0,
        "device": "auto",
        "data": {
            "dataset": "",  # HDF5 from `sparling-genomics dataset`
            "val_windows": 400,  # validation windows scored at each evaluation (0: all)
            "test_windows": 0,  # 0: the whole test block
        },
        "model": {
            "sparse_layer": True,  # false: the non-sparse baseline (same network otherwise)
            "motif_channels": 32,
            # 32, not 64: a genome scan costs ~5x less (chr1, both strands: ~30 s vs ~150 s
            # of g on 2 cores) and training gets ~1.4x more samples into its budget.
            "hidden": 32,
            "first_kernel": 11,
            "residual_units": 2,
            "unit_kernel": 11,  # receptive field of g: 11 + 2 * 10 = 31 nt
            "head_channels": 32,
            "head_kernel": 11,
            "head_dilations": [1, 1, 1, 1, 4, 4, 4, 4],  # SpliceAI-400
            "sparse": {
                "affine": False,
                "per_channel": True,
                "momentum": 0.1,
                "min_hits": 20.0,
                "peak_window": 5,
                "peak_below": 0.01,
            },
        },
        "train": {
            "batch_size": 16,
            "lr": 0.002,
            "max_samples": 10_000_000,
            "max_seconds": 1620.0,  # 27 min of training: the whole run fits in 30 on 2 cores
            "eval_every": 800,
            "eval_batch_size": 64,
            "final_samples": 28_000,
            "final_lr_scale": 0.3,
            "final_lr_schedule": "cosine",  # or 'constant'
            **START_GUARDS,
            # The cosine's length for a baseline (no sparse layer, no annealing): about the
            # samples its budget allows on 2 cores, so it too ends at a low learning rate.
            "baseline_samples": 56_000,
            "checkpoint_every_seconds": 120.0,
            "threads": 0,
            "prefetch": False,
        },
        "annealing": {
            "enabled": True,
            "start_density": 0.1,
            # Final density = the last 0.1 * 0.75**k at or above this: 0.1 * 0.75**14 = 0.178%
            # (the Sparling paper's splicing target was 0.18%).
            "stop_density": 0.0017,
            "multiplier": 0.75,
            "initial_bar": 1.0,
            "bar_decay_per_sample": 4e-5,
        },
    },
    "digit_circle": {
        "task": "digit_circle",
        "seed": 0,
        "device": "auto",
        "data": {
            "min_digits": 3,
            "max_digits": 6,
            "noise_before": 0.125,
            "noise_after": 0.05,
            "cell_pad": 2,
            "val_size": 500,
            "test_size": 1000,
        },
        "model": {
            # Two spare channels: with exactly 10, a digit split over two channels early in
            # annealing leaves another digit without one (the first 30-minute benchmark: "0"
            # on two channels, "9" on none, FNE 8%, perturbation consistency 73%). CE stays
            # one-to-one (Hungarian), so a split still counts as confusion. The stop density
            # counts all 12 (``DigitCircleTask.true_density``).
            "motif_channels": 12,
            "hidden": 16,
            # Stride 2: one motif-map position per 2 x 2 pixels (see MotifModel2D); the
            # receptive field stays 5 + 3 * 2 * 2 = 17 px, the paper's.
            "stride": 2,
            "first_kernel": 5,
            "residual_units": 3,
            "unit_kernel": 3,
            "head_hidden": 64,
            "head_angles": 96,
            "head_layers": 2,
            "head_recurrent": False,
            "sparse": {
                "affine": True,  # the paper's DigitCircle layer has an affine BatchNorm
                "per_channel": True,
                "momentum": 0.1,
                "min_hits": 20.0,
                "peak_window": 3,  # map positions: +-6 px at stride 2
                "peak_below": 0.001,
            },
        },
        "train": {
            "batch_size": 16,
            "lr": 0.002,
            "max_samples": 2_000_000,
            "max_seconds": 1620.0,
            # Frequent, noisy-tolerant evaluations: annealing may step every 2,000 samples and
            # the bar falls 1% per evaluation (the paper: every 20,000 samples, 0.2%), so the
            # 27 steps to the true density fit a 30-minute CPU budget.
            "eval_every": 2_000,
            "eval_batch_size": 250,
            # What the budget leaves after annealing, with the learning rate decayed along a
            # half cosine (tried because at a constant 6e-4 validation accuracy swung between
            # 0.51 and 0.67; it did not lift the plateau: E2EE 10.7% against 10.2%, see
            # docs/paper-domains.md).
            "final_samples": 64_000,
            "final_lr_scale": 0.3,
            "final_lr_schedule": "cosine",
            # Whether a seed leaves the dense task's plateau (training loss ~2.3: the right
            # number of digits, not which) within ~20k samples is down to chance: seed 2 never
            # did in 200k samples without the ramp. Probes of 16-24k samples, seeds 0-2: one
            # in three still on it with or without a 250-step learning-rate ramp (the seed
            # moves: 2 without, 1 with) and with a 0.1 start density. With the ramp all three
            # learnt by 30k in full runs; a run that has not learnt by 40k samples starts again
            # from a new initialisation (docs/paper-domains.md).
            **START_GUARDS,
            "warmup_samples": 4_000,
            "plateau_restart_samples": 40_000,
            "log_motif_metrics": True,
            "checkpoint_every_seconds": 120.0,
            "threads": 0,
            "prefetch": True,
        },
        "annealing": {
            "enabled": True,
            "start_density": 0.5,
            "stop_density": "auto",  # one pixel per digit: 4.5e-5 (the paper's 4.49e-5)
            "multiplier": 0.75,
            "initial_bar": 1.0,
            "bar_decay_per_sample": 5e-6,
        },
    },
    "latex_ocr": {
        "task": "latex_ocr",
        "seed": 0,
        "device": "auto",
        "data": {
            # The cpu size: the paper's expressions at half scale (its 120 x 360 px, 200 dpi
            # is the paper preset).
            "height": 60,
            "width": 180,
            "dpi": 100.0,
            "fontsize": 10.0,
            "min_tokens": 1,
            "max_tokens": 30,
            # Length curriculum (0: off): the longest training expression grows from
            # curriculum_start_tokens to max_tokens over the first curriculum_samples samples.
            "curriculum_samples": 0,
            "curriculum_start_tokens": 4,
            "noise": 0.25,
            "box_pad": 2,
            "val_size": 500,
            "test_size": 1000,
        },
        "model": {
            "motif_channels": 32,
            "hidden": 16,
            "stride": 2,
            "first_kernel": 5,
            "residual_units": 3,
            "unit_kernel": 5,  # receptive field 5 + 3 * 4 * 2 = 29 px (paper: 65 at 2x scale)
            "head_pool": 4,
            "head_hidden": 64,
            "head_heads": 4,
            "head_encoder_layers": 1,
            "head_decoder_layers": 2,
            "head_norm_first": False,  # pre-LayerNorm transformer layers
            "sparse": {
                "affine": False,
                "per_channel": True,
                "momentum": 0.1,
                "min_hits": 20.0,
                "peak_window": 2,
                "peak_below": 0.001,
            },
        },
        "train": {
            "batch_size": 16,
            "lr": 0.002,
            "max_samples": 2_000_000,
            "max_seconds": 1620.0,
            "eval_every": 4_000,
            "eval_batch_size": 250,
            "final_samples": 40_000,
            "final_lr_scale": 0.3,
            "final_lr_schedule": "constant",
            **START_GUARDS,
            "log_motif_metrics": True,
            "checkpoint_every_seconds": 120.0,
            "threads": 0,
            "prefetch": False,
        },
        "annealing": {
            "enabled": True,
            "start_density": 0.5,
            "stop_density": "auto",
            "multiplier": 0.75,
            "initial_bar": 1.0,
            "bar_decay_per_sample": 5e-6,  # as digit_circle
        },
    },
    "audio_sequence": {
        "task": "audio_sequence",
        "seed": 0,
        "device": "auto",
        "data": {
            "corpus": "",  # AudioMNIST directory, or `sparling-genomics audio-corpus --out`
            "seconds": 15.0,
            "min_clips": 5,
            "max_clips": 10,
            "noise": 2.0**-10,
            "val_size": 500,
            "test_size": 1000,
        },
        "model": {
            "motif_channels": 10,
            "hidden": 32,
            "first_kernel": 9,
            "residual_units": 3,
            "unit_kernel": 9,  # receptive field 9 + 3 * 8 = 33 frames, the paper's
            "head_hidden": 64,
            "head_pool": 4,
            "head_layers": 2,
            # No GRU: digits come in time order, so convolutions over frames read them; the
            # GRU cost ~40% of a step on 2 cores.
            "head_recurrent": False,
            "sparse": {
                "affine": False,
                "per_channel": True,
                "momentum": 0.1,
                "min_hits": 20.0,
                "peak_window": 5,
                "peak_below": 0.01,
            },
        },
        "train": {
            "batch_size": 16,
            "lr": 0.002,
            "max_samples": 2_000_000,
            "max_seconds": 1620.0,
            "eval_every": 2_000,
            "eval_batch_size": 250,
            "final_samples": 80_000,  # the rest of the budget
            "final_lr_scale": 0.3,
            "final_lr_schedule": "constant",
            **START_GUARDS,
            "log_motif_metrics": True,
            "checkpoint_every_seconds": 120.0,
            # One core trains while the other makes the next batch (the spectrograms cost ~60% of
            # a step): 102 samples/s against 86 with two torch threads and no prefetching.
            "threads": 1,
            "prefetch": True,
        },
        "annealing": {
            "enabled": True,
            "start_density": 0.5,
            "stop_density": "auto",
            "multiplier": 0.75,
            "initial_bar": 1.0,
            # 6% per evaluation. Over a run the bar then falls about as far (3e-5 x ~180k
            # samples = 5.4) as the paper's (1e-7 x 6e7 = 6). At 1e-5 the first benchmark with
            # prefetching spent 38k samples at density 0.5 (unseen validation voices plateau
            # near 65-70% exact match, the bar starts at 1.0) and 32k waiting out the last
            # step, which left 8k of the 20k final samples (FNE 13.5%, E2EE 18%).
            "bar_decay_per_sample": 3e-5,
        },
    },
}

PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "planted": {
        # Sized for 2 CPU cores: finishes well inside 15 minutes.
        "cpu": {},
        # A bigger model and the paper's slower schedule, for a GPU.
        "paper": {
            "model": {"hidden": 128, "head_hidden": 128, "residual_units": 4},
            "train": {
                "batch_size": 128,
                "lr": 0.001,
                "max_samples": 20_000_000,
                "max_seconds": 36_000.0,
                "eval_every": 20_000,
            },
            "annealing": {"bar_decay_per_sample": 1e-7},
            "data": {"val_size": 10_000, "test_size": 10_000},
        },
        # Seconds on a CPU: for tests and smoke runs only.
        "tiny": {
            "model": {"hidden": 16, "head_hidden": 16, "residual_units": 1, "first_kernel": 9},
            "data": {"val_size": 64, "test_size": 64},
            "train": {
                "batch_size": 16,
                "max_samples": 640,
                "eval_every": 160,
                "eval_batch_size": 64,
                "final_samples": 160,
                "checkpoint_every_seconds": 0.0,
            },
            "annealing": {"bar_decay_per_sample": 1e-3},
        },
    },
    "digit_circle": {
        # The defaults above (BENCHMARKS.md: DigitCircle, seeds 0-2).
        "cpu": {},
        "paper": {
            "model": {
                "motif_channels": 10,
                "hidden": 64,
                "head_hidden": 128,
                "stride": 1,
                "first_kernel": 9,
                "residual_units": 4,
            },
            "train": {
                "batch_size": 64,
                "lr": 0.001,
                "max_samples": 6_000_000,
                "max_seconds": 36_000.0,
                "eval_every": 20_000,
            },
            "annealing": {"bar_decay_per_sample": 1e-7},
            "data": {"val_size": 2000, "test_size": 5000},
        },
        "tiny": {
            "model": {"hidden": 8, "head_hidden": 16, "residual_units": 1, "head_angles": 48},
            "data": {"val_size": 32, "test_size": 32},
            "train": {
                "batch_size": 8,
                "max_samples": 160,
                "eval_every": 40,
                "eval_batch_size": 32,
                "final_samples": 40,
                "checkpoint_every_seconds": 0.0,
            },
            "annealing": {"bar_decay_per_sample": 1e-2, "stop_density": 0.05},
        },
    },
    "latex_ocr": {
        "cpu": {},
        "paper": {
            "data": {
                "height": 120,
                "width": 360,
                "dpi": 200.0,
                "val_size": 2000,
                "test_size": 5000,
            },
            "model": {
                "hidden": 64,
                "stride": 1,
                "first_kernel": 9,
                "residual_units": 7,
                "head_hidden": 256,
                "head_heads": 8,
                "head_encoder_layers": 6,
                "head_decoder_layers": 6,
                "head_pool": 8,
            },
            "train": {
                "batch_size": 32,
                "lr": 0.0005,
                "max_samples": 6_000_000,
                "max_seconds": 72_000.0,
                "eval_every": 20_000,
            },
            "annealing": {"bar_decay_per_sample": 1e-7},
        },
        "tiny": {
            "model": {
                "hidden": 8,
                "residual_units": 1,
                "head_hidden": 16,
                "head_heads": 2,
                "head_decoder_layers": 1,
            },
            "data": {"val_size": 16, "test_size": 16, "max_tokens": 6},
            "train": {
                "batch_size": 8,
                "max_samples": 96,
                "eval_every": 32,
                "eval_batch_size": 16,
                "final_samples": 32,
                "checkpoint_every_seconds": 0.0,
            },
            "annealing": {"bar_decay_per_sample": 1e-2, "stop_density": 0.05},
        },
    },
    "audio_sequence": {
        "cpu": {},
        "paper": {
            "model": {"hidden": 64, "head_hidden": 256},
            "train": {
                "batch_size": 32,
                "lr": 0.001,
                "max_samples": 60_000_000,
                "max_seconds": 72_000.0,
                "eval_every": 20_000,
            },
            "annealing": {"bar_decay_per_sample": 1e-7},
            "data": {"val_size": 2000, "test_size": 5000},
        },
        "tiny": {
            "model": {"hidden": 8, "residual_units": 1, "head_hidden": 16},
            "data": {
                "val_size": 16,
                "test_size": 16,
                "seconds": 4.0,
                "min_clips": 2,
                "max_clips": 3,
            },
            "train": {
                "batch_size": 8,
                "max_samples": 96,
                "eval_every": 32,
                "eval_batch_size": 16,
                "final_samples": 32,
                "checkpoint_every_seconds": 0.0,
            },
            "annealing": {"bar_decay_per_sample": 1e-2, "stop_density": 0.05},
        },
    },
    "splicing": {
        "cpu": {},
        "paper": {
            "model": {"motif_channels": 80, "hidden": 128, "first_kernel": 21, "residual_units": 0},
            "train": {
                "batch_size": 32,
                "lr": 0.001,
                "max_seconds": 36_000.0,
                "eval_every": 8_000,
                "final_samples": 100_000,
            },
            "annealing": {"bar_decay_per_sample": 2e-6},
            "data": {"val_windows": 0},
        },
        "tiny": {
            "model": {
                "motif_channels": 8,
                "hidden": 8,
                "head_channels": 8,
                "head_dilations": [1, 4],
            },
            "data": {"val_windows": 16, "test_windows": 0},
            "train": {
                "batch_size": 4,
                "max_samples": 96,
                "eval_every": 24,
                "eval_batch_size": 16,
                "final_samples": 24,
                "checkpoint_every_seconds": 0.0,
            },
            "annealing": {"bar_decay_per_sample": 1e-2, "start_density": 0.1, "stop_density": 0.05},
        },
    },
}


def merge(base: dict, override: dict, where: str = "") -> dict:
    """Deep-merge ``override`` into a copy of ``base``; unknown keys and wrong types fail."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        path = f"{where}.{key}" if where else str(key)
        if key not in base:
            known = ", ".join(sorted(map(str, base)))
            raise ConfigError(f"unknown config key {path!r} (known here: {known})")
        current = base[key]
        if isinstance(current, dict):
            if not isinstance(value, dict):
                raise ConfigError(f"config key {path!r} must be a mapping, got {value!r}")
            out[key] = merge(current, value, path)
        else:
            out[key] = _coerce(path, current, value)
    return out


def _coerce(path: str, current: Any, value: Any) -> Any:
    if current is None or value is None:
        return value
    if path.endswith("stop_density"):  # a density or 'auto' (the task's true density)
        if value == "auto":
            return value
        if not isinstance(value, bool):
            try:
                return float(value)
            except (TypeError, ValueError):
                pass
        raise ConfigError(f"config key {path!r} must be a number or 'auto', got {value!r}")
    if isinstance(current, bool):
        if isinstance(value, bool):
            return value
        raise ConfigError(f"config key {path!r} must be true or false, got {value!r}")
    if isinstance(current, (int, float)):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value) if isinstance(current, float) else value
        if isinstance(value, str):
            try:
                return float(value) if isinstance(current, float) else int(value)
            except ValueError:
                pass
        raise ConfigError(f"config key {path!r} must be a number, got {value!r}")
    if isinstance(current, list):
        if not isinstance(value, list):
            raise ConfigError(f"config key {path!r} must be a list, got {value!r}")
        return value
    if isinstance(current, str):
        if not isinstance(value, str):
            raise ConfigError(f"config key {path!r} must be a string, got {value!r}")
        return value
    return value


def parse_override(text: str) -> dict:
    """``a.b.c=value`` (value parsed as YAML) -> ``{'a': {'b': {'c': value}}}``."""
    if "=" not in text:
        raise ConfigError(f"--set expects KEY=VALUE, got {text!r}")
    key, _, raw = text.partition("=")
    value = yaml.safe_load(raw) if raw.strip() else ""
    out: dict = {}
    node = out
    parts = key.strip().split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return out


def load_yaml(path: Path) -> dict:
    """A YAML mapping from ``path`` (safe loader)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}:{where} is not valid YAML") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file must hold a mapping of keys")
    return data


def resolve_config(
    task: str,
    preset: str = "cpu",
    *,
    files: list[Path] | None = None,
    overrides: list[dict] | None = None,
) -> dict:
    """The full config of ``task`` with ``preset``, files and overrides applied in order."""
    if task not in DEFAULTS:
        raise ConfigError(f"unknown task {task!r}; choose from: {', '.join(sorted(DEFAULTS))}")
    presets = PRESETS[task]
    if preset not in presets:
        raise ConfigError(
            f"unknown preset {preset!r} for task {task!r}; choose from: {', '.join(presets)}"
        )
    config = merge(DEFAULTS[task], presets[preset])
    config["preset"] = preset
    for path in files or []:
        user = load_yaml(path)
        user.pop("preset", None)
        if user.get("task", task) != task:
            raise ConfigError(f"{path}: config is for task {user['task']!r}, not {task!r}")
        config = merge(config, user)
    for override in overrides or []:
        config = merge(config, override)
    return config


def dump_yaml(config: dict) -> str:
    return yaml.safe_dump(config, sort_keys=False)
