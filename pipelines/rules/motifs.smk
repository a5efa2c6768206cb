# A job's trained Sparling model -> motifs (PWM files, logos, JASPAR names, families) ->
# genome-wide sites (runs with a genome and `scan`) -> one HTML report; a run with several
# seeds also gets the seed stability of its families, shown in each seed's report; a run with
# `diagnostics: N` also gets its training diagnostics (`diagnose`), shown there too.


rule export:
    """Motifs of the Sparling model: MEME/JASPAR/TRANSFAC/HOMER, logos, Tomtom names."""
    input:
        metrics=lambda wc: fill(rules.train.output.metrics, wc, model="sparling"),
    output:
        summary=job_path("sparling", "motifs", "motifs.json"),
        meme=job_path("sparling", "motifs", "motifs.meme"),
        tomtom=job_path("sparling", "motifs", "tomtom.tsv"),
    params:
        sg=SG,
        model=lambda wc, input: Path(input.metrics).parent,
        jaspar=export_args,
    log:
        job_path("export.log", root=LOGS),
    benchmark:
        job_path("export.tsv", root=BENCHMARKS)
    threads: 2
    resources:
        mem_mb=4000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} export --model {params.model} {params.jaspar} > {log} 2>&1"


rule scan_part:
    """One job of a scattered scan (`scan_jobs` or `scan_job_bases`): about
    1/N of the genome's bases."""
    input:
        summary=rules.export.output.summary,
    output:
        part=temp(job_path("sparling", "tracks", "parts", PART)),
    params:
        sg=SG,
        model=lambda wc, input: Path(input.summary).parents[1],
        fasta=lambda wc: genome_fasta(run_of(wc).genome),
        out=lambda wc, output: Path(output.part).parents[1],
        part=lambda wc: f"{int(wc.part)}/{int(wc.parts)}",
    log:
        job_path("scan", "part-{part}-of-{parts}.log", root=LOGS),
    benchmark:
        job_path("scan", "part-{part}-of-{parts}.tsv", root=BENCHMARKS)
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} scan --model {params.model} --threads {threads} "
        "--fasta {params.fasta} --out {params.out} --part {params.part} > {log} 2>&1"


rule scan:
    """Motif sites genome-wide: BED9 (+ .track), bigBed, one activation bigWig per motif, the
    browser files; one job, or the gather of `scan_jobs` parts; a run with several seeds
    labels each site with its consensus family (after `stability`)."""
    input:
        summary=rules.export.output.summary,
        parts=lambda wc: scan_parts(rules.scan_part.output.part, run_of(wc).scan_jobs, wc),
        stability=stability_table,
    output:
        bed=job_path("sparling", "tracks", "motif_sites.bed"),
        bigbed=job_path("sparling", "tracks", "motif_sites.bb"),
        summary=job_path("sparling", "tracks", "scan.json"),
    params:
        sg=SG,
        model=lambda wc, input: Path(input.summary).parents[1],
        fasta=lambda wc: genome_fasta(run_of(wc).genome),
        out=lambda wc, output: Path(output.summary).parent,
        gather=lambda wc: gather_args(run_of(wc).scan_jobs),
        stability=scan_stability_args,
    log:
        job_path("scan.log", root=LOGS),
    benchmark:
        job_path("scan.tsv", root=BENCHMARKS)
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} scan --model {params.model} --threads {threads} "
        "--fasta {params.fasta} --out {params.out} {params.gather} {params.stability} "
        "> {log} 2>&1"


rule diagnose:
    """Training diagnostics (runs with `diagnostics: N`): the motif layer's topology at each
    kept checkpoint, shown in the report."""
    input:
        metrics=lambda wc: fill(rules.train.output.metrics, wc, model="sparling"),
    output:
        summary=job_path("sparling", "diagnostics", "diagnostics.json"),
    params:
        sg=SG,
        model=lambda wc, input: Path(input.metrics).parent,
    log:
        job_path("diagnose.log", root=LOGS),
    benchmark:
        job_path("diagnose.tsv", root=BENCHMARKS)
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.sg} diagnose --model {params.model} --threads {threads} > {log} 2>&1"


rule stability:
    """Which motif families recur in every seed of a run (runs with two or more seeds)."""
    input:
        stability_inputs,
    output:
        table=run_path("stability.json"),
    params:
        sg=SG,
        models=stability_args,
    log:
        run_path("stability.log", root=LOGS),
    benchmark:
        run_path("stability.tsv", root=BENCHMARKS)
    threads: 1
    resources:
        mem_mb=2000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} stability {params.models} --out {output.table} > {log} 2>&1"


rule report:
    """One self-contained HTML page: metrics, annealing figures, motifs, names, tracks."""
    input:
        unpack(report_inputs),
    output:
        html=job_path("report.html"),
    params:
        sg=SG,
        args=report_args,
    log:
        job_path("report.log", root=LOGS),
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} report {params.args} --out {output.html} > {log} 2>&1"
