"""The Python examples of the README and of the documentation site's pages (their ```python
blocks, each with >>> prompts: a page's plain Python block fails the test), run as doctests:
each file in one namespace, in order."""
import doctest
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).parents[3]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def examples(path: pathlib.Path) -> list[str]:
    blocks = re.findall(r"```(?:python|py|pycon)\n(.*?)```", path.read_text(), re.S)
    return [textwrap.dedent(b) for b in blocks if ">>>" in b]


def test_the_readme_and_the_ragged_page_have_examples():
    assert examples(ROOT / "README.md") and examples(ROOT / "docs" / "concepts" / "ragged.md")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_is_an_example_that_runs(page: pathlib.Path):
    blocks = re.findall(r"```(?:python|py|pycon)\n(.*?)```", page.read_text(), re.S)
    plain = [b.splitlines()[0] for b in blocks if ">>>" not in b]
    assert plain == [], f"Python blocks with no >>> prompt, which no test runs: {plain}"


@pytest.mark.parametrize("page", [p for p in PAGES if examples(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples(page: pathlib.Path):
    text = "\n".join(examples(page))
    if "import torch" in text:
        # PyTorch is not in CI's venv: test_torch_ops.py runs this page where it is.
        pytest.importorskip("torch", reason="PyTorch is not installed: run "
                            "scripts/test.sh --frameworks")
    if "import tensorflow" in text:
        # TensorFlow is not in CI's venv: test_tf_ops.py runs this page where it is.
        pytest.importorskip("tensorflow", reason="TensorFlow is not installed: run "
                            "scripts/test.sh --frameworks")
    if "import jax" in text or "import tensorflow" in text or "dask.distributed" in text:
        # In a child process: a process with JAX's, TensorFlow's or a Dask cluster's threads
        # should not fork, and other tests fork.
        done = subprocess.run([sys.executable, "-c", RUN_DOCTEST, page.name], input=text,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return
    namespace: dict = {}
    exec(RUN_DOCTEST, namespace)
    namespace["check"](text, page.name)


#: `check(text, name)` runs the doctest `text` and fails unless every example passed and
#: there were at least two; run as a script, it checks its standard input.
RUN_DOCTEST = """
import doctest, sys

def check(text, name):
    test = doctest.DocTestParser().get_doctest(text, {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 2, (runner.failures, runner.tries)

if __name__ == "__main__":
    check(sys.stdin.read(), sys.argv[1])
"""
