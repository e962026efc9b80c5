"""A Hudi writer's lock waits from its lock provider's own log lines (as a writer application logs them)."""

from __future__ import annotations

from bench.formats.hudi_locks import lock_waits

LOG = """\
1764358806660 19:40:06.660 INFO BaseZookeeperBasedLockProvider: ACQUIRING lock atZkBasePath = /cowmor_locks, lock key = hudi-mor_default
1764358806675 19:40:06.675 INFO BaseZookeeperBasedLockProvider: ACQUIRED lock atZkBasePath = /cowmor_locks, lock key = hudi-mor_default
1764358806920 19:40:06.920 INFO BaseZookeeperBasedLockProvider: RELEASING lock atZkBasePath = /cowmor_locks, lock key = hudi-mor_default
1764358807384 19:40:07.384 INFO BaseZookeeperBasedLockProvider: ACQUIRING lock atZkBasePath = /cowmor_locks, lock key = hudi-mor_default
1764358809890 19:40:09.890 INFO BaseZookeeperBasedLockProvider: ACQUIRED lock atZkBasePath = /cowmor_locks, lock key = hudi-mor_default
1764358810000 19:40:10.000 INFO InProcessLockProvider: Base Path file:///t/.hoodie/metadata, Lock Instance x
1764358811000 19:40:11.000 INFO BaseZookeeperBasedLockProvider: ACQUIRING lock atZkBasePath = /cowmor_locks, lock key = hudi-mor_default
"""


def test_each_grant_is_paired_with_its_request_and_a_request_never_granted_is_left_out():
    waits = lock_waits(LOG)
    assert [round(w.seconds, 3) for w in waits] == [0.015, 2.506]
    assert waits[1].asked_at == 1764358807.384 and waits[1].key == "hudi-mor_default"

