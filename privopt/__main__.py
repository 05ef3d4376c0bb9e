"""``python -m privopt``: the command line (see :mod:`privopt.cli`)."""

import sys

from privopt.cli import main

sys.exit(main())
