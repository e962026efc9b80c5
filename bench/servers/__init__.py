"""The servers a run starts and stops, each on loopback and each a real one: the object store (SeaweedFS) and its
delaying proxy, the catalog (PostgreSQL) and the lock (ZooKeeper) several writers share, the standalone Spark
cluster; the daemon handling they share (process groups, parent-death signal, ports) and where jars come from.

May import: exceptions and core only. Imported by run/ (the session starts them) and writers/.
"""
