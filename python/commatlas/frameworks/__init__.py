"""Measurements at the level of a framework (PyTorch), taken in the framework's own processes and
written as records by the engine (`commatlas-engine ingest`), so each figure stands beside the
engine's figure for the same movement."""
