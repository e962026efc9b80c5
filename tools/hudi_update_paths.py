"""Where does Hudi's hotfix update time go? Update paths and indexes on copies of one base table (`small`).

Run with:  COWMOR_JARS_DIR=../shared/jars EVENTLOG=/tmp/hx/ev python tools/hudi_update_paths.py cow \
               current,current,bloom,sql_update,rli,rli_prejoined
then:      python tools/spark_job_times.py /tmp/hx/ev <the printed lines with "mark">
Variants: current (read the rows, datasource upsert, SIMPLE index), read_only, prejoined (the write alone),
bloom[_prejoined], notls (no embedded timeline server), sql_update, sql_merge, rli[_prejoined] (record index).
The first variant pays the JVM's warm-up: list it twice. Results are in README "How each format writes".
"""
import json
import os
import shutil
import sys
import time

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
from pathlib import Path
from bench import artifacts
from bench.datagen import generate_payments
from bench.spark import SparkApps, SparkOptions
from bench.formats.hudi import HudiFormat
from bench.formats.base import TableRef
from bench.formats.loading import one_task_per_input_file

mode = sys.argv[1]  # cow | mor
variants = sys.argv[2].split(",")
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
ws = Path(os.environ.get("HX_WORKDIR", "/tmp/hx/ws")); ws.mkdir(parents=True, exist_ok=True)
data = generate_payments(ws / "data", 90, 4, 5000, 42)
res = artifacts.resolve("hudi")
conf = {s.key: s.value for s in HudiFormat.spark_settings(ws)} | res.spark_conf()
if os.environ.get("EVENTLOG"):
    Path(os.environ["EVENTLOG"]).mkdir(parents=True, exist_ok=True)
    conf |= {"spark.eventLog.enabled": "true", "spark.eventLog.dir": os.environ["EVENTLOG"]}
spark = SparkApps(SparkOptions(master="local[*]")).get("hudi", conf)
fmt = HudiFormat(f"hudi-{mode}", mode, ws / "wh", 128 << 20)
RLI = {"hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX"}

def base(kind):
    path = ws / f"base-{mode}-{kind}"
    if not path.exists():
        t0 = time.time()
        t = TableRef("payments", str(path), "txn_id", "settled_date", "created_at")
        opts = fmt._options(t, "bulk_insert") | (RLI if kind == "rli" else {})
        with one_task_per_input_file(spark):
            spark.read.parquet(str(data.path)).write.format("hudi").options(**opts).mode("overwrite").save(str(path))
        print("create", kind, round(time.time() - t0, 1), flush=True)
    return path

keys = data.hotfix_keys(120)
spark.createDataFrame([(k,) for k in keys], "txn_id bigint").createOrReplaceTempView("hotfix_keys")
out = {}
for v in variants:
    for rnd in range(rounds):
        src = base("rli" if v.startswith("rli") else "plain")
        loc = ws / f"run-{mode}"
        shutil.rmtree(loc, ignore_errors=True); shutil.copytree(src, loc)
        t = TableRef("payments", str(loc), "txn_id", "settled_date", "created_at")
        opts = fmt._options(t, "upsert")
        if v.startswith("rli"): opts |= RLI
        if v.startswith("bloom"): opts["hoodie.index.type"] = "BLOOM"
        if v == "notls": opts["hoodie.embed.timeline.server"] = "false"
        t0 = time.time()
        if v == "read_only":
            n = fmt._current_rows(spark, t, "hotfix_keys", {"status": "'REVERSED'"}).count()
        elif v == "sql_update":
            spark.sql("DROP TABLE IF EXISTS hx_payments")
            spark.sql(f"CREATE TABLE hx_payments USING hudi LOCATION '{loc}'")
            t0 = time.time()
            spark.sql("UPDATE hx_payments SET status = 'REVERSED' WHERE txn_id IN (SELECT txn_id FROM hotfix_keys)")
        elif v == "sql_merge":
            spark.sql(f"MERGE INTO hudi.`{loc}` t USING hotfix_keys s ON t.txn_id = s.txn_id WHEN MATCHED THEN UPDATE SET status = 'REVERSED'")
        else:
            frame = fmt._current_rows(spark, t, "hotfix_keys", {"status": "'REVERSED'"})
            if v.endswith("prejoined"):
                frame = frame.cache(); frame.count(); t0 = time.time()
            frame.write.format("hudi").options(**opts).mode("append").save(str(loc))
        dt = time.time() - t0
        got = spark.read.format("hudi").load(str(loc)).where("status='REVERSED'").count() if v != "read_only" else n
        print(v, rnd, round(dt, 2), "changed", got, "mark", time.time(), flush=True)
        out.setdefault(v, []).append(round(dt, 2))
print(json.dumps(out))
