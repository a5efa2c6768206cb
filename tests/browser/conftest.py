"""Headless Chromium (Debian ``chromium`` + ``chromedriver``, driven by Selenium) and a local
HTTP server with byte ranges (igv.js reads indexed FASTA and bigWig by range requests).

``scripts/test.sh`` installs Chromium and igv.js (npm) and sets ``SPARLING_BROWSER_TESTS=
required``, so in CI a missing browser fails these tests instead of skipping them.
Screenshots are kept under ``build/test-artifacts/`` (or ``$SPARLING_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import REPO

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
IGV_JS = REPO / "build" / "browser" / "node_modules" / "igv" / "dist" / "igv.min.js"
ARTIFACTS = Path(os.environ.get("SPARLING_TEST_ARTIFACTS", REPO / "build" / "test-artifacts"))


def _need(*paths: Path | str) -> None:
    missing = [str(p) for p in paths if not Path(p).exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip)")
    if missing:
        message = f"browser test needs: {', '.join(missing)} (scripts/test.sh installs them)"
        if os.environ.get("SPARLING_BROWSER_TESTS") == "required":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """A headless Chromium session that records the page's console."""
    _need(CHROMIUM, CHROMEDRIVER)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not look online
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--window-size=1280,1400", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):  # fmt: skip
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(driver) -> list[str]:
    """The console's error-level messages since the last call."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


class _RangeHandler(SimpleHTTPRequestHandler):
    """Static files with single byte-range support (what igv.js asks for)."""

    def send_head(self):
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if not match:
            return super().send_head()
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return None
        size = os.path.getsize(path)
        start = int(match[1])
        end = min(int(match[2]) if match[2] else size - 1, size - 1)
        with open(path, "rb") as handle:
            handle.seek(start)
            body = handle.read(max(0, end - start + 1))
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args) -> None:  # keep test output quiet
        pass


@pytest.fixture
def serve():
    """``serve(folder) -> base URL`` of a local HTTP server over ``folder``."""
    servers = []

    def start(folder: Path) -> str:
        handler = partial(_RangeHandler, directory=str(folder))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
