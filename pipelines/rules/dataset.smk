# Reference -> labelled-site dataset (HDF5), once per genome.


rule dataset:
    output:
        OUT / "{genome}" / "dataset.h5",
    params:
        sg=SG,
        source=genome_source_args,
    log:
        "logs/{genome}/dataset.log",
    benchmark:
        "benchmarks/{genome}/dataset.tsv"
    threads: 1
    resources:
        mem_mb=4000,
    conda:
        "../envs/sparling-genomics.yaml"
    shell:
        "{params.sg} dataset {params.source} --out {output} --force > {log} 2>&1"
