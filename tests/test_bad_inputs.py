"""Every catalogued bad input: one ``error:`` line, exit 2, nothing written (or accepted as
documented); and ``docs/bad-inputs.md`` shows what the commands print today."""

import shutil

import pytest

from tests.bad_inputs import CASES, DOC, markdown, run_case


@pytest.fixture(scope="module")
def outcomes(planted_tiny, splicing_tiny, tmp_path_factory):
    work = tmp_path_factory.mktemp("bad_inputs")
    # A copy of the tiny run without its scan/report extras, as `python -m tests.bad_inputs`
    # makes it (so the docs table does not depend on which run made it).
    run = work / "_run"
    shutil.copytree(planted_tiny.run, run)
    site_run = work / "_site_run"
    shutil.copytree(splicing_tiny, site_run)
    return {case.id: run_case(case, work / case.id, run, site_run) for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.exit == case.exit, (outcome.exit, outcome.stderr, outcome.stdout)
    if case.exit == 0:
        text = outcome.stdout
    else:
        lines = outcome.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), lines
        text = lines[0]
        # Nothing written but the FASTA's index (.fai, a cache beside the input, as samtools
        # and pyfaidx make it; not made for a FASTA that was refused).
        written = [f for f in outcome.files_after if not f.endswith(".fa.fai")]
        assert written == [], outcome.files_after
        assert outcome.files_gone == [], outcome.files_gone  # and nothing the user had removed
    for words in case.expect:
        assert words in text, (words, text)
    assert "PWNED" not in outcome.files_after


def test_docs_table_is_current(outcomes):
    expected = markdown([(case, outcomes[case.id]) for case in CASES])
    assert DOC.read_text() == expected, "docs/bad-inputs.md is stale: python -m tests.bad_inputs"


def test_unexpected_failure_exits_1_with_one_line_and_debug_shows_traceback(monkeypatch):
    from click.testing import CliRunner

    import sparling_genomics.genome.dataset as dataset
    from sparling_genomics.cli.main import main

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(dataset, "build_dataset", boom)
    args = ["dataset", "--reference", "tiny", "--out", "/nonexistent-dir/x.h5"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "RuntimeError: disk on fire" in lines[0] and "--debug" in lines[0]
    result = CliRunner().invoke(main, ["--debug", *args])
    assert result.exit_code == 1 and isinstance(result.exception, RuntimeError)
