"""`python -m commatlas ...`: the same CLI as the `commatlas` script, without installing it."""

import sys

from commatlas.cli import main

sys.exit(main())
