"""One writer's batches of updates, each attempt recorded as it ends (several writers run this side by side).

Every batch adds 1 to ``amount`` and stamps ``notes`` with the batch's tag on its keys, found by literal keys the
format's statistics prune by. The increment makes every applied batch visible in the data (a lost update or one
applied twice changes the sum), the tag says which batch wrote a row last; where the format keeps a label in its
commit metadata, each attempt's commit carries ``w<writer>b<batch>#<attempt>``. A batch whose statement fails is
retried ``retries`` times; each failure keeps the engine's exception class.

The retry checks before it repeats (``CHECKED``, as a careful scheduler would): a statement can raise after its
commit landed (Hudi's post-commit clean or rollback), and re-running a non-idempotent batch then applies it twice. So
before a retry the writer looks for its attempt's commit in the table's own history (``TableFormat.attempt_landed``);
found, the batch is recorded as committed, its failure as raised after its commit landed, and it is not run again.
``BLIND`` retries without looking: what a naive job does, kept to measure what that does to the data.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench.core.failures import BLIND, CHECKED
from bench.formats.base import JOIN, Keys

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.formats.base import TableFormat, TableRef

INCREMENT = {"amount": "amount + 1"}
CHANGED_COLUMNS = (*INCREMENT, "notes")  # what a batch changes on its keys: the tag goes in notes
RETRY_MODES = (CHECKED, BLIND)


def failure(err: BaseException) -> dict[str, str]:
    """The exception's class as the engine names it: the JVM class (and its root cause) behind a Py4J error."""
    java = getattr(err, "java_exception", None)
    if java is None:
        return {"class": type(err).__name__, "message": str(err).splitlines()[0][:300] if str(err) else ""}
    root = java
    while root.getCause() is not None and root.getCause() is not root:
        root = root.getCause()
    return {"class": java.getClass().getName(), "root_cause": root.getClass().getName(),
            "message": (str(root.getMessage()) or "").splitlines()[0][:300]}


def tag(writer: int, batch: int) -> str:
    return f"w{writer}b{batch}"


def attempt_label(batch_tag: str, attempt: int) -> str:
    """What an attempt's commit carries in the format's own metadata (``TableFormat.label_commits``): the history
    then says which attempt of which batch made each commit, a retried batch that committed twice included."""
    return f"{batch_tag}#{attempt}"


def run_batches(fmt: TableFormat, spark: SparkSession, table: TableRef, writer: int, batches: list[list[int]],
                retries: int, emit: Callable[[dict[str, Any]], None], retry: str = CHECKED,
                own_application: bool = True, partitions: list[list[str]] | None = None) -> None:
    """Run ``batches`` in order; ``emit`` each batch's record as soon as it is committed or given up.

    ``own_application``: this writer is the only one in its Spark application (separate applications), so a commit
    the application made is this writer's (Iceberg's commits carry the application's id, not a label).
    ``partitions``: per batch, the days its keys sit in, which its statement then names too (None: keys alone)."""
    for number, keys in enumerate(batches):
        label = tag(writer, number)
        record: dict[str, Any] = {"writer": writer, "batch": number, "tag": label, "keys": [int(k) for k in keys],
                                  "attempts": 0, "failures": [], "started_at": time.time()}
        # found by the adapter's route: literal keys, or (join) a view per writer, threads of one application sharing it
        found = Keys(tuple(int(k) for k in keys), f"writer_{writer}_keys",
                     partitions=tuple(partitions[number]) if partitions else ())
        if fmt.route == JOIN:
            spark.createDataFrame([(k,) for k in found.values], f"{table.key} bigint").createOrReplaceTempView(found.view)
        while record["attempts"] <= retries:
            record["attempts"] += 1
            attempt_start, clock = time.time(), time.perf_counter()
            fmt.label_commits(spark, attempt_label(label, record["attempts"]))
            fmt.see_other_writers(spark, table)  # as a read-modify-write job must: its session may cache the table
            try:
                fmt.update_keys(spark, table, found, {**INCREMENT, "notes": f"'{label}'"})
            except Exception as err:  # noqa: BLE001 - a lost conflict is the finding: recorded, then retried
                failed = {**failure(err), "seconds": time.perf_counter() - clock, "started_at": attempt_start,
                          "ended_at": time.time()}  # what committed meanwhile decides its kind (bench.core.failures)
                record["failures"].append(failed)
                if retry == CHECKED:
                    fmt.see_other_writers(spark, table)
                    failed["landed"] = fmt.attempt_landed(spark, table, attempt_label(label, record["attempts"]),
                                                          attempt_start, own_application)
                    if failed["landed"]:
                        record.update(committed=True, raised_after_commit=True, attempt_started_at=attempt_start,
                                      ended_at=time.time(), seconds=time.perf_counter() - clock)
                        break
                continue
            record.update(committed=True, attempt_started_at=attempt_start, ended_at=time.time(),
                          seconds=time.perf_counter() - clock)
            break
        else:
            record.update(committed=False, ended_at=time.time())
        emit(record)
