"""Regenerate the NetConfig golden tool outputs: ``python scripts/netconfig_golden.py``.

Review the diff before committing: the golden files pin the IOS-like output formats.
"""

from __future__ import annotations

from pathlib import Path

from textgyms.envs.netconfig.sample import golden_outputs

OUT = Path(__file__).resolve().parent.parent / "tests" / "golden" / "netconfig"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for stem, text in golden_outputs().items():
        (OUT / f"{stem}.txt").write_text(text)
        print(f"wrote {OUT / f'{stem}.txt'}")


if __name__ == "__main__":
    main()
