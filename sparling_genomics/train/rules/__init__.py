"""The optional training rules around Algorithm 1: the interface (``base.py``), the rules
(``rollback.py``, ``channel_edit.py``) and their ordered registry (``registry.py``)."""
