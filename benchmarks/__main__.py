"""``python -m benchmarks NAME [options]``: see :mod:`benchmarks.cli`."""

import sys

from .cli import main

sys.exit(main())
