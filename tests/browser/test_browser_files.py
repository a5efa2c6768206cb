"""igv.js (npm ``igv``) in headless Chromium opens the browser files that ``scan`` writes:
its ``igv.json`` unchanged, its IGV session (for a scan whose FASTA lies in its folder, so a
page can fetch it), and its UCSC hub (through igv.js's hub reader: genome and tracks); the
motif sites are drawn where the BED has them, with no console error."""

import json
import shutil
import xml.etree.ElementTree as ET

from tests.browser.conftest import IGV_JS, _need, console_errors

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script src="igv.min.js"></script>
</head><body><div id="igv"></div><script>
const div = document.getElementById("igv");
window.igvReady = (LOAD).then((b) => { window.igvBrowser = b; return true; });
</script></body></html>"""

FROM_CONFIG = 'fetch("igv.json").then((r) => r.json()).then((c) => igv.createBrowser(div, c))'
FROM_SESSION = 'igv.createBrowser(div, {loadDefaultGenomes: false, sessionURL: "SESSION"})'

DRAWN = """
const done = arguments[arguments.length - 1];
window.igvReady.then(async () => {
  const b = window.igvBrowser;
  await new Promise((r) => setTimeout(r, 1500));  // let every track paint
  const out = {tracks: {}, locus: b.currentLoci ? b.currentLoci() : null,
               chromosomes: b.genome.chromosomeNames, sequence: null};
  const frame = b.referenceFrameList[0];
  out.frame = [frame.chr, Math.round(frame.start), Math.round(frame.end)];
  out.sequence = await b.genome.getSequence(frame.chr, 0, 20);
  for (const tv of b.trackViews) {
    const vp = tv.viewports[0];
    const cache = vp.featureCache;
    const feats = cache && cache.features ? cache.features : [];
    let inked = 0;
    if (vp.canvas) {
      const px = vp.canvas.getContext("2d")
        .getImageData(0, 0, vp.canvas.width, vp.canvas.height).data;
      for (let i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
    }
    out.tracks[tv.track.name || tv.track.type] = {
      features: Array.isArray(feats)
        ? feats.map((f) => [f.start, f.end, f.name === undefined ? null : f.name]) : [],
      inked,
    };
  }
  done(out);
}).catch((e) => done({error: String(e)}));
"""


def _site(planted_tiny, name):
    """A copy of the scan folder with igv.js beside its files, served as a static site."""
    _need(IGV_JS)
    site = planted_tiny.base / name
    if site.exists():
        shutil.rmtree(site)
    shutil.copytree(planted_tiny.tracks, site)
    shutil.copy(IGV_JS, site / "igv.min.js")
    return site


def _open(browser, serve, site, load: str, artifacts, shot: str) -> dict:
    (site / "index.html").write_text(PAGE.replace("LOAD", load))
    browser.get(serve(site) + "/index.html")
    drawn = browser.execute_async_script(DRAWN)
    browser.save_screenshot(str(artifacts / shot))
    assert "error" not in drawn, drawn
    return drawn


def _expected_sites(site, frame):
    chrom, lo, hi = frame
    rows = [line.split("\t") for line in (site / "motif_sites.bed").read_text().splitlines()]
    return sorted((int(r[1]), int(r[2]), r[3]) for r in rows
                  if r[0] == chrom and int(r[1]) < hi and int(r[2]) > lo)  # fmt: skip


def _shown(track, frame):
    _, lo, hi = frame
    return sorted((s, e, n) for s, e, n in track["features"] if s < hi and e > lo)


def test_igv_js_draws_the_scan_from_its_own_igv_json(browser, planted_tiny, serve, artifacts):
    site = _site(planted_tiny, "igv_json_site")
    config = json.loads((site / "igv.json").read_text())
    drawn = _open(browser, serve, site, FROM_CONFIG, artifacts, "igv_json.png")
    assert drawn["chromosomes"] == [planted_tiny.seqid]  # the genome, from the hub's 2bit
    seq = "".join(planted_tiny.fasta.read_text().splitlines()[1:])[:20].upper()
    assert drawn["sequence"].upper() == seq
    assert f"{drawn['frame'][0]}:{drawn['frame'][1] + 1}-{drawn['frame'][2]}" == config["locus"]
    sites = drawn["tracks"][config["tracks"][0]["name"]]
    expected = _expected_sites(site, drawn["frame"])
    assert expected and _shown(sites, drawn["frame"]) == expected
    assert sites["inked"] > 0
    wigs = [t["name"] for t in config["tracks"][1:]]
    assert wigs and any(drawn["tracks"][w]["inked"] > 0 for w in wigs)
    assert console_errors(browser) == []


def test_igv_js_opens_the_igv_session_of_a_scan_with_its_fasta_inside(
    browser, planted_tiny, serve, artifacts
):
    from sparling_genomics.export.browser import BrowserTracks, write_browser_files
    from sparling_genomics.genome.fasta import Genome

    site = _site(planted_tiny, "igv_session_site")
    fasta = site / "genome.fa"
    shutil.copy(planted_tiny.fasta, fasta)
    wigs = [(t.get("id")[: -len(".bw")], site / t.get("id"), t.get("color"))
            for t in ET.parse(site / "igv_session.xml").getroot().iter("Track")
            if t.get("id").endswith(".bw")]  # fmt: skip
    tracks = BrowserTracks("site", site / "motif_sites.bed",
                           (site / "motif_sites.bed.track").read_text(),
                           site / "motif_sites.bb", wigs)  # fmt: skip
    write_browser_files(site, fasta, Genome(fasta), tracks)
    session = ET.parse(site / "igv_session.xml").getroot()
    assert session.get("genome") == "genome.fa"
    drawn = _open(browser, serve, site, FROM_SESSION.replace("SESSION", "igv_session.xml"),
                  artifacts, "igv_session.png")  # fmt: skip
    assert drawn["chromosomes"] == [planted_tiny.seqid]
    assert f"{drawn['frame'][0]}:{drawn['frame'][1] + 1}-{drawn['frame'][2]}" == session.get(
        "locus")  # fmt: skip
    sites = drawn["tracks"]["Motif sites (site)"]
    expected = _expected_sites(site, drawn["frame"])
    assert expected and _shown(sites, drawn["frame"]) == expected and sites["inked"] > 0
    assert any(drawn["tracks"][f"{m} activation"]["inked"] > 0 for m, _, _ in wigs)
    assert console_errors(browser) == []


FROM_HUB = """(async () => {
  // igv.js's own hub reader: hub.txt -> genomes.txt -> trackDb.txt, URLs resolved against
  // each file's URL. (igv.js 3.8 builds a genome config with tracks only from single-file
  // hubs, so the browser is made from the hub's genome stanza and trackDb tracks here.)
  const hub = await igv.loadHub(new URL("hub/hub.txt", location.href).href);
  const genome = hub.genomeStanzas[0];
  const groups = await hub.getGroupedTrackConfigurations(genome.getProperty("genome"));
  const tracks = [];
  const walk = (g) => { tracks.push(...(g.tracks || [])); (g.children || []).forEach(walk); };
  groups.forEach(walk);
  window.hubTracks = tracks.map((t) => [t.name, t.url, t.format]);
  return igv.createBrowser(div, {loadDefaultGenomes: false, tracks,
    locus: genome.getProperty("defaultPos"),
    reference: {id: genome.getProperty("genome"), twoBitURL: genome.getProperty("twoBitPath")}});
})()"""


def test_igv_js_reads_the_hub_and_draws_its_genome_and_tracks(
    browser, planted_tiny, serve, artifacts
):
    """igv.js parses the hub as UCSC would (hub.txt -> genomes.txt -> trackDb.txt, relative
    URLs) and draws its 2bit genome, its bigBed 9 sites (names decoded: the bigBed declares
    nine fields) and its bigWigs at the hub's defaultPos."""
    site = _site(planted_tiny, "igv_hub_site")
    genome = dict(line.split(" ", 1) for line in
                  (site / "hub" / "genomes.txt").read_text().splitlines())  # fmt: skip
    drawn = _open(browser, serve, site, FROM_HUB, artifacts, "igv_hub.png")
    hub_tracks = browser.execute_script("return window.hubTracks;")
    scan = json.loads((site / "scan.json").read_text())
    wigs = [f for f in scan["files"] if f.endswith(".bw")]
    assert [u.rsplit("/", 1)[-1] for _, u, _ in hub_tracks] == ["motif_sites.bb", *wigs]
    assert [f for _, _, f in hub_tracks] == ["bigBed"] + ["bigWig"] * len(wigs)
    assert drawn["chromosomes"] == [planted_tiny.seqid]
    assert f"{drawn['frame'][0]}:{drawn['frame'][1] + 1}-{drawn['frame'][2]}" == genome[
        "defaultPos"]  # fmt: skip
    seq = "".join(planted_tiny.fasta.read_text().splitlines()[1:])[:20].upper()
    assert drawn["sequence"].upper() == seq
    sites = drawn["tracks"]["Motif sites"]
    expected = _expected_sites(site, drawn["frame"])
    assert expected and _shown(sites, drawn["frame"]) == expected and sites["inked"] > 0
    assert any(drawn["tracks"][name]["inked"] > 0 for name, _, f in hub_tracks if f == "bigWig")
    assert console_errors(browser) == []
