"""The cluster report of a `rocescope export` folder, on Spark (docs/cluster.md, "Spark").

    spark-submit rocescope_report.py DIR            # on a cluster: DIR on HDFS, S3, …
    python3 rocescope_report.py DIR                 # local mode (pip install pyspark)

DIR is what `rocescope export … -o DIR` wrote (its packets/, flows/, messages/, events/ folders,
with any partition folders below them). Prints one JSON document:

- per capture file: its frames, flows, retransmitted frames and losses, completed messages with
  the sum, minimum, maximum and exact 50th/99th percentiles of their latency, and its CNPs;
- the top flows by retransmissions across every capture;
- where losses were seen: per capture file, tap and interface;
- CNP storms over time: CNPs per 10 µs window, the busiest windows first.

pcap-tools/cli/tests/export_spark.rs runs this very script in local mode and compares it with
the rocescope binary's own outputs.
"""
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

d = sys.argv[1].rstrip("/")
spark = SparkSession.builder.appName("rocescope-report").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")


def table(name):
    # Hive partition folders become columns; captures' files may differ in optional columns.
    return spark.read.option("mergeSchema", "true").parquet(f"{d}/{name}")


packets, flows, messages, events = (table(t) for t in ("packets", "flows", "messages", "events"))

report = {"captures": {}}
caps = report["captures"]
for r in packets.groupBy("capture_file").agg(
    F.count("*").alias("frames"), F.sum(F.when(F.col("bth_opcode") == 129, 1).otherwise(0)).alias("cnps")
).collect():
    caps[r["capture_file"]] = {"frames": r["frames"], "cnps": int(r["cnps"])}
for r in flows.groupBy("capture_file").agg(
    F.count("*").alias("flows"), F.sum("retransmitted").alias("retransmitted"), F.sum("losses").alias("losses")
).collect():
    caps[r["capture_file"]].update(flows=r["flows"], retransmitted=int(r["retransmitted"]), losses=int(r["losses"]))
done = messages.where(F.col("latency_ns").isNotNull()).groupBy("capture_file").agg(
    F.count("*").alias("completed"),
    F.sum("latency_ns").alias("sum"),
    F.min("latency_ns").alias("min"),
    F.max("latency_ns").alias("max"),
    F.expr("percentile(latency_ns, array(0.5, 0.99))").alias("p"),
)
for r in done.collect():
    caps[r["capture_file"]]["latency_ns"] = {
        "completed": r["completed"],
        "sum": int(r["sum"]),
        "min": int(r["min"]),
        "max": int(r["max"]),
        "p50": float(r["p"][0]),
        "p99": float(r["p"][1]),
    }
report["top_flows"] = [
    [r["capture_file"], r["id"], r["tap"], int(r["retransmitted"]), int(r["losses"])]
    for r in flows.orderBy(F.desc("retransmitted"), "capture_file", "flow_index").limit(20).collect()
]
report["losses_by_tap"] = [
    [r["capture_file"], r["tap"], int(r["interface"]), r["losses"]]
    for r in events.where(F.col("kind") == "loss")
    .join(flows.select("capture_file", "flow_index", "tap", "interface"), ["capture_file", "flow_index"])
    .groupBy("capture_file", "tap", "interface")
    .agg(F.count("*").alias("losses"))
    .orderBy(F.desc("losses"), "capture_file", "tap")
    .collect()
]
report["cnp_storms"] = [
    [str(r["window"]["start"]), r["cnps"]]
    for r in packets.where(F.col("bth_opcode") == 129)
    .groupBy(F.window("time", "10 microseconds").alias("window"))
    .agg(F.count("*").alias("cnps"))
    .orderBy(F.desc("cnps"))
    .limit(20)
    .collect()
]
print(json.dumps(report))
spark.stop()
