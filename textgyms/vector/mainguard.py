"""Refuse, with the fix, to start worker processes from the unguarded top level of a script.

With the ``forkserver`` and ``spawn`` start methods every worker re-imports the main script.
If the script makes its vector at the top level, each worker would make one too and die while
bootstrapping, which the caller only sees as a dead worker. :func:`check_main_guard` finds
that case before any process starts and says exactly what to change.
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

from textgyms.errors import ConfigError


def check_main_guard(context: str) -> None:
    """Raise :class:`ConfigError` if the main script calls this at its top level outside an
    ``if __name__ == "__main__":`` block and ``context`` re-runs the script in each worker."""
    if context == "fork":
        return  # forked workers copy the parent; nothing is re-imported
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None:
        return  # an interactive session or ``python -c``: nothing to re-run
    frame, top = sys._getframe(1), None
    while frame is not None:  # the script's own top-level frame, however deep the call came
        if frame.f_globals is main.__dict__ and frame.f_code.co_name == "<module>":
            top = frame
        frame = frame.f_back
    if top is None or top.f_lineno in guarded_lines(str(Path(path).resolve())):
        return  # not run from the script's top level, or from inside its __main__ block
    frame = top
    raise ConfigError(
        f"{path}, line {frame.f_lineno}: a vector with context={context!r} starts worker "
        "processes that re-run the script, and this line runs at its top level. Put the code "
        'that makes and uses the vector under `if __name__ == "__main__":` (or in a function '
        'called from there), or pass context="fork" to make_vec'
    )


@cache
def guarded_lines(path: str) -> frozenset[int]:
    """Line numbers inside ``if __name__ == "__main__":`` blocks of the file at ``path``."""
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return frozenset(range(1 << 20))  # cannot tell: do not block the caller
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return frozenset(lines)


def _is_main_test(test: ast.expr) -> bool:
    """True for ``__name__ == "__main__"`` (either order)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1
