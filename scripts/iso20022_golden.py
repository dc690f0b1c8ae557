"""Regenerate the ISO 20022 golden files (tests/golden/iso20022/) after an intended change of
the generator, translator or prompt: ``.venv/bin/python scripts/iso20022_golden.py``."""

from __future__ import annotations

from pathlib import Path

from textgyms.envs.iso20022.env import render_prompt
from textgyms.envs.iso20022.generate import generate
from textgyms.seeding import seeded_generator

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "golden" / "iso20022"


def main() -> None:
    """Write the level-3 (seed 7) pair and prompt and the level-4 (seed 11) MT103."""
    GOLDEN.mkdir(parents=True, exist_ok=True)
    task = generate(seeded_generator(7), 3)
    files = {
        "l3_seed7.xml": task.xml,
        "l3_seed7.mt103": task.reference,
        "l3_seed7_prompt.txt": render_prompt(task),
        "l4_seed11.mt103": generate(seeded_generator(11), 4).reference,
    }
    for name, text in files.items():
        (GOLDEN / name).write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN / name}")


if __name__ == "__main__":
    main()
