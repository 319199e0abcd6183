"""MkDocs hook: the Rust API reference (``cargo doc --workspace --no-deps``, in target/doc) and
the Java one (the Javadoc that ``mvn install`` writes to java/target/reports/apidocs) are
published beside the site, under api/rust/ and api/java/: the reference pages link into them,
and the build's link check covers those links. scripts/test.sh builds both first."""
import os

from mkdocs.structure.files import File, Files, InclusionLevel

SOURCES = {"api/rust": "target/doc", "api/java": "java/target/reports/apidocs"}


def on_files(files: Files, config) -> Files:
    root = os.path.dirname(config.config_file_path)
    for dest, source in SOURCES.items():
        base = os.path.join(root, source)
        if not os.path.isdir(base):
            raise SystemExit(
                f"{source} is missing: build the API references first (cargo doc --workspace "
                "--no-deps; mvn -f java/pom.xml install), as scripts/test.sh does")
        for folder, _, names in os.walk(base):
            for name in names:
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, base).replace(os.sep, "/")
                # (Their few Markdown files, license notices, are pages outside the nav.)
                files.append(File.generated(config, f"{dest}/{rel}", abs_src_path=path,
                                            inclusion=InclusionLevel.NOT_IN_NAV))
    return files
