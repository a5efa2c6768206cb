"""igv.js (npm ``igv``) in headless Chromium loads our FASTA, BED and bigWig and draws the
expected motif sites at a locus."""

import json
import shutil

from tests.browser.conftest import IGV_JS, _need, console_errors

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script src="igv.min.js"></script>
</head><body><div id="igv"></div><script>
window.igvReady = igv.createBrowser(document.getElementById("igv"), CONFIG)
  .then((b) => { window.igvBrowser = b; return true; });
</script></body></html>"""


def _locus_around_first_site(bed_rows, seqid, length):
    chrom, start, end, name = bed_rows[len(bed_rows) // 2][:4]
    lo = max(0, int(start) - 60)
    hi = min(length, int(end) + 60)
    return chrom, lo, hi


def test_igv_draws_motif_sites_from_fasta_bed_and_bigwig(browser, planted_tiny, serve, artifacts):
    _need(IGV_JS)
    site = planted_tiny.base / "igv_site"
    site.mkdir(exist_ok=True)
    shutil.copy(IGV_JS, site / "igv.min.js")
    shutil.copy(planted_tiny.fasta, site / "genome.fa")
    from pyfaidx import Faidx

    Faidx(str(site / "genome.fa")).close()  # writes genome.fa.fai
    shutil.copy(planted_tiny.tracks / "motif_sites.bed", site / "sites.bed")
    wig = sorted(p.name for p in planted_tiny.tracks.glob("*.bw"))[0]
    shutil.copy(planted_tiny.tracks / wig, site / "activation.bw")
    rows = [line.split("\t") for line in (site / "sites.bed").read_text().splitlines()]
    chrom, lo, hi = _locus_around_first_site(rows, planted_tiny.seqid, planted_tiny.length)
    expected = sorted(
        (int(r[1]), int(r[2]), r[3]) for r in rows if int(r[1]) < hi and int(r[2]) > lo
    )
    config = {
        "loadDefaultGenomes": False,
        "showCenterGuide": False,
        "reference": {"id": "tiny", "name": "tiny", "fastaURL": "genome.fa",
                      "indexURL": "genome.fa.fai"},
        "locus": f"{chrom}:{lo + 1}-{hi}",
        "tracks": [
            {"name": "motif sites", "type": "annotation", "format": "bed", "url": "sites.bed",
             "displayMode": "EXPANDED"},
            {"name": "activation", "type": "wig", "format": "bigwig", "url": "activation.bw"},
        ],
    }  # fmt: skip
    (site / "index.html").write_text(PAGE.replace("CONFIG", json.dumps(config)))
    browser.get(serve(site) + "/index.html")
    drawn = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        window.igvReady.then(async () => {
          const b = window.igvBrowser;
          await new Promise((r) => setTimeout(r, 1500));  // let every track paint
          const out = {};
          for (const tv of b.trackViews) {
            const vp = tv.viewports[0];
            const cache = vp.featureCache;
            const feats = cache && cache.features ? cache.features : [];
            const canvas = vp.canvas;
            let inked = 0;
            if (canvas) {
              const px = canvas.getContext("2d")
                .getImageData(0, 0, canvas.width, canvas.height).data;
              for (let i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
            }
            out[tv.track.name || tv.track.type] = {
              features: Array.isArray(feats)
                ? feats.map((f) => [f.start, f.end, f.name === undefined ? null : f.name])
                : [],
              inked,
            };
          }
          done(out);
        }).catch((e) => done({error: String(e)}));
        """
    )
    browser.save_screenshot(str(artifacts / "igv_locus.png"))
    assert "error" not in drawn, drawn
    sites = drawn["motif sites"]
    shown = sorted((s, e, n) for s, e, n in sites["features"] if s < hi and e > lo)
    assert shown == expected and expected
    assert sites["inked"] > 0
    assert drawn["activation"]["inked"] > 0
    assert console_errors(browser) == []
