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
