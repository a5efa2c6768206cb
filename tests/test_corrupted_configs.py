"""Property-based tests of configs against broken input: a YAML config file generated clean,
then broken (``tests/corruption.py``), and ``--set`` overrides of any text. Each reads as the
clean file (a byte-order mark, CRLF line ends), or is refused with a typed one-line error --
never an unexpected exception (exit 1)."""

import math
import tempfile
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from sparling_genomics.config import parse_override, to_dict
from sparling_genomics.train.run_config import resolve_config
from tests.corruption import FAST, OTHER, Refused, broken, check_broken, read_or_refuse

#: Keys of the planted task's config, each with values in its range.
TRAIN = {"lr": st.floats(1e-6, 1.0), "max_samples": st.integers(1, 10**7),
         "batch_size": st.integers(1, 512)}  # fmt: skip
CONFIGS = st.fixed_dictionaries({}, optional={
    "seed": st.integers(0, 10_000), "train": st.fixed_dictionaries({}, optional=TRAIN),
    "annealing": st.fixed_dictionaries({}, optional={"start_density": st.floats(0.01, 1.0)}),
})  # fmt: skip
KEYS = ["seed", *(f"train.{key}" for key in TRAIN), "annealing.start_density"]


def _resolve(path: Path) -> dict:
    return to_dict(resolve_config("planted", "tiny", files=[path]))


@FAST
@given(CONFIGS.filter(bool), st.data())
def test_a_broken_config_file_reads_as_the_clean_one_or_is_refused(values, data):
    clean = yaml.safe_dump(values).encode()
    how, bad = data.draw(broken(clean, hows=("bom", "crlf", "bom+crlf", *OTHER)))
    with tempfile.TemporaryDirectory() as tmp:
        good, other = Path(tmp, "clean.yaml"), Path(tmp, "my.yaml")
        good.write_bytes(clean)
        other.write_bytes(bad)
        want = _resolve(good)
        # (an unknown key's message names the key, not the file)
        got = read_or_refuse(_resolve, other, names_file=False)
    check_broken(how, got, want)


def _value(config: dict, key: str):
    for part in key.split("."):
        config = config[part]
    return config


@FAST
@given(st.one_of(st.sampled_from(KEYS), st.text(max_size=20)),
       st.one_of(st.text(max_size=30), st.floats(allow_nan=True).map(str),
                 st.integers().map(str)))  # fmt: skip
def test_any_set_override_is_merged_or_one_line(key, value):
    """``--set KEY=VALUE`` of any text: a typed one-line error, or the config holds the value
    YAML reads from it (coerced to the key's type: '1e3' is 1000)."""
    text = f"{key}={value}"

    def merged(_):
        return to_dict(resolve_config("planted", "tiny", overrides=[parse_override(text)]))

    got = read_or_refuse(merged, Path("--set"), names_file=False)
    if not isinstance(got, Refused):
        want = yaml.safe_load(value) if value.strip() else ""
        have = _value(got, key.strip())
        if isinstance(want, str) and isinstance(have, int | float):
            want = float(want)  # a number YAML 1.1 reads as text ('1e3'), coerced by the key
        assert have == want or (isinstance(want, float) and math.isclose(have, want)), (have,
                                                                                        want)
