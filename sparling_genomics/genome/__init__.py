"""Genome access: sequence encoding, the bundled reference, motif databases."""
