"""The README's Python examples (its ```python blocks with >>> prompts), run as doctests in
one namespace, in order."""
import doctest
import pathlib
import re
import textwrap

README = (pathlib.Path(__file__).parents[3] / "README.md").read_text()


def test_readme_python_examples():
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", README, re.S)
              if ">>>" in b]
    assert blocks, "the README has Python examples"
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 5
