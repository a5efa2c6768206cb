"""Networks: motif models g, heads h, and ``SparlingModel = h ∘ sparse ∘ g``."""
