# Each job's models -- the Sparling model and, where the run asks, the non-sparse baseline --
# trained and scored on the held-out block, then compared. Training picks CUDA when present
# (`--device auto`), so `gpu=1` is a request a cluster profile turns into a GPU, not a
# requirement.


rule train:
    """Train one model of a job: `{model}` is `sparling` or `baseline` (`train --baseline`)."""
    input:
        unpack(train_inputs),
    output:
        # One file only: Snakemake would create the folder of any other output inside the
        # run directory, and `train` refuses a non-empty one. metrics.json is written last.
        metrics=job_path("{model}", "metrics.json"),
    params:
        sg=SG,
        args=train_args,
        out=lambda wc, output: Path(output.metrics).parent,
    log:
        job_path("train_{model}.log", root=LOGS),
    benchmark:
        job_path("train_{model}.tsv", root=BENCHMARKS)
    threads: lambda wc: run_of(wc).threads
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=train_runtime,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        # No --no-progress: into a log file the trainer writes a plain progress line every 30 s.
        # The run folder is this job's alone: a retried job (a node lost, a time limit hit)
        # continues the killed attempt's run from its last checkpoint when the config is the
        # same, and moves a run of another config aside (RUN.replaced-N) otherwise
        # (--resume-if-same: nothing finished is deleted).
        "OMP_NUM_THREADS={threads} {params.sg} train {params.args} --resume-if-same "
        "--out {params.out} > {log} 2>&1"


rule compare:
    """The job's test metrics: Sparling beside its baseline (and their ratios), or alone."""
    input:
        unpack(compare_inputs),
    output:
        metrics=job_path("metrics.json"),
    params:
        sg=SG,
        args=compare_args,
    log:
        job_path("compare.log", root=LOGS),
    threads: 1
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} compare {params.args} --out {output.metrics} > {log} 2>&1"
