"""How a text input gets broken on its way to a user, as hypothesis strategies, and the rule
every reader keeps: a typed one-line error (exit 2 at the command line), or the clean file's
own result. Used by the property tests of the genome readers and of configs.

``SAME``: what must read as the clean file (a UTF-8 byte-order mark, Windows line ends, gzip).
``REFUSED``: what must be refused (an empty file, a feature's start and end swapped). The rest
(cut short, bytes that are not text, columns swapped, a gzip cut or with a byte flipped) may
make another valid file, so they must be refused or read, never crash.
"""

from __future__ import annotations

import codecs
import gzip
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from sparling_genomics.errors import SparlingError

BOM = codecs.BOM_UTF8
SAME = ("bom", "crlf", "bom+crlf", "gzip", "bom+gzip")
REFUSED = ("empty",)
OTHER = ("cut", "garbage", "swap", "gzip-cut", "gzip-flip")

#: Few examples a test (a file is written and read each time) and no per-example deadline:
#: the suite runs on 2 busy cores.
FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.data_too_large])  # fmt: skip


@dataclass(frozen=True)
class Refused:
    """A typed error's one line."""

    message: str


def read_or_refuse(read, path: Path, *, names_file: bool = True):
    """``read(path)``, or :class:`Refused` with the message of the typed error it raised: one
    line, naming the file (``names_file``). Any other exception fails the test."""
    try:
        return read(path)
    except SparlingError as exc:
        message = str(exc)
        assert message and "\n" not in message, repr(message)
        if names_file:
            assert path.name in message, message
        return Refused(message)


@st.composite
def broken(draw, data: bytes, *, hows=SAME + REFUSED + OTHER) -> tuple[str, bytes]:
    """(how, bytes): ``data`` broken one way, chosen among ``hows``."""
    how = draw(st.sampled_from(hows))
    if how in SAME:
        out = BOM + data if how.startswith("bom") else data
        out = out.replace(b"\n", b"\r\n") if how.endswith("crlf") else out
        return how, gzip.compress(out, mtime=0) if how.endswith("gzip") else out
    if how == "empty":
        return how, b""
    if how == "cut":
        return how, data[: draw(st.integers(0, max(0, len(data) - 1)))]
    if how == "garbage":
        at = draw(st.integers(0, len(data)))
        return how, data[:at] + draw(st.binary(min_size=1, max_size=6)) + data[at:]
    if how == "swap":
        lines = data.split(b"\n")
        i = draw(st.integers(0, len(lines) - 1))
        cols = lines[i].split(b"\t")
        if len(cols) > 1:
            a, b = draw(st.lists(st.integers(0, len(cols) - 1), min_size=2, max_size=2,
                                 unique=True))  # fmt: skip
            cols[a], cols[b] = cols[b], cols[a]
            lines[i] = b"\t".join(cols)
        return how, b"\n".join(lines)
    packed = bytearray(gzip.compress(data, mtime=0))
    at = draw(st.integers(0, len(packed) - 1))
    if how == "gzip-cut":
        return how, bytes(packed[:at])
    packed[at] ^= draw(st.integers(1, 255))  # gzip-flip
    return how, bytes(packed)


def check_broken(how: str, got, clean) -> None:
    """The rule for one broken input: ``SAME`` reads as ``clean``, ``REFUSED`` is refused,
    anything else was read or refused (``read_or_refuse`` has failed the test otherwise)."""
    if how in SAME:
        assert got == clean, (how, got)
    elif how in REFUSED:
        assert isinstance(got, Refused), (how, got)
