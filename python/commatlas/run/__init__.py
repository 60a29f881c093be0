"""Running the engine: `commatlas run` (execute), the selection of benchmarks, MPI launchers and
libraries, passes (--repeat, --sweep-env, --tune presets), --resume, the progress bar, and
`commatlas check-order` (which runs benchmarks alone). It sits above the report because a run ends
with the terminal summary and the report; the CLI is the only layer above it."""
