"""``python -m sparling_genomics VERB ...``: the same command line as ``sparling-genomics``."""

import sys

from .cli.main import main

sys.exit(main(prog_name="sparling-genomics"))
