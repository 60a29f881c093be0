"""What comes in and goes out as files: the engine program and what it declares (`engine`), the
one reader of results.jsonl (`results`, typed; `records`, raw and the meta/end records), the point
key (`points`), the cache-residency decision made while reading (`residency`), and writing files
whole (`outputs`). Imports only the package's base modules (errors, units)."""
