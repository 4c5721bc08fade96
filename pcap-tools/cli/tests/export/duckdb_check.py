"""What DuckDB reads from a `rocescope export` folder, as one JSON document on standard output
(pcap-tools/cli/tests/export_duckdb.rs compares it with the rocescope binary's own outputs).

    python3 duckdb_check.py DIR

Per capture file: its frames and each frame's BTH PSN (packets), each flow's id, retransmitted
frames, losses and completed messages (flows), each message's completion frame and latency
(messages), and the events of each kind (events); and the Hive partition columns seen.
"""
import json
import sys

import duckdb

d = sys.argv[1]
c = duckdb.connect()
t = lambda name: f"read_parquet('{d}/{name}/**/*.parquet', hive_partitioning=true, union_by_name=true)"
out = {}
for (f, n) in c.sql(f"select capture_file, count(*) from {t('packets')} group by all").fetchall():
    out.setdefault(f, {})["frames"] = n
for (f, frame, psn) in c.sql(f"select capture_file, frame, bth_psn from {t('packets')} order by capture_file, frame").fetchall():
    out[f].setdefault("psn", []).append([frame, psn])
for (f, fid, retx, losses, done) in c.sql(
    f"select capture_file, id, retransmitted, losses, messages_completed from {t('flows')} order by capture_file, flow_index"
).fetchall():
    out[f].setdefault("flows", []).append([fid, retx, losses, done])
for (f, fid, idx, frame, lat) in c.sql(
    f"select capture_file, flow, index, complete_frame, latency_ns from {t('messages')} order by capture_file, flow_index, index"
).fetchall():
    out[f].setdefault("messages", []).append([fid, idx, frame, lat])
for (f, kind, n) in c.sql(f"select capture_file, kind, count(*) from {t('events')} group by all order by all").fetchall():
    out[f].setdefault("events", {})[kind] = n
# The partition columns (Hive folders) and the schema version of every packets file.
out["_partitions"] = sorted(set(map(tuple, c.sql(f"select distinct host, date::varchar from {t('packets')}").fetchall())))
out["_versions"] = sorted(
    {v.decode() for (v,) in c.sql(f"select value from parquet_kv_metadata('{d}/packets/**/*.parquet') where key = 'rocescope.schema_version'").fetchall()}
)
print(json.dumps(out))
