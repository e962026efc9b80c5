"""Fetch Spark's S3A connector jars where no Maven is reachable: they ship inside the PyPI sdist of
``sagemaker-pyspark==1.4.5`` (``deps/jars/``). The sdist is downloaded (never installed: it pins pyspark 3.3.0), the
two jars are taken out, checked against their sha256 and put in DEST (default ``.cowmor-jars/s3a``).

Run with:  python tools/fetch_s3a_jars.py [DEST]     (make s3a-jars)
With Maven, no fetch is needed: the run asks spark.jars.packages for org.apache.hadoop:hadoop-aws:3.3.4.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout, before or after install
from bench.servers.artifacts import sha256  # noqa: E402

SDIST = "sagemaker-pyspark==1.4.5"
JARS = {"hadoop-aws-3.3.1.jar": "6be50ad8a8b445d2802381b085b2a3ede5c29d353450a6a21f16b2fefa962b6e",
        "aws-java-sdk-bundle-1.11.901.jar": "b87175b32a16544cc1b37cf40390eb375833e62bed67f8ce6cde4b7ad6429ead"}


def main() -> int:
    dest = Path(sys.argv[1] if len(sys.argv) > 1 else ".cowmor-jars/s3a")
    if all((dest / j).is_file() and sha256(dest / j) == h for j, h in JARS.items()):
        print(f"s3a jars: {dest} (present, sha256 checked)")
        return 0
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", SDIST,
                        "-d", tmp], check=True)
        [sdist] = Path(tmp).glob("sagemaker_pyspark-*.tar.gz")
        with tarfile.open(sdist) as archive:
            for member in archive.getmembers():
                name = Path(member.name).name
                if name in JARS and "/deps/jars/" in member.name:
                    with archive.extractfile(member) as src, open(dest / name, "wb") as out:
                        out.write(src.read())
    for name, expected in JARS.items():
        found = sha256(dest / name) if (dest / name).is_file() else "missing"
        if found != expected:
            print(f"cowmor: {dest / name}: sha256 {found}, expected {expected}", file=sys.stderr)
            return 1
    print(f"s3a jars: {dest} ({', '.join(JARS)}; sha256 checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
