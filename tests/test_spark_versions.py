"""A run stopped by a signal kills its JVM; its record must still be written, so the versions read from a dead JVM are none."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from py4j.protocol import Py4JNetworkError

from bench.run.spark import SparkApps, SparkOptions


class DeadSession:
    sparkContext = SimpleNamespace(_jvm=None)

    @property
    def version(self) -> str:
        raise Py4JNetworkError("Answer from Java side is empty")


class RefusedSession(DeadSession):
    @property
    def version(self) -> str:
        raise ConnectionRefusedError(111, "Connection refused")


@pytest.mark.parametrize("session", [DeadSession(), RefusedSession()])
def test_versions_of_a_dead_jvm_are_none(session):
    apps = SparkApps(SparkOptions(master="local[1]", driver_memory="512m"))
    apps.session = session
    assert apps.versions() == {}


def test_versions_without_a_session_are_none():
    assert SparkApps(SparkOptions(master="local[1]", driver_memory="512m")).versions() == {}
