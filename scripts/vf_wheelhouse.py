"""Fetch, while `.venv-verifiers` is built, what verifiers' agent runtime installs at run time.

verifiers 0.4 runs its chat program (the ``null`` and ``bash`` harnesses) as a PEP 723 script:
before the first rollout, ``uv sync --script`` installs the packages the script declares. This
reads that declaration from the installed verifiers and downloads those packages, with their
dependencies, as wheels for this Python into a wheelhouse. The tests then run uv with
``UV_DEFAULT_INDEX`` and ``UV_FIND_LINKS`` pointing at it (``tests/support.py``), so nothing is
downloaded during the test phase.

    .venv-verifiers/bin/python scripts/vf_wheelhouse.py .venv-verifiers/wheelhouse
"""

from __future__ import annotations

import re
import subprocess
import sys

import tomllib


def script_dependencies(program: str) -> list[str]:
    """The ``dependencies`` of a PEP 723 ``# /// script`` block."""
    block = re.search(r"^# /// script\n((?:#.*\n)*?)# ///$", program, re.MULTILINE)
    if block is None:
        raise SystemExit("verifiers' chat program has no PEP 723 script block: update "
                         "scripts/vf_wheelhouse.py for this verifiers version")
    text = "\n".join(line[2:] for line in block.group(1).splitlines())
    return list(tomllib.loads(text).get("dependencies", []))


def main(out: str) -> None:
    """Download the chat program's packages (wheels only) into ``out``."""
    from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM

    deps = script_dependencies(CHAT_PROGRAM)
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "download",
                    "-q", "--only-binary", ":all:", "-d", out, *deps], check=True)
    print(f"{out}: {', '.join(deps)} and their dependencies")


if __name__ == "__main__":
    main(sys.argv[1])
