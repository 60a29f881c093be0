"""What a run's numbers say: the answers (keys, labels, ranking), the findings, compare, the
harness and OSU checks, tuning, repeats, pair matrices and multi-node facts. Reads through
commatlas.io; prints and draws nothing of the report's."""
