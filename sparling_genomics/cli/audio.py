"""The audio-corpus verbs: build and check AudioMNIST-layout
folders."""

from __future__ import annotations

from pathlib import Path

import click

from .paths import OUT_FOLDER


@click.command("audio-corpus")
@click.option("--out", required=True, type=OUT_FOLDER, help="Corpus folder.")
@click.option("--speakers", default=60, show_default=True, help="Voices (AudioMNIST has 60).")
@click.option("--repetitions", default=10, show_default=True, help="Clips per digit and voice.")
@click.option("--seed", default=0, show_default=True)
def audio_corpus(out, speakers, repetitions, seed) -> None:
    """Build an offline AudioMNIST-layout corpus with espeak-ng (completes a killed build)."""
    from ..domains.espeak_corpus import build_espeak_corpus

    build_espeak_corpus(out, speakers=speakers, repetitions=repetitions, seed=seed,
                        progress=True)  # fmt: skip
    click.echo(f"wrote {out} ({speakers} speakers x 10 digits x {repetitions} repetitions)")


@click.command("audio-check")
@click.argument("directory", type=click.Path(path_type=Path))
def audio_check(directory) -> None:
    """Load an AudioMNIST-layout folder and summarise it (speakers, clips, rates, split)."""
    from ..domains.spoken_digits import audio_summary, load_audiomnist

    for line in audio_summary(load_audiomnist(directory)):
        click.echo(line)
