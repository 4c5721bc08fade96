"""What DuckDB reads from a `rocescope export` folder, as one JSON document on standard output
(pcap-tools/cli/tests/export_duckdb.rs compares it with the rocescope binary's own outputs).

    python3 duckdb_check.py DIR

Per capture file: its frames and each frame's BTH PSN (packets), each frame's flow and analysis
fields written as `rocescope decode -e` writes them (packets), each flow's id, retransmitted
frames, losses and completed messages (flows), each message's completion frame and latency
(messages), the events of each kind and `--replay`'s findings (events); the Hive partition columns seen, the schema
version and sort order of every packets file, and whether each file's rows are in that order.
"""
import glob
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
for (f, kind, n) in c.sql(
    f"select capture_file, kind, count(*) from {t('events')} where kind in ('loss', 'retransmission', 'capture_gap') group by all order by all"
).fetchall():
    out[f].setdefault("events", {})[kind] = n
# `--replay`'s findings.
for row in c.sql(
    f"""select capture_file, flow, flow_index, kind, rule, frame, frames, time_ns::varchar, expected, seen from {t('events')}
    where kind in ('departure', 'ambiguous') order by all"""
).fetchall():
    out[row[0]].setdefault("findings", []).append(list(row[1:]))
# The analysis fields, as `decode -e` writes values (booleans 0/1, lists joined by commas).
ANALYSIS = [
    "flow", "analysis_retransmission", "analysis_retransmission_cause", "analysis_retransmission_trigger",
    "analysis_spurious", "analysis_loss", "analysis_loss_signal", "analysis_out_of_order", "analysis_psn_gap",
    "analysis_acked_unseen", "analysis_duplicate_nak", "analysis_ack_rtt_ns", "analysis_message_complete",
    "analysis_ce_to_cnp_ns",
]


def text(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return str(v)


for row in c.sql(f"select capture_file, frame, {', '.join(ANALYSIS)} from {t('packets')} order by capture_file, frame").fetchall():
    out[row[0]].setdefault("analysis", []).append("\t".join([str(row[1])] + [text(v) for v in row[2:]]))
# Each flow's tap, as its packets have it.
for (f, fid, tap) in c.sql(f"select distinct capture_file, flow, tap from {t('packets')} where flow is not null order by all").fetchall():
    out[f].setdefault("taps", []).append([fid, tap])
# A data packet's message by docs/cluster.md's join (rocescope.analysis.message's value).
for (f, frame, message) in c.sql(
    f"""select p.capture_file, p.frame, m.index from {t('packets')} p join {t('messages')} m
    on p.capture_file = m.capture_file and p.flow_index = m.flow_index and p.bth_psn between m.first_psn and coalesce(m.last_psn, m.first_psn)
    where p.flow_index is not null order by all"""
).fetchall():
    out[f].setdefault("message_join", []).append([frame, message])
# Each packets file's rows in its stated order: flow_index (none last), time, frame.
c.sql("set threads = 1")
unsorted = []
for path in sorted(glob.glob(f"{d}/packets/**/*.parquet", recursive=True)):
    rows = c.sql(f"select flow_index, time_ns, frame from read_parquet('{path}')").fetchall()
    keys = [(f if f is not None else 2**32, t, n) for (f, t, n) in rows]
    if keys != sorted(keys):
        unsorted.append(path)
out["_unsorted_files"] = unsorted
out["_sort_orders"] = sorted(
    {v.decode() for (v,) in c.sql(f"select value from parquet_kv_metadata('{d}/packets/**/*.parquet') where key = 'rocescope.sort_order'").fetchall()}
)
# The partition columns (Hive folders) and the schema version of every packets file.
out["_partitions"] = sorted(set(map(tuple, c.sql(f"select distinct host, date::varchar from {t('packets')}").fetchall())))
out["_versions"] = sorted(
    {v.decode() for (v,) in c.sql(f"select value from parquet_kv_metadata('{d}/packets/**/*.parquet') where key = 'rocescope.schema_version'").fetchall()}
)
print(json.dumps(out))
