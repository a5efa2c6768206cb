"""What a dataset records of its inputs: a bundled reference by name, files in the project
relative to the dataset, others absolute; and finding them again after a move."""

from pathlib import Path

from sparling_genomics.genome.dataset_source import source_file, source_record
from sparling_genomics.genome.references import load_reference


def test_a_bundled_reference_is_recorded_by_name_and_found_by_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tiny = load_reference("tiny")
    own_bed = tmp_path / "sites.bed"
    record = source_record(tmp_path / "ds.h5", reference="tiny", fasta=tiny.fasta, bed=own_bed)
    assert record["reference"] == "tiny" and record["from_reference"] == ["fasta"]
    record["fasta"] = "/an/install/path/that/moved.fa"  # another machine's venv
    assert source_file(record, "fasta", tmp_path / "ds.h5") == Path(tiny.fasta)
    assert source_file(record, "bed", tmp_path / "ds.h5") == own_bed  # the user's, not tiny's
    assert source_file(record, "annotation", tmp_path / "ds.h5") is None


def test_project_files_travel_with_the_dataset(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "results").mkdir()
    (project / "data" / "g.fa").write_text(">s\nACGT\n")
    monkeypatch.chdir(project)
    record = source_record(Path("results/ds.h5"), fasta=Path("data/g.fa"), annotation=None)
    assert record["fasta"] == "../data/g.fa" and record["annotation"] is None
    moved = tmp_path / "elsewhere" / "project"
    moved.parent.mkdir()
    project.rename(moved)
    monkeypatch.chdir(tmp_path)
    found = source_file(record, "fasta", moved / "results" / "ds.h5")
    assert found.resolve() == (moved / "data" / "g.fa").resolve() and found.is_file()


def test_files_outside_the_project_are_recorded_absolute(tmp_path, monkeypatch):
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    genome = tmp_path / "genomes" / "g.fa"
    record = source_record(Path("ds.h5"), fasta=genome)
    assert record["fasta"] == str(genome)
    assert source_file(record, "fasta", Path("/somewhere/else/ds.h5")) == genome
