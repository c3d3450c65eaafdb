"""Shared docstring fragments: one text for what several functions or methods document.

Classes concatenate their fragments into ``__doc__`` (as scikit-learn does, e.g.
countgrid.grid._classifiers' ``_PARAMS_DOC``); functions and methods name a fragment
``{name}`` in their docstrings and are filled by :func:`fill_doc` (scipy.ndimage's
``docfiller``).  A fragment is written without the indentation of its first line: its
other lines are indented as the placeholder's line.
"""
import textwrap


def _filled(doc, fragments, used):
    for name, text in fragments.items():
        key = "{" + name + "}"
        at = doc.find(key)
        if at < 0:
            continue
        used.add(name)
        indent = doc[doc.rfind("\n", 0, at) + 1:at]
        first, _, rest = text.partition("\n")
        doc = doc.replace(key, first + ("\n" + textwrap.indent(rest, indent) if rest else ""))
    return doc


def fill_doc(**fragments):
    """Decorator of a function, or of a class and so of its methods: put each fragment at
    its ``{name}`` in their docstrings.

    Parameters
    ----------
    **fragments : str
        ``name=text``; the text's lines after the first get the indentation of the line
        that holds ``{name}``.  Only these placeholders are replaced (other braces, as in
        ``{array-like, sparse matrix}``, are left alone).  A fragment that no docstring
        names is a ValueError, so that a fragment cannot silently fall out.
    """
    def decorate(obj):
        used = set()
        if obj.__doc__:
            obj.__doc__ = _filled(obj.__doc__, fragments, used)
        if isinstance(obj, type):
            for member in vars(obj).values():
                if callable(member) and getattr(member, "__doc__", None):
                    member.__doc__ = _filled(member.__doc__, fragments, used)
        missing = sorted(set(fragments) - used)
        if missing:
            raise ValueError(f"no docstring of {obj.__qualname__} names "
                             f"{', '.join('{' + m + '}' for m in missing)}")
        return obj

    return decorate
