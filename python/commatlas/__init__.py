"""commatlas: GPU communication characterization suite (Python side: CLI, launcher, reports)."""

__version__ = "0.1.0"
