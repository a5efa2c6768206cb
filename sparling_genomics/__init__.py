"""sparling-genomics: motif discovery with Sparling (h ∘ sparse ∘ g) networks."""

__version__ = "0.1.0"
