from pathlib import Path

import pytest
import yaml

from sparling_genomics.config import dump_yaml, load_yaml, parse_override, restore_fields, to_dict
from sparling_genomics.errors import ConfigError
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.train.legacy import RENAMED, RETIRED, upgrade_saved, used_retired
from sparling_genomics.train.run_config import default_config, load_saved_config, resolve_config

from .conftest import REPO

TASKS = ["planted", "splicing", "digit_circle", "latex_ocr", "audio_sequence", "modular_addition"]
#: The resolved config of every task and preset as config.py of 9ea4478 (the nested-dict
#: DEFAULTS/PRESETS) wrote it: the typed configs must write the same text.
RESOLVED = Path(__file__).parent / "data" / "resolved_configs"
SAVED_RUNS = sorted((REPO / "bench_runs").glob("**/config.yaml"))


def test_defaults_and_preset_resolve():
    config = resolve_config("planted", "tiny")
    assert config.task == "planted" and config.preset == "tiny"
    assert config.train.batch_size == 16
    assert config.annealing.stop_density == "auto"


def test_overrides_apply_and_coerce():
    config = resolve_config(
        "planted", "cpu", overrides=[parse_override("train.lr=0.01"), parse_override("seed=3")]
    )
    assert config.train.lr == 0.01 and config.seed == 3
    config = resolve_config(
        "planted", "cpu", overrides=[parse_override("annealing.stop_density=1e-3")]
    )
    assert config.annealing.stop_density == 1e-3
    config = resolve_config("planted", "cpu", overrides=[parse_override("train.max_samples=1e3")])
    assert config.train.max_samples == 1000 and isinstance(config.train.max_samples, int)


@pytest.mark.parametrize(
    "override,message",
    [
        ("train.lrr=1", "unknown config key 'train.lrr'"),
        ("model.sparse.nope=1", "unknown config key 'model.sparse.nope'"),
        ("train.lr=fast", "'train.lr' must be a number"),
        ("model.reverse_complement=3", "'model.reverse_complement' must be true or false"),
        ("train.batch_size=true", "'train.batch_size' must be a number"),
        ("train.batch_size=1.5", "'train.batch_size' must be a whole number"),
        ("annealing.stop_density=low", "must be a number or 'auto'"),
        ("data=5", "must be a mapping"),
        ("data.motifs=MA0573.2", "must be a list"),
        ("data.motifs=[1]", r"'data.motifs\[0\]' must be a string"),
        ("data.background=sea", "'data.background' must be 'genome' or 'iid'"),
        ("train.final_lr_schedule=linear", "must be 'constant' or 'cosine'"),
        ("model.motif_channels=-3", "'model.motif_channels' must not be negative, got -3"),
        ("model.sparse.momentum=0", "'model.sparse.momentum' must be above 0"),
        ("annealing.start_density=1.5", "'annealing.start_density' must be at most 1"),
        ("train.batch_size=0", "'train.batch_size' must be at least 1"),
        ("train.lr=nan", "'train.lr' must be a finite number, got 'nan'"),
        ("train.lr=.inf", "'train.lr' must be a finite number, got inf"),
        ("train.max_seconds=1e400", "'train.max_seconds' must be a finite number"),
        ("train.max_samples=25e-1", "'train.max_samples' must be a whole number"),
        ("seed=-1", "'seed' must not be negative, got -1"),
        ("data.motifs=[]", r"'data.motifs' must hold at least 1 item\(s\), got \[\]"),
        # Keys of one task only: the cosine length of splicing's baseline.
        ("train.baseline_samples=10", "unknown config key 'train.baseline_samples'"),
    ],
)
def test_bad_overrides_are_refused_with_the_key_path(override, message):
    with pytest.raises(ConfigError, match=message):
        resolve_config("planted", "cpu", overrides=[parse_override(override)])


def test_each_number_of_a_list_is_in_its_range():
    cases = [("[1,0]", r"'model.head_dilations\[1\]' must be at least 1, got 0"),
             ("[-2]", r"'model.head_dilations\[0\]' must be at least 1")]  # fmt: skip
    for value, message in cases:
        with pytest.raises(ConfigError, match=message):
            resolve_config("splicing", "cpu", overrides=[
                parse_override(f"model.head_dilations={value}")])  # fmt: skip
    dilations = parse_override("model.head_dilations=[2]")
    assert resolve_config("splicing", "cpu", overrides=[dilations]).model.head_dilations == [2]


def test_a_key_of_another_task_is_unknown():
    config = resolve_config("splicing", "cpu", overrides=[{"train": {"baseline_samples": 10}}])
    assert config.train.baseline_samples == 10 and config.train.log_motif_metrics is None
    with pytest.raises(ConfigError, match="unknown config key 'train.log_motif_metrics'"):
        resolve_config("splicing", "cpu", overrides=[{"train": {"log_motif_metrics": True}}])
    with pytest.raises(ConfigError, match="unknown config key 'model.stride'"):
        resolve_config("planted", "cpu", overrides=[{"model": {"stride": 2}}])


def test_shared_opt_in_options_are_settable_in_every_task(tmp_path):
    """A settable optional key stays out of a config until set, then round-trips."""
    plain = resolve_config("digit_circle", "cpu")
    assert "compete_window" not in to_dict(plain.model.sparse)
    config = resolve_config(
        "digit_circle", "cpu", overrides=[parse_override("model.sparse.compete_window=2")]
    )
    assert config.model.sparse.compete_window == 2
    assert to_dict(config.model.sparse)["compete_window"] == 2
    saved = tmp_path / "config.yaml"
    saved.write_text(dump_yaml(config))
    assert dump_yaml(load_saved_config(saved)) == saved.read_text()
    with pytest.raises(ConfigError, match="'model.sparse.compete_window' must not be negative"):
        resolve_config(
            "planted", "cpu", overrides=[parse_override("model.sparse.compete_window=-1")]
        )


def test_a_rule_block_is_off_until_given_then_holds_its_defaults(tmp_path):
    """``annealing.<rule>``: absent from the config while off; a mapping (or one key of it)
    turns it on with the block's own defaults; null turns it off again."""
    plain = resolve_config("latex_ocr", "cpu")
    assert plain.annealing.rollback is None and "rollback" not in to_dict(plain.annealing)
    on = resolve_config("latex_ocr", "cpu",
                        overrides=[parse_override("annealing.rollback.samples=5000")])  # fmt: skip
    assert to_dict(on.annealing)["rollback"] == {"samples": 5000, "tolerance": 0.02,
                                                 "retries": 2, "limit": 4}  # fmt: skip
    assert resolve_config("latex_ocr", "cpu", overrides=[parse_override(
        "annealing.channel_edit={}")]).annealing.channel_edit.within == 8.0  # fmt: skip
    off = resolve_config("planted", "cpu", overrides=[parse_override("annealing.rollback=null")])
    assert off.annealing.rollback is None and off.annealing.channel_edit is not None
    saved = tmp_path / "config.yaml"
    saved.write_text(dump_yaml(on))
    assert dump_yaml(load_saved_config(saved)) == saved.read_text()
    for text, message in [
        ("annealing.rollback=5", "'annealing.rollback' must be a mapping, got 5"),
        ("annealing.rollback.samples=0", "'annealing.rollback.samples' must be at least 1"),
        ("annealing.rollback.sample=9", "did you mean 'annealing.rollback.samples'"),
        ("annealing.channel_edit.source=all", "must be 'busiest' or 'two_patterns'"),
    ]:
        with pytest.raises(ConfigError, match=message):
            resolve_config("planted", "cpu", overrides=[parse_override(text)])


@pytest.mark.parametrize("text,message", [
    ("annealing.rollback_samples=5000", "'annealing.rollback_samples' is now "
                                        "'annealing.rollback.samples'"),
    ("annealing.split_limit=1", "'annealing.split_limit' is now "
                                "'annealing.channel_edit.max_splits'"),
    ("annealing.finish_by_samples=5000", "'annealing.finish_by_samples' was removed"),
    ("model.sparse.cofire_weight=0.1", "'model.sparse.cofire_weight' was removed"),
])  # fmt: skip
def test_an_old_key_names_its_new_name_or_its_removal(text, message, tmp_path):
    with pytest.raises(ConfigError, match=f"^--set: config key {message}"):
        resolve_config("planted", "cpu", overrides=[parse_override(text)])
    user = tmp_path / "my.yaml"
    user.write_text(yaml.safe_dump(parse_override(text)))
    with pytest.raises(ConfigError, match=f"^{user}: config key {message}"):
        resolve_config("planted", "cpu", files=[user])


def test_planted_allows_zero_channels_others_do_not():
    assert resolve_config("planted", "cpu", overrides=[{"model": {"motif_channels": 0}}])
    with pytest.raises(ConfigError, match="'model.motif_channels' must be at least 1, got 0"):
        resolve_config("digit_circle", "cpu", overrides=[{"model": {"motif_channels": 0}}])


@pytest.mark.parametrize(
    "value,expected",
    [("auto", "auto"), (0.01, 0.01), (1, 1.0), ("1e-3", 0.001), ("0.5", 0.5)],
)
def test_stop_density_is_a_number_or_auto(value, expected):
    config = resolve_config("planted", "cpu", overrides=[{"annealing": {"stop_density": value}}])
    assert config.annealing.stop_density == expected
    assert type(config.annealing.stop_density) is type(expected)


@pytest.mark.parametrize("value", [True, "often", None, 0, 2.0])
def test_stop_density_refuses_anything_else(value):
    with pytest.raises(ConfigError, match="'annealing.stop_density' must be"):
        resolve_config("planted", "cpu", overrides=[{"annealing": {"stop_density": value}}])


@pytest.mark.parametrize(
    "override,path,suggestion",
    [
        ("train.lrr=0.1", "train.lrr", "train.lr"),
        ("train.max_sample=10", "train.max_sample", "train.max_samples"),
        ("model.sparse.momentm=0.9", "model.sparse.momentm", "model.sparse.momentum"),
        ("trian.lr=0.1", "trian", "train"),  # the first unknown level
        ("sed=1", "sed", "seed"),
    ],
)
def test_an_unknown_key_close_to_a_known_one_gets_a_did_you_mean(override, path, suggestion):
    with pytest.raises(ConfigError) as err:
        resolve_config("planted", "cpu", overrides=[parse_override(override)])
    message = str(err.value)
    assert message.startswith(
        f"unknown config key {path!r}; did you mean {suggestion!r}? (known here: "
    )
    assert "\n" not in message


def test_an_unknown_key_like_none_gets_the_same_message_as_before():
    with pytest.raises(ConfigError) as err:
        resolve_config("planted", "cpu", overrides=[parse_override("train.colour=red")])
    assert str(err.value).startswith("unknown config key 'train.colour' (known here: adam_beta2, ")
    assert "did you mean" not in str(err.value)


def test_a_misspelt_key_in_a_config_file_gets_a_did_you_mean(tmp_path):
    path = tmp_path / "my.yaml"
    path.write_text("train:\n  batch_sise: 8\n")
    with pytest.raises(ConfigError, match=r"'train.batch_sise'; did you mean 'train.batch_size'\?"):
        resolve_config("planted", "cpu", files=[path])


def test_unknown_task_and_preset():
    with pytest.raises(ConfigError, match="unknown task 'nope'; choose from: audio_sequence"):
        resolve_config("nope")
    with pytest.raises(ConfigError, match=r"unknown task 'splicng' \(did you mean 'splicing'\?\); "
                                          "choose from: audio_sequence"):  # fmt: skip
        resolve_config("splicng")
    with pytest.raises(ConfigError, match=r"unknown preset 'huge' for task 'planted'; choose"):
        resolve_config("planted", "huge")
    with pytest.raises(ConfigError, match=r"unknown preset 'cpuu' for task 'planted' \(did you "
                                          r"mean 'cpu'\?\); choose from: cpu"):  # fmt: skip
        resolve_config("planted", "cpuu")


def test_config_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("train:\n  batch_size: 8\n")
    assert resolve_config("planted", "cpu", files=[path]).train.batch_size == 8
    path.write_text("train: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        resolve_config("planted", "cpu", files=[path])
    with pytest.raises(ConfigError, match="not found"):
        resolve_config("planted", "cpu", files=[tmp_path / "missing.yaml"])
    with pytest.raises(ConfigError, match="config file expected, but this is a folder"):
        resolve_config("planted", "cpu", files=[tmp_path])


def test_one_registry_names_each_task_and_its_config():
    for name in TASKS:
        cls = task_class(name)
        assert cls.name == name and {"cpu", "paper", "tiny"} <= set(cls.presets)
        assert set(cls.presets) - {"cpu", "paper", "tiny"} <= ({"long"} if name == "splicing"
                                                                else set())  # fmt: skip
        assert default_config(name).task == name


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("preset", ["cpu", "paper", "tiny"])
def test_resolved_config_text_is_unchanged(task, preset):
    """Same keys, values, key order and YAML text as the fixtures (written before the typed
    configs; the planted and DigitCircle ones since rewritten for the rule blocks)."""
    expected = (RESOLVED / f"{task}_{preset}.yaml").read_text()
    assert dump_yaml(resolve_config(task, preset)) == expected


def _saved(path: Path):
    """A saved run config loaded as ``--resume`` and ``load_run`` load it: the saved keys, in
    today's names, over the current defaults of its task and preset."""
    saved = upgrade_saved(load_yaml(path))
    return resolve_config(saved.pop("task"), saved.pop("preset", "cpu"), overrides=[saved])


def _leaves(node, where=()):
    for key, value in node.items():
        if isinstance(value, dict):
            yield from _leaves(value, (*where, key))
        else:
            yield (*where, key), value


def _today(key: tuple, raw: dict) -> tuple | None:
    """Where a saved key's value lives today (None: a removed key, or the key of a rule that
    was off)."""
    if ".".join(key) in {r.key for r in RETIRED}:
        return None
    if key[0] == "annealing" and key[-1] in RENAMED:
        block, name = RENAMED[key[-1]]
        samples = next(v for k, v in RENAMED.items() if v == (block, "samples"))
        return ("annealing", block, name) if raw["annealing"].get(samples) else None
    return key


@pytest.mark.parametrize("path", SAVED_RUNS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_saved_run_config_loads_with_its_values(path):
    """Old runs load: every saved key keeps its value and order under today's name (a rule's
    flat keys in its block, ``legacy.RENAMED``; removed settings dropped, ``legacy.RETIRED``;
    keys added since filled from the defaults), and a config with every current key
    round-trips to the same text."""
    text = path.read_text()
    raw = yaml.safe_load(text)
    dumped = dump_yaml(_saved(path))
    loaded = dict(_leaves(yaml.safe_load(dumped)))
    moved = [(_today(key, raw), value) for key, value in _leaves(raw)]
    for key, value in moved:
        if key is not None:
            assert loaded[key] == value and type(loaded[key]) is type(value), key
    kept = [key for key, _ in moved if key is not None]
    assert [k for k in loaded if k in kept] == list(dict.fromkeys(kept))
    current = upgrade_saved(raw)["annealing"] == {**raw["annealing"], "rollback": None,
                                                  "channel_edit": None}  # no old keys
    if current and set(kept) == loaded.keys():
        assert dumped == text


def test_some_saved_run_configs_are_complete():
    """The exact round trip above is exercised, not skipped everywhere."""
    complete = [p for p in SAVED_RUNS if dump_yaml(_saved(p)) == p.read_text()]
    assert len(complete) >= 5


def test_saved_runs_that_used_a_removed_setting_read_and_refuse_in_one_line():
    """A run trained with a setting since removed still reads (its other keys as recorded);
    resuming it is refused, and evaluating it where the setting changed the model's output."""
    used = {p: used_retired(load_yaml(p)) for p in SAVED_RUNS}
    used = {p: found for p, found in used.items() if found}
    assert len(used) >= 5  # resampling, the deadline, the late bar, the contest variants...
    for path, found in used.items():
        load_saved_config(path)
        with pytest.raises(ConfigError, match=f"^{path}: this run used {found[0].key}=.*"
                                              "cannot be resumed$"):  # fmt: skip
            load_saved_config(path, use="resume")
        output = [r for r in found if r.output]
        if output:
            with pytest.raises(ConfigError, match=f"this run used {output[0].key}="):
                load_saved_config(path, use="evaluate")
        else:
            load_saved_config(path, use="evaluate")


def test_upgrade_saved_moves_the_rules_flat_keys_into_their_blocks():
    old = {"task": "planted", "annealing": {
        "bar_decay_per_sample": 1e-6, "finish_by_samples": 0, "rollback_samples": 50_000,
        "rollback_tolerance": 0.05, "split_samples": 0, "split_within": 1.5,
        "late_bar_decay_per_sample": 2.5e-6},
        "model": {"sparse": {"cofire_weight": 0.1}}}  # fmt: skip
    assert upgrade_saved(old) == {"task": "planted", "model": {"sparse": {}}, "annealing": {
        "bar_decay_per_sample": 1e-6,
        "rollback": {"samples": 50_000, "tolerance": 0.05}, "channel_edit": None}}  # fmt: skip
    assert [r.key for r in used_retired(old)] == ["annealing.late_bar_decay_per_sample",
                                                  "model.sparse.cofire_weight"]  # fmt: skip


def test_restore_fields_puts_a_state_back_and_names_an_unknown_key():
    from sparling_genomics.sparsity.annealing import SparsityAnnealer

    annealer = SparsityAnnealer(start_density=0.5, stop_density=0.01, multiplier=0.75)
    restore_fields(annealer, {"density": 0.2, "steps": 3}, "annealer")
    assert annealer.density == 0.2 and annealer.steps == 3
    with pytest.raises(ConfigError, match="unknown annealer state key 'nope'"):
        annealer.load_state_dict({"nope": 1})
