# Optional target (`planted: {enabled: true}`): the planted-motif task, where the true motifs
# are known -- train, export (Tomtom names against the planted JASPAR release), report.


rule train_planted:
    output:
        OUT / "planted" / "seed{seed}" / "run" / "metrics.json",
    params:
        sg=SG,
        preset=config["planted"]["preset"],
        out=lambda wc, output: Path(output[0]).parent,
    log:
        "logs/planted/seed{seed}/train_planted.log",
    benchmark:
        "benchmarks/planted/seed{seed}/train_planted.tsv"
    threads: config["planted"]["threads"]
    resources:
        gpu=1,
        mem_mb=8000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} train --task planted --preset {params.preset} "
        "--seed {wildcards.seed} --out {params.out} --no-progress > {log} 2>&1"


rule export_planted:
    input:
        OUT / "planted" / "seed{seed}" / "run" / "metrics.json",
    output:
        OUT / "planted" / "seed{seed}" / "run" / "motifs" / "motifs.json",
    params:
        sg=SG,
        run=lambda wc, input: Path(input[0]).parent,
    log:
        "logs/planted/seed{seed}/export_planted.log",
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} export --model {params.run} > {log} 2>&1"


rule report_planted:
    input:
        OUT / "planted" / "seed{seed}" / "run" / "motifs" / "motifs.json",
    output:
        OUT / "planted" / "seed{seed}" / "report.html",
    params:
        sg=SG,
        run=lambda wc, input: Path(input[0]).parents[1],
    log:
        "logs/planted/seed{seed}/report_planted.log",
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} report --model {params.run} --title 'Planted motifs, seed {wildcards.seed}' "
        "--out {output} > {log} 2>&1"
