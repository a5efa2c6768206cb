"""``python -m sparling_genomics.cli VERB ...``."""

import sys

from .main import main

sys.exit(main(prog_name="sparling-genomics"))
