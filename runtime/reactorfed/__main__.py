"""``python -m reactorfed``: the same as the ``reactorfed`` command."""

import sys

from .cli import main

sys.exit(main())
