"""How many jobs a scan may be scattered over: the workflow's plan refused, with the number of
jobs it would make, when a job is smaller than a chunk, when jobs outnumber the genome's chunks,
or beyond a cluster's default queue."""

import pytest

from sparling_genomics.errors import ConfigError
from sparling_genomics.export.scan_plan import MAX_SCAN_JOBS, SCAN_CHUNK, check_job_count, scan_jobs


def test_jobs_or_bases_a_job_give_the_plan():
    assert scan_jobs(300_000, jobs=3) == 3
    assert scan_jobs(300_000, job_bases=70_000) == 5  # rounded up
    assert scan_jobs(30_000_000, job_bases=50_000_000) == 1
    assert scan_jobs(300_000, jobs=6) == 6  # one job per 50 kb chunk: each has work


def test_bases_below_the_chunk_are_refused_with_the_jobs_they_would_make():
    """scan_job_bases: 50 (meant as 50 Mb): 6,000 jobs for the tiny genome, 62 million for a
    human one."""
    with pytest.raises(ConfigError, match="scan_job_bases 50 would make 6,000 scan jobs for "
                                          "the 300,000 bases of tiny, but a job scans whole "
                                          "chunks of 50,000 bases: give at least 50000"):
        scan_jobs(300_000, job_bases=50, genome="tiny")
    with pytest.raises(ConfigError, match="would make 62,000,000 scan jobs"):
        scan_jobs(3_100_000_000, job_bases=50)
    with pytest.raises(ConfigError, match="give at least 50000"):
        scan_jobs(10_000, job_bases=SCAN_CHUNK - 1)  # one job, but not what was meant


def test_more_jobs_than_chunks_or_than_a_cluster_queues_are_refused():
    with pytest.raises(ConfigError, match="scan_jobs 7 would make 7 scan jobs for the 300,000 "
                                          "bases of the genome, but at most 6 can have work"):
        scan_jobs(300_000, jobs=7)
    with pytest.raises(ConfigError, match=r"62,000 scan jobs .* more than the 10,000 a cluster "
                                          r"queues by default: give at most 10,000 jobs \(jobs "
                                          r"of 310,000 bases or more\)"):
        scan_jobs(3_100_000_000, job_bases=SCAN_CHUNK)
    assert scan_jobs(3_100_000_000, job_bases=310_000) == MAX_SCAN_JOBS


def test_a_hand_given_part_count_is_only_bounded_by_the_queue():
    """scan --part I/N: a small genome's test may leave parts empty; 10,001 parts may not."""
    check_job_count(MAX_SCAN_JOBS, 9_000, "--part 1/10000")
    with pytest.raises(ConfigError, match="--part 1/10001 would make"):
        check_job_count(MAX_SCAN_JOBS + 1, 9_000, "--part 1/10001 would make 10,001 scan jobs")
