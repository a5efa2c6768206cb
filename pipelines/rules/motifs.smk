# Trained model -> motifs (PWM files, logos, JASPAR names) -> genome-wide sites -> report.


rule export:
    input:
        metrics=OUT / "{genome}" / "{run}" / "seed{seed}" / "sparling" / "metrics.json",
    output:
        summary=OUT / "{genome}" / "{run}" / "seed{seed}" / "sparling" / "motifs" / "motifs.json",
        meme=OUT / "{genome}" / "{run}" / "seed{seed}" / "sparling" / "motifs" / "motifs.meme",
        tomtom=OUT / "{genome}" / "{run}" / "seed{seed}" / "sparling" / "motifs" / "tomtom.tsv",
    params:
        sg=SG,
        run=lambda wc, input: Path(input.metrics).parent,
        jaspar=jaspar_args(),
    log:
        "logs/{genome}/{run}/seed{seed}/export.log",
    benchmark:
        "benchmarks/{genome}/{run}/seed{seed}/export.tsv"
    threads: 2
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} export --model {params.run} {params.jaspar} > {log} 2>&1"


rule scan:
    input:
        summary=OUT / "{genome}" / "{run}" / "seed{seed}" / "sparling" / "motifs" / "motifs.json",
    output:
        bed=OUT / "{genome}" / "{run}" / "seed{seed}" / "sparling" / "tracks" / "motif_sites.bed",
        bigbed=OUT / "{genome}" / "{run}" / "seed{seed}" / "sparling" / "tracks" / "motif_sites.bb",
        summary=OUT / "{genome}" / "{run}" / "seed{seed}" / "sparling" / "tracks" / "scan.json",
    params:
        sg=SG,
        run=lambda wc, input: Path(input.summary).parents[1],
        fasta=lambda wc: genome_fasta(wc.genome),
        out=lambda wc, output: Path(output.summary).parent,
    log:
        "logs/{genome}/{run}/seed{seed}/scan.log",
    benchmark:
        "benchmarks/{genome}/{run}/seed{seed}/scan.tsv"
    threads: 2
    resources:
        gpu=1,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} scan --model {params.run} --fasta {params.fasta} "
        "--out {params.out} > {log} 2>&1"


rule report:
    input:
        unpack(report_inputs),
    output:
        OUT / "{genome}" / "{run}" / "seed{seed}" / "report.html",
    params:
        sg=SG,
        run=lambda wc, input: Path(input.motifs).parents[1],
        extra=lambda wc, input: " ".join(
            ([f"--scan {Path(input.scan).parent}"] if "scan" in input.keys() else [])
            + ([f"--baseline {Path(input.baseline).parent}"] if "baseline" in input.keys() else [])
        ),
        title=lambda wc: f"{wc.run} on {wc.genome}, seed {wc.seed}",
    log:
        "logs/{genome}/{run}/seed{seed}/report.log",
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} report --model {params.run} {params.extra} --title '{params.title}' "
        "--out {output} > {log} 2>&1"
