"""MkDocs hook: the Sphinx roles the docstrings use (``:func:`gather```, ``:class:`Ragged```,
``:meth:`ShardedTable.lookup```) become links to the object's entry on the page where it is
documented, or plain code where it has none (a private helper); mkdocstrings renders them as
text with the role's name in front."""
import re

ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|exc|obj):<code>~?([\w.]+?)(\(\))?</code>")


def on_page_content(html: str, **kwargs) -> str:
    def link(match: re.Match) -> str:
        name = match.group(1)
        shown = f"<code>{name}{match.group(2) or ''}</code>"
        for target in (name, f"ndgather.{name}", f"ndgather.{name.removeprefix('ndgather.')}"):
            if f'id="{target}"' in html:
                return f'<a href="#{target}">{shown}</a>'
        return shown

    return ROLE.sub(link, html)
