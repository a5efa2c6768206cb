"""Concepts found *after* training in a layer's activations (positions x channels): a TopK
sparse autoencoder (``sae``), the three block-sparse featurizers (``block_sparse``) with block
size and k by minimum description length (``mdl``), Deleuzian difference clustering
(``deleuzian``); the measures that compare them (``measures``) and seed 002's synthetic
superposition of manifolds (``manifolds``). Plain arrays in, plain arrays out: a run's
activations are collected, and concepts exported as motifs, in ``runners/concepts.py``."""
