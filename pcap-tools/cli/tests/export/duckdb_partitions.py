"""The Hive partition columns DuckDB reads from a `rocescope export` folder whose partition values
were taken from the captures (`--partition app=@application,note=@comment,link=@interface,
day=@date,hw=@hardware`), as one JSON document (pcap-tools/cli/tests/export_duckdb.rs compares it
with capinfos and tshark).

    python3 duckdb_partitions.py DIR
"""
import json
import sys

import duckdb

d = sys.argv[1]
c = duckdb.connect()
t = lambda name: f"read_parquet('{d}/{name}/**/*.parquet', hive_partitioning=true, union_by_name=true)"
v = lambda col: f"{col}::varchar"
out = {
    "packets": c.sql(
        f"select distinct capture_file, interface, {v('app')}, {v('note')}, {v('link')}, {v('day')}, {v('hw')} "
        f"from {t('packets')} order by all"
    ).fetchall(),
    "flows": c.sql(f"select distinct capture_file, interface, {v('link')} from {t('flows')} order by all").fetchall(),
    "rows": {
        table: c.sql(f"select count(*) from {t(table)}").fetchall()[0][0] for table in ("packets", "messages", "events")
    },
}
print(json.dumps(out))
