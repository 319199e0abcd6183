"""One version for every artifact (issue 56): the Rust crates' (the workspace's), the Python
package's (maturin takes the crate's), the Java library's ``pom.xml`` (and the version the
example consumer project asks for) and the newest release in ``CHANGELOG.md``."""
import importlib.metadata
import pathlib
import re
import tomllib
import xml.etree.ElementTree as ET

import pytest

import ndgather as ng

ROOT = pathlib.Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(not (ROOT / "java" / "pom.xml").exists(),
                                reason="needs the repository, not only the package")


def workspace_version() -> str:
    return tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["version"]


def test_every_crate_takes_the_workspace_version() -> None:
    crates = sorted((ROOT / "crates").glob("*/Cargo.toml"))
    assert len(crates) >= 4
    for manifest in crates:
        version = tomllib.loads(manifest.read_text())["package"]["version"]
        assert version in ({"workspace": True}, workspace_version()), manifest


def test_python_java_and_the_changelog_carry_it() -> None:
    version = workspace_version()
    assert ng.__version__ == version
    assert importlib.metadata.version("ndgather") == version
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    pom = ET.parse(ROOT / "java" / "pom.xml").getroot()
    assert pom.findtext("m:version", namespaces=ns) == version
    # The consumer project depends on this version by its coordinates.
    consumer = ET.parse(ROOT / "examples" / "java-consumer" / "pom.xml").getroot()
    dependency = consumer.find("m:dependencies/m:dependency[m:artifactId='ndgather']", ns)
    assert dependency is not None and dependency.findtext("m:version", namespaces=ns) == version
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert releases and releases[0] == version, releases
