"""Fetch the official jars of one Spark line from Maven Central with Maven itself, as users get them.

The coordinates are `bench.servers.artifacts.SPARK_LINE_ARTIFACTS` (the formats' Spark bundles, the S3A connector,
the PostgreSQL JDBC driver). They are written into a small POM and copied, without their transitive dependencies
(Spark provides those), into DEST (default `.cowmor-jars/maven/spark-<line>`, where the harness looks first after
`--jars-dir`). A coordinate Maven cannot resolve is named and left out; the family it belongs to then falls back
(`--jars-dir`, PyPI, ...) or skips with the reason. `coordinates.tsv` in DEST lists coordinate, file and sha256.

Run with:  python tools/fetch_jars.py [--line 3.5|4.0] [DEST]     (make jars)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout, before or after install
from bench.servers.artifacts import SPARK_LINE_ARTIFACTS, Artifact, maven_jars_dir, sha256  # noqa: E402

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.cowmor</groupId><artifactId>cowmor-jars</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""
DEPENDENCY = "    <dependency><groupId>{group}</groupId><artifactId>{name}</artifactId><version>{version}</version></dependency>"


def pom(artifacts: tuple[Artifact, ...]) -> str:
    return POM.format(dependencies="\n".join(DEPENDENCY.format(group=a.group, name=a.name, version=a.version)
                                             for a in artifacts))


def copy(artifacts: tuple[Artifact, ...], dest: Path, workdir: Path) -> subprocess.CompletedProcess[str]:
    (workdir / "pom.xml").write_text(pom(artifacts))
    return subprocess.run(["mvn", "-q", "-B", "-f", str(workdir / "pom.xml"), "dependency:copy-dependencies",
                           "-DexcludeTransitive=true", f"-DoutputDirectory={dest}"],
                          capture_output=True, text=True)


def fetch(line: str, dest: Path) -> tuple[list[Artifact], list[Artifact]]:
    """Copy every coordinate of ``line`` into ``dest``; return (fetched, not resolved)."""
    wanted = SPARK_LINE_ARTIFACTS[line]
    present = [a for a in wanted if (dest / a.filename).is_file()]
    missing = [a for a in wanted if a not in present]
    unresolved: list[Artifact] = []
    with tempfile.TemporaryDirectory() as tmp:
        if missing and copy(tuple(missing), dest, Path(tmp)).returncode != 0:
            for artifact in missing:  # one at a time, to name the ones Maven cannot resolve
                if copy((artifact,), dest, Path(tmp)).returncode != 0:
                    unresolved.append(artifact)
    return [a for a in wanted if a not in unresolved], unresolved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--line", choices=sorted(SPARK_LINE_ARTIFACTS), default="3.5", help="Spark line (default 3.5)")
    parser.add_argument("dest", nargs="?", type=Path, help="folder (default .cowmor-jars/maven/spark-<line>)")
    args = parser.parse_args()
    dest = (args.dest or maven_jars_dir(args.line)).resolve()
    if shutil.which("mvn") is None:
        print("cowmor: mvn is not on PATH: install Maven, or give the jars with --jars-dir / COWMOR_JARS_DIR",
              file=sys.stderr)
        return 1
    dest.mkdir(parents=True, exist_ok=True)
    fetched, unresolved = fetch(args.line, dest)
    rows = [f"{a.coordinate}\t{a.filename}\t{sha256(dest / a.filename)}" for a in fetched]
    (dest / "coordinates.tsv").write_text("coordinate\tfile\tsha256\n" + "".join(f"{r}\n" for r in rows))
    for row in rows:
        print(f"jars: {row}")
    for artifact in unresolved:
        print(f"jars: NOT RESOLVED {artifact.coordinate} (Maven Central has no such artifact here); "
              "its family falls back to --jars-dir / COWMOR_JARS_DIR or skips", file=sys.stderr)
    print(f"jars: Spark {args.line}: {len(fetched)} of {len(fetched) + len(unresolved)} in {dest}")
    return 0 if fetched else 1


if __name__ == "__main__":
    sys.exit(main())
