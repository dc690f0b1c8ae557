#!/usr/bin/env python3
"""Build the IBAN pools shipped in ``textgyms/envs/iso20022/data`` (``iban_pools.txt``).

A development-time script; the package never imports it. It writes every pool
``banks.build_pool`` gives with the installed schwifty (the pinned one: see pyproject.toml),
for every bank ``banks.pooled_banks`` lists, in that order, and records the file's sha256 in
``data/SHA256SUMS``. The output is deterministic: the same schwifty gives the same bytes.

    .venv/bin/python scripts/build_iban_pools.py            # write
    .venv/bin/python scripts/build_iban_pools.py --check    # exit 1 if the shipped file differs

Run it after upgrading schwifty (the shipped pools are ignored under any other version, and
tests/test_iso_iban_pools.py fails until the file matches again).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textgyms.envs.iso20022 import banks, ibanpools  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent.parent / "textgyms" / "envs" / "iso20022" / "data"


def build() -> str:
    """The pools file's text, built by schwifty now."""
    pools = [((b.bic, b.bank_code, b.branch_code), banks.build_pool(b))
             for b in banks.pooled_banks()]
    return ibanpools.render(pools, metadata.version("schwifty"), banks.IBANS_PER_BANK)


def main(argv: list[str] | None = None) -> int:
    """Write the pools (or, with ``--check``, compare them with the shipped file)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text = build()
    path = OUT_DIR / ibanpools.DATA_FILE
    if args.check:
        same = path.exists() and path.read_text(encoding="utf-8") == text
        print(f"{path}: {'matches' if same else 'DIFFERS from'} a fresh build")
        return 0 if same else 1
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    (OUT_DIR / ibanpools.SUMS_FILE).write_text(f"{digest}  {ibanpools.DATA_FILE}\n",
                                               encoding="utf-8")
    print(f"wrote {path} ({len(text.splitlines()) - 2} banks, {len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
