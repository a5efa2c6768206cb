# Dataset -> the Sparling model and, by config, the non-sparse baseline; each scored on the
# held-out block. Training picks CUDA when present (`--device auto`), so `gpu=1` is a
# request a cluster profile turns into a GPU, not a requirement.


rule train_sparling:
    input:
        dataset=OUT / "{genome}" / "dataset.h5",
    output:
        # One file only: Snakemake would create the folder of any other output inside the
        # run directory, and `train` refuses a non-empty one. metrics.json is written last.
        metrics=OUT / "{genome}" / "{run}" / "seed{seed}" / "sparling" / "metrics.json",
    params:
        sg=SG,
        args=lambda wc: train_args(wc),
        out=lambda wc, output: Path(output.metrics).parent,
    log:
        "logs/{genome}/{run}/seed{seed}/train_sparling.log",
    benchmark:
        "benchmarks/{genome}/{run}/seed{seed}/train_sparling.tsv"
    threads: lambda wc: config["runs"][wc.run]["threads"]
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=lambda wc: int(config["runs"][wc.run]["train_minutes"]) + 15,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} train {params.args} --dataset {input.dataset} "
        "--out {params.out} --no-progress > {log} 2>&1"


rule train_baseline:
    input:
        dataset=OUT / "{genome}" / "dataset.h5",
    output:
        metrics=OUT / "{genome}" / "{run}" / "seed{seed}" / "baseline" / "metrics.json",
    params:
        sg=SG,
        args=lambda wc: train_args(wc, baseline=True),
        out=lambda wc, output: Path(output.metrics).parent,
    log:
        "logs/{genome}/{run}/seed{seed}/train_baseline.log",
    benchmark:
        "benchmarks/{genome}/{run}/seed{seed}/train_baseline.tsv"
    threads: lambda wc: config["runs"][wc.run]["threads"]
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=lambda wc: int(config["runs"][wc.run]["baseline_minutes"]) + 15,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} train {params.args} --dataset {input.dataset} "
        "--out {params.out} --no-progress > {log} 2>&1"


rule compare:
    input:
        unpack(compare_inputs),
    output:
        OUT / "{genome}" / "{run}" / "seed{seed}" / "metrics.json",
    params:
        sg=SG,
        baseline=lambda wc, input: f"--baseline {Path(input.baseline).parent}" if "baseline" in input.keys() else "",
        sparling=lambda wc, input: Path(input.sparling).parent,
    log:
        "logs/{genome}/{run}/seed{seed}/compare.log",
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} compare --model {params.sparling} {params.baseline} --out {output} > {log} 2>&1"
