"""``python -m reactorfed``: the same as the ``reactorfed`` command."""

import sys

from .cli.main import main

sys.exit(main())
