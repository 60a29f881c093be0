"""Each job's 1 B half round trip (ns), per round: the engine's median and the OSU method's figure.
Reads the records as run.sh wrote them, packed per batch: python3 summarize.py batch-1.tar.gz ..."""
import json
import sys
import tarfile

SLOW_NS = 300  # between the two states this VM shows (about 130-200 ns, about 390-460 ns)
for packed in sys.argv[1:]:
    with tarfile.open(packed) as tar:
        files = {m.name.split("/")[-1]: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
    rows = []
    for name in sorted(n for n in files if n.startswith("engine-")):
        k = name.split("-")[1].split(".")[0]
        result = next(r for r in map(json.loads, files[name].splitlines()) if r["type"] == "result")
        osu = json.loads(files[f"osu-{k}.jsonl"].splitlines()[0])
        rows.append((k, result["latency_us"] * 1000, osu["latency_us"] * 1000))
    print(f"{packed}: round, engine ns, OSU ns")
    for k, e, o in rows:
        print(f"  {k}  {e:5.0f}  {o:5.0f}")
    print(f"  slow jobs (> {SLOW_NS} ns): engine {sum(e > SLOW_NS for _, e, _ in rows)} of {len(rows)}, "
          f"OSU {sum(o > SLOW_NS for _, _, o in rows)} of {len(rows)}")
