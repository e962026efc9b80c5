"""Every error the harness raises on purpose, so callers can tell a bad setup from a bug."""

from __future__ import annotations


class CowmorError(Exception):
    """Base of all harness errors; its message is one line meant for the user."""


class BadOption(CowmorError):
    """A command-line option or parameter is invalid; raised before any work starts."""


class MissingArtifact(CowmorError):
    """A format family's jars cannot be found anywhere; the family is skipped with this message."""


class BadArtifact(MissingArtifact):
    """A jar is present but unusable (not a zip, wrong Scala line); the family is skipped with this message."""


class JavaNotFound(CowmorError):
    """No usable Java on PATH / JAVA_HOME."""


class UnsafePath(CowmorError):
    """The harness was asked to delete or write something outside the workspace it owns."""


class WrongAnswer(CowmorError):
    """A configuration returned an answer different from the independently computed one."""


class NotSupported(CowmorError):
    """A verb a table configuration does not have (e.g. read-optimized reads outside Hudi MoR)."""


class BadRecord(CowmorError):
    """A recorded run, history or report input is malformed, unreadable or of another schema version."""


class NotEnoughDisk(CowmorError):
    """The local disk under the workspace has too little room for what the next step writes (checked before it)."""
