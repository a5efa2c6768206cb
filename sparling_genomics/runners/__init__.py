"""What each verb runs over a run folder, one module a verb, named after it (``export``,
``scan``, ``variants``, ``diagnose``, ``concepts``, ``stability``): load the run, call the
pure pieces below (``evaluate/``, ``export/``, ``report/``), write the outputs. No runner
imports another; what two share lives in a lower layer."""
