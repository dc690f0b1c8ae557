#!/usr/bin/env python3
"""Build the bank data shipped in ``textgyms/envs/iso20022/data``: ``registry_banks.txt`` (the
banks ``banks.pick_registry_banks`` picks from schwifty's registry) and ``iban_pools.txt``
(the pool ``banks.build_pool`` builds for every bank ``banks.pooled_banks`` lists).

A development-time script; the package never imports it. It computes both with the installed
schwifty (the pinned one: see pyproject.toml) and records their sha256 in ``data/SHA256SUMS``.
The output is deterministic: the same schwifty gives the same bytes.

    .venv/bin/python scripts/build_bank_data.py            # write
    .venv/bin/python scripts/build_bank_data.py --check    # exit 1 if a shipped file differs

Run it after upgrading schwifty (the shipped files are ignored under any other version, and
tests/test_iso_iban_pools.py fails until they match again) or changing how banks are picked
or pools built.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textgyms import datafiles  # noqa: E402
from textgyms.envs.iso20022 import bankdata, banks  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent.parent / "textgyms" / "envs" / "iso20022" / "data"


def build() -> dict[str, str]:
    """Each file's text, computed by schwifty now."""
    version = metadata.version("schwifty")
    picked = banks.pick_registry_banks()
    rows = [(b.country, b.bic, b.bank_code, b.branch_code, b.name)
            for found in picked.values() for b in found]
    pools = [((b.bic, b.bank_code, b.branch_code), banks.build_pool(b))
             for b in banks.pooled_banks(picked)]
    return {bankdata.REGISTRY_FILE: bankdata.render_registry(rows, version,
                                                             banks.BANKS_PER_COUNTRY),
            bankdata.POOLS_FILE: bankdata.render_pools(pools, version, banks.IBANS_PER_BANK)}


def main(argv: list[str] | None = None) -> int:
    """Write the files (or, with ``--check``, compare them with the shipped ones)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    texts = build()
    if args.check:
        differ = [name for name, text in texts.items()
                  if not (OUT_DIR / name).exists()
                  or (OUT_DIR / name).read_text(encoding="utf-8") != text]
        for name in texts:
            print(f"{OUT_DIR / name}: {'DIFFERS from' if name in differ else 'matches'} "
                  "a fresh build")
        return 1 if differ else 0
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    sums = []
    for name, text in sorted(texts.items()):
        data = text.encode("utf-8")
        (OUT_DIR / name).write_bytes(data)
        sums.append(f"{hashlib.sha256(data).hexdigest()}  {name}")
        print(f"wrote {OUT_DIR / name} ({len(text.splitlines()) - 2} banks, {len(data):,} bytes)")
    (OUT_DIR / datafiles.SUMS_FILE).write_text("\n".join(sums) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
