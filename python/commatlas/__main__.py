"""`python -m commatlas ...` and the `commatlas` script: the CLI, with `commatlas run`'s driver
holder started before the CLI's imports (commatlas.io.engine.hold_driver_early)."""

import sys

from commatlas.io.engine import hold_driver_early


def run() -> int:
    hold_driver_early(sys.argv[1:])
    from commatlas.cli import main  # deliberate: imported after the holder has started, to overlap its driver start

    return main()


if __name__ == "__main__":
    sys.exit(run())
