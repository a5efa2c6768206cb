"""The run report: one self-contained HTML page (``page.py``), its sections and figures, read
from what the verbs wrote into a run folder."""
