# `apply:` -- a trained model on other genomes, unchanged: the genome's dataset (rule
# `dataset`), the model scored on every window, its motif sites genome-wide, one report.


rule apply_evaluate:
    """The model on every window of another genome's dataset (classes matched by name)."""
    input:
        unpack(applied_inputs),
    output:
        metrics=applied_path("metrics.json"),
    params:
        sg=SG,
        model=lambda wc: APPLIED.model,
    log:
        applied_path("evaluate.log", root=LOGS),
    benchmark:
        applied_path("evaluate.tsv", root=BENCHMARKS)
    threads: 2
    resources:
        gpu=1,
        mem_mb=4000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} evaluate --model {params.model} "
        "--dataset {input.dataset} --split all --out {output.metrics} > {log} 2>&1"


rule apply_scan_part:
    """One job of the applied model's scattered scan (`apply.scan_jobs` or `scan_job_bases`)."""
    input:
        model=lambda wc: list(APPLIED.needs),
    output:
        part=temp(applied_path("tracks", "parts", PART)),
    params:
        sg=SG,
        model=lambda wc: APPLIED.model,
        fasta=lambda wc: genome_fasta(wc.genome),
        out=lambda wc, output: Path(output.part).parents[1],
        part=lambda wc: f"{int(wc.part)}/{int(wc.parts)}",
    log:
        applied_path("scan", "part-{part}-of-{parts}.log", root=LOGS),
    benchmark:
        applied_path("scan", "part-{part}-of-{parts}.tsv", root=BENCHMARKS)
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} scan --model {params.model} --threads {threads} "
        "--fasta {params.fasta} --out {params.out} --part {params.part} > {log} 2>&1"


rule apply_scan:
    """The model's motif sites on another genome: BED9 (+ .track), bigBed, bigWigs, the
    browser files; one job, or the gather of its scattered parts."""
    input:
        model=lambda wc: list(APPLIED.needs),
        parts=lambda wc: scan_parts(rules.apply_scan_part.output.part,
                                    APPLIED.scan_jobs[wc.genome], wc),
    output:
        bed=applied_path("tracks", "motif_sites.bed"),
        bigbed=applied_path("tracks", "motif_sites.bb"),
        summary=applied_path("tracks", "scan.json"),
    params:
        sg=SG,
        model=lambda wc: APPLIED.model,
        fasta=lambda wc: genome_fasta(wc.genome),
        out=lambda wc, output: Path(output.summary).parent,
        gather=lambda wc: gather_args(APPLIED.scan_jobs[wc.genome]),
    log:
        applied_path("scan.log", root=LOGS),
    benchmark:
        applied_path("scan.tsv", root=BENCHMARKS)
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} scan --model {params.model} --threads {threads} "
        "--fasta {params.fasta} --out {params.out} {params.gather} > {log} 2>&1"


rule apply_report:
    """The applied model's report: its motifs, its scores and sites on the other genome."""
    input:
        unpack(applied_report_inputs),
    output:
        html=applied_path("report.html"),
    params:
        sg=SG,
        args=applied_report_args,
    log:
        applied_path("report.log", root=LOGS),
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} report {params.args} --out {output.html} > {log} 2>&1"
