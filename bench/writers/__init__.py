"""Several writers on one table: the race (writers as separate Spark applications or threads, the table service
beside them on its cadence), a writer process's own loop, and the steps a scenario asks for (the table, the race,
the invariants on every engine, the record).

May import: exceptions, core, workload, formats, measure and servers. Reached by scenarios through
``Lab.several_writers`` (run/), which hands over the lab; never imports run/.
"""
