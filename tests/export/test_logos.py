import numpy as np
from PIL import Image

from sparling_genomics.export.formats import ExportedMotif
from sparling_genomics.export.logos import information_frame, write_logos


def test_information_frame_heights():
    probs = np.array([[1.0, 0, 0, 0], [0.25, 0.25, 0.25, 0.25]])
    df = information_frame(probs)
    assert list(df.columns) == list("ACGT")
    assert np.isclose(df.iloc[0].sum(), 2.0, atol=1e-3) and np.isclose(df.iloc[1].sum(), 0.0)


def test_logos_png_svg_and_sheet(tmp_path):
    rng = np.random.default_rng(1)
    motifs = [
        ExportedMotif(f"m{i}", rng.dirichlet(np.ones(4) * 0.2, size=6), nsites=10 + i)
        for i in range(3)
    ]
    out = write_logos(tmp_path, motifs)
    assert [p.name for p in out["png"]] == ["m0.png", "m1.png", "m2.png"]
    for path in out["png"] + out["sheet"]:
        with Image.open(path) as img:
            img.verify()
    for path in out["svg"]:
        assert path.read_text().lstrip().startswith("<?xml") and "</svg>" in path.read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    # The sheet: the logos themselves, two a row, each at the top left of its cell.
    logos = [np.asarray(Image.open(p).convert("RGB")) for p in out["png"]]
    sheet = np.asarray(Image.open(out["sheet"][0]).convert("RGB"))
    h, w = max(a.shape[0] for a in logos), max(a.shape[1] for a in logos)
    assert sheet.shape == (2 * h, 2 * w, 3)
    for k, logo in enumerate(logos):
        top, left = (k // 2) * h, (k % 2) * w
        cell = sheet[top : top + logo.shape[0], left : left + logo.shape[1]]
        assert np.array_equal(cell, logo), k
    assert (sheet[h:, w:] == 255).all()  # the empty fourth cell


def test_logo_png_is_the_saved_logo(tmp_path):
    """The report's in-memory redraw gives the same image as the logo file export writes."""
    import io

    from sparling_genomics.export.logos import logo_png

    motif = ExportedMotif("m0", np.random.default_rng(2).dirichlet(np.ones(4), size=7), nsites=5)
    saved = write_logos(tmp_path, [motif])["png"][0]
    with Image.open(saved) as a, Image.open(io.BytesIO(logo_png(motif))) as b:
        assert a.size == b.size and np.array_equal(np.asarray(a), np.asarray(b))
