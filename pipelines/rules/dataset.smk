# Reference -> labelled-site dataset (HDF5), once per genome.


rule dataset:
    """Labelled sites of one genome (FASTA + GFF3/GTF or BED) cut into windows, in HDF5."""
    output:
        h5=genome_path("dataset.h5"),
    params:
        sg=SG,
        source=genome_source_args,
    log:
        genome_path("dataset.log", root=LOGS),
    benchmark:
        genome_path("dataset.tsv", root=BENCHMARKS)
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} dataset {params.source} --out {output.h5} --force > {log} 2>&1"
