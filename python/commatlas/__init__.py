"""commatlas: GPU communication characterization suite (Python side: CLI, launcher, reports)."""

import time

__version__ = "0.1.0"

# The command's start on its own clock, taken when the package is first imported (before the
# subcommands' imports): the end record's wall time counts from here. The process's start time
# (/proc/self/stat) would also count what ran before in that process (`bash -c '... && commatlas'`).
STARTED = time.monotonic()
