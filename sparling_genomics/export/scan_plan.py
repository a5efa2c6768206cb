"""How many jobs a genome scan may be scattered over, checked when the jobs are planned.

A scan reads each sequence in chunks of ``SCAN_CHUNK`` bases (``scan --chunk``) and a job scans
whole chunks (``export.scan.plan_pieces``), so a genome of B bases has work for at most
ceil(B / chunk) jobs: more jobs are empty ones, each still loading the model. The workflow's
plan (``scan_jobs``, ``scan_job_bases``) is refused in one line with the number of jobs it
would make when a job would be smaller than a chunk (``scan_job_bases: 50``, meant as 50 Mb:
6,000 jobs for a 300 kb genome, 62 million for a human one), when more jobs than chunks are
asked for, or more than ``MAX_SCAN_JOBS``; ``scan --part I/N`` and ``--gather N``, whose N a
planner chose, only the last (a small genome's test may leave a part empty). No torch here:
the workflow plans with it.
"""

from __future__ import annotations

from ..errors import ConfigError

#: Bases a scan reads at a time (``scan --chunk``'s default, the workflow's scans).
SCAN_CHUNK = 50_000

#: The most jobs one scan is planned over: SLURM's default ``MaxJobCount``, what a cluster
#: holds at once before it refuses submissions (a human genome in jobs of 310 kb).
MAX_SCAN_JOBS = 10_000


def scan_jobs(bases: int, *, jobs: int | None = None, job_bases: int | None = None,
              chunk: int = SCAN_CHUNK, genome: str = "the genome") -> int:  # fmt: skip
    """The jobs the workflow scatters a scan of ``genome`` (``bases`` bases) over: ``jobs``,
    or one per ``job_bases`` bases (rounded up); a ``ConfigError`` saying how many it would
    make when a job would be smaller than a ``chunk``, when there are more jobs than chunks,
    or more than ``MAX_SCAN_JOBS``."""
    if (jobs is None) == (job_bases is None):
        raise ValueError("give jobs or job_bases")
    count = jobs if jobs is not None else max(1, -(-bases // job_bases))
    asked = f"scan_jobs {jobs}" if jobs is not None else f"scan_job_bases {job_bases}"
    jobs_made = f"{count:,} scan job{'' if count == 1 else 's'}"
    planned = f"{asked} would make {jobs_made} for the {bases:,} bases of {genome}"
    useful = max(1, -(-bases // chunk))
    if job_bases is not None and job_bases < chunk:
        raise ConfigError(f"{planned}, but a job scans whole chunks of {chunk:,} bases: give "
                          f"at least {chunk} (scan_job_bases counts bases: 50 Mb is "
                          "50000000)")  # fmt: skip
    if count > useful:
        raise ConfigError(f"{planned}, but at most {useful:,} can have work (a job scans "
                          f"whole chunks of {chunk:,} bases): give at most {useful:,} "
                          "jobs")  # fmt: skip
    check_job_count(count, bases, planned)
    return count


def check_job_count(count: int, bases: int, planned: str) -> None:
    """A ``ConfigError`` (``planned``: what was asked, and the jobs it would make) when
    ``count`` jobs are more than ``MAX_SCAN_JOBS``."""
    if count > MAX_SCAN_JOBS:
        least = -(-bases // MAX_SCAN_JOBS)
        size = f" (jobs of {least:,} bases or more)" if least > SCAN_CHUNK else ""
        raise ConfigError(f"{planned}, more than the {MAX_SCAN_JOBS:,} a cluster queues by "
                          f"default: give at most {MAX_SCAN_JOBS:,} jobs{size}")  # fmt: skip
