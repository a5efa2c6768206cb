"""What each verb runs over a run folder, one module a verb (``export``: motifs.py, ``scan``:
tracks.py, ``variants``, ``diagnose``: diagnostics.py, ``concepts``, ``stability``): load the
run, call the pure pieces below (``evaluate/``, ``export/``, ``report/``), write the outputs.
No runner imports another; what two share lives in a lower layer."""
