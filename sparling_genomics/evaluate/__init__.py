"""Evaluation: motif metrics against known truth, end-to-end metrics, model evaluation."""
