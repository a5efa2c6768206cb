"""One truth per default: what the workflow's schema fills in for a key a user's config
leaves out is what the shipped default config sets (a user's own config trains like the
main job), and every default the schema names for a JASPAR collection is the package's."""

import re
from pathlib import Path

import yaml

from tests.conftest import REPO

SCHEMA = REPO / "pipelines" / "schemas" / "config.schema.yaml"
DEFAULT = REPO / "pipelines" / "config" / "default.yaml"


def _defaults(block: dict) -> dict:
    return {k: v["default"] for k, v in block.get("properties", {}).items() if "default" in v}


def test_schema_defaults_are_the_default_configs_values():
    schema = yaml.safe_load(SCHEMA.read_text())["properties"]
    config = yaml.safe_load(DEFAULT.read_text())
    differ = []
    for section in ("genomes", "runs"):
        defaults = _defaults(schema[section]["additionalProperties"])
        for name, entry in config[section].items():
            differ += [f"{section}.{name}.{k}: {entry[k]!r} in {DEFAULT.name}, schema {v!r}"
                       for k, v in defaults.items() if k in entry and entry[k] != v]  # fmt: skip
    for section in ("jaspar", "planted", "outdir"):
        if section == "outdir":
            pairs = {"outdir": (config.get("outdir"), schema["outdir"].get("default"))}
        else:
            defaults = _defaults(schema[section])
            pairs = {f"{section}.{k}": (config.get(section, {}).get(k), v)
                     for k, v in defaults.items() if k in config.get(section, {})}  # fmt: skip
        differ += [f"{k}: {a!r} in {DEFAULT.name}, schema {b!r}" for k, (a, b) in pairs.items()
                   if a is not None and a != b]  # fmt: skip
    assert not differ, "\n".join(differ)


def test_the_schema_names_the_packages_jaspar_collection():
    from sparling_genomics.export.naming import DEFAULT_COLLECTION

    schema = _defaults(yaml.safe_load(SCHEMA.read_text())["properties"]["jaspar"])
    assert schema == DEFAULT_COLLECTION, Path(SCHEMA).name


def documented_defaults(text: str) -> dict[str, object]:
    """``{section.key: default}`` from the key tables of ``pipelines/config/README.md``: the
    last backticked value of a row's "type, default" column, where the column ends in one."""
    found, section = {}, None
    for line in text.splitlines():
        if line.startswith("### `"):
            section = line.split("`")[1]
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if section is None or len(cells) < 3 or not cells[0].startswith("`"):
            continue
        kind = cells[1]
        if kind.endswith("`") and re.search(r"[,;] `[^`]*`$", kind):
            found[f"{section}.{cells[0].strip('`')}"] = yaml.safe_load(kind.split("`")[-2])
    return found


def test_the_config_readme_documents_the_schemas_defaults():
    schema = yaml.safe_load(SCHEMA.read_text())["properties"]
    readme = REPO / "pipelines" / "config" / "README.md"
    documented = documented_defaults(readme.read_text())
    assert len(documented) >= 15, sorted(documented)  # the tables were read
    differ = []
    for key, value in documented.items():
        section, name = key.split(".", 1)
        block = schema[section]
        inner = block.get("additionalProperties")
        block = inner if isinstance(inner, dict) else block
        default = block["properties"][name].get("default")
        if default != value:
            differ.append(f"{key}: {value!r} in {readme.name}, {default!r} in the schema")
    assert not differ, "\n".join(differ)


def test_the_table_reader_sees_a_wrong_default():
    text = "### `runs`\n| key | type, default | meaning |\n|---|---|---|\n" \
           "| `train_minutes` | number > 0, `99` | budget |\n| `genome` | string (required) | x |\n"
    assert documented_defaults(text) == {"runs.train_minutes": 99}
