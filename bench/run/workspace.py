"""The only place the harness writes or deletes: a directory it created and marked as its own."""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from bench.core.storage import Files, is_local
from bench.exceptions import UnsafePath

MARKER = ".cowmor-workspace"
MARKER_TEXT = "This directory was created by cowmor; it may delete anything inside it.\n"


class Workspace:
    """A marked directory holding generated data (``data/``) and tables (``warehouse/``).

    Deletion goes through ``remove``, which refuses any path that does not resolve (symlinks
    followed) to somewhere strictly inside a marked workspace.
    """

    def __new__(cls, root: Path | str, clear_folders: Callable[[str], None] | None = None):
        return super().__new__(cls if is_local(root) else RemoteWorkspace)

    def __init__(self, root: Path | str, clear_folders: Callable[[str], None] | None = None) -> None:
        root = Path(str(root).removeprefix("file://")).expanduser().absolute()
        if root.exists():
            if not root.is_dir():
                raise UnsafePath(f"workspace {root} exists and is not a directory")
            if not (root / MARKER).is_file() and any(root.iterdir()):
                raise UnsafePath(f"refusing to use {root} as a workspace: it is not empty and has no {MARKER} marker "
                                 "(choose an empty or new directory)")
        root.mkdir(parents=True, exist_ok=True)
        (root / MARKER).write_text(MARKER_TEXT)
        self.root = root
        self._real_root = Path(os.path.realpath(root))
        if self._real_root == Path("/"):
            raise UnsafePath("refusing to use / as a workspace")

    @property
    def data_dir(self) -> str:
        return str(self.root / "data")

    @property
    def warehouse(self) -> str:
        return str(self.root / "warehouse")

    @property
    def bases_dir(self) -> str:
        """Saved base states of tables (restored between rounds)."""
        return str(self.root / "bases")

    def owns(self, path: Path | str) -> bool:
        """True if ``path`` (symlinks resolved) lies strictly inside this workspace."""
        real = Path(os.path.realpath(path))
        return real != self._real_root and self._real_root in real.parents and (self._real_root / MARKER).is_file()

    def remove(self, path: Path | str) -> None:
        """Delete ``path`` (file or tree) if it is inside the workspace.

        Raises:
            UnsafePath: the path is the workspace itself, outside it, or a symlink pointing out of it.
        """
        path = Path(path)
        if path.is_symlink():
            if not self.owns(path.parent) or not self.owns(path):
                raise UnsafePath(f"refusing to delete {path}: a symlink pointing outside the workspace {self.root}")
            path.unlink()
            return
        if not self.owns(path):
            raise UnsafePath(f"refusing to delete {path}: not inside the cowmor workspace {self.root}")
        if path.is_dir():
            _rmtree_while_written(path)
        elif path.exists():
            path.unlink()


def _pause(seconds: float) -> None:
    """The wait between attempts, its own name so a test can count the waits without replacing ``time.sleep``
    for every thread of the process (a writer pool polling in another thread then spins)."""
    time.sleep(seconds)


def _rmtree_while_written(path: Path, attempts: int = 8, pause_s: float = 0.5) -> None:
    """``shutil.rmtree``, again if a file appeared in a folder while it was being emptied ("Directory not empty": seen
    dropping a Hudi table's ``.hoodie/metadata`` right after a race of 4 writer applications, and a whole table after a
    race of 8), pausing longer each time (0.5 s doubling, about a minute in all: a straggler's last write ends); when
    it gives up, the error names the files that kept appearing, the evidence of who still wrote there."""
    for attempt in range(1, attempts + 1):
        try:
            shutil.rmtree(path)
            return
        except OSError as err:
            if err.errno != errno.ENOTEMPTY:
                raise
            if attempt == attempts:
                left = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
                raise OSError(err.errno, f"{err.strerror} after {attempts} attempts: still written there: "
                              f"{', '.join(left[:5]) or 'no file, only folders'}"
                              + (f" and {len(left) - 5} more" if len(left) > 5 else ""), str(path)) from err
            _pause(pause_s * 2 ** (attempt - 1))


class RemoteWorkspace(Workspace):
    """A workspace on an object store or HDFS (``s3a://bucket/prefix``): the same marker, prefix-checked deletes;
    ``clear_folders`` removes what a server keeps of a deleted tree (SeaweedFS's folders), so a table can be made
    again at the same place."""

    def __init__(self, root: Path | str, clear_folders: Callable[[str], None] | None = None) -> None:
        self.clear_folders = clear_folders
        self.files = Files.of(str(root).rstrip("/"))
        marker = self.files / MARKER
        if self.files.exists() and not marker.exists() and self.files.walk():
            raise UnsafePath(f"refusing to use {root} as a workspace: it is not empty and has no {MARKER} marker")
        marker.write_text(MARKER_TEXT)
        self.root = self.files.uri

    @property
    def data_dir(self) -> str:
        return f"{self.root}/data"

    @property
    def warehouse(self) -> str:
        return f"{self.root}/warehouse"

    @property
    def bases_dir(self) -> str:
        return f"{self.root}/bases"

    def owns(self, path: Path | str) -> bool:
        text = str(path).rstrip("/")
        return text.startswith(self.root + "/") and "/../" not in text + "/" and (self.files / MARKER).exists()

    def remove(self, path: Path | str) -> None:
        if not self.owns(path):
            raise UnsafePath(f"refusing to delete {path}: not inside the cowmor workspace {self.root}")
        Files.of(str(path)).delete()
        if self.clear_folders is not None:
            self.clear_folders(str(path))
