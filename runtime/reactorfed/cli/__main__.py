"""``python -m reactorfed.cli``: the same as the ``reactorfed`` command."""

import sys

from .main import main

sys.exit(main())
