"""The HTML report in a real browser: every image decodes, the console stays clean."""

from tests.browser.conftest import console_errors


def test_report_images_decode_and_console_has_no_errors(browser, planted_tiny, artifacts):
    browser.get(planted_tiny.report.as_uri())
    result = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const images = Array.from(document.images);
        Promise.allSettled(images.map((img) => img.decode())).then((settled) => done({
            count: images.length,
            failed: settled.filter((s) => s.status !== "fulfilled").length,
            empty: images.filter((img) => !(img.naturalWidth > 0 && img.naturalHeight > 0))
                .map((img) => img.alt),
            title: document.title,
        }));
        """
    )
    browser.save_screenshot(str(artifacts / "report.png"))
    assert result["count"] >= 3, result
    assert result["failed"] == 0 and result["empty"] == [], result
    assert "Sparling motifs" in result["title"]
    assert console_errors(browser) == []


def test_report_with_seeds_reads_at_laptop_width(browser, planted_tiny, cli, tmp_path, artifacts):
    """At 1280 px (the browser's window) the report with its consensus table first fits:
    no table is cut or needs scrolling sideways, and every logo decodes."""
    table, report = tmp_path / "stability.json", tmp_path / "report.html"
    for args in (("stability", "--model", planted_tiny.run, "--model", planted_tiny.run,
                  "--out", table),
                 ("report", "--model", planted_tiny.run, "--stability", table, "--out", report)):
        result = cli(*args)
        assert result.returncode == 0, result.stderr
    browser.get(report.as_uri())
    result = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const images = Array.from(document.images);
        Promise.allSettled(images.map((img) => img.decode())).then((settled) => done({
            failed: settled.filter((s) => s.status !== "fulfilled").length,
            viewport: window.innerWidth,
            page: document.documentElement.scrollWidth,
            cut: Array.from(document.querySelectorAll("table")).filter((t) =>
                t.getBoundingClientRect().right > window.innerWidth
                || t.parentElement.scrollWidth > t.parentElement.clientWidth + 1).length,
            tables: document.querySelectorAll("table.consensus").length,
        }));
        """
    )
    browser.save_screenshot(str(artifacts / "report_seeds.png"))
    assert result["viewport"] <= 1280 and result["tables"] >= 1, result
    assert result["failed"] == 0 and result["cut"] == 0, result
    assert result["page"] <= result["viewport"], result
