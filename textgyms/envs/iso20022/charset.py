"""Text into the SWIFT X character set, and the line-cutting rules of MT free-text fields.

Transliteration follows what SWIFT users do for names and addresses in FIN: Latin letters
lose their diacritics (é -> e, ñ -> n) and a few letters are spelled out (ß -> ss, ø -> o);
Cyrillic uses the Russian SWIFT transliteration table (Ж -> J, Х -> KH, Ц -> C, Щ -> SHCH,
Ю -> IU, Я -> IA, Ъ/Ь -> '); Greek uses the ELOT 743 letters (Θ -> TH, Χ -> CH, Ψ -> PS).
Other symbols outside X (``&``, ``@``, ``€``...) become "." and whitespace runs collapse to
one blank. Letters and digits of any other script (Chinese, Japanese, Korean, Arabic, Hebrew,
Thai...) have no documented scheme here, and CBPR+ allows only Latin-script text in a
pacs.008: :func:`clean` refuses them with :class:`NotCbprError` instead of writing dots
(a name of dots would be no translation; see :func:`placeholder_only`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from textgyms.errors import TextgymsError

X_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-?:().,'+ ")
_X_ONLY = re.compile(r"[a-zA-Z0-9/\-?:().,'+ ]*")
# Latin letters NFKD does not decompose into a base letter and a mark.
SPECIAL = {"ß": "ss", "Ø": "O", "ø": "o", "Ł": "L", "ł": "l", "Æ": "AE", "æ": "ae",
           "Œ": "OE", "œ": "oe", "Đ": "D", "đ": "d", "ı": "i", "Þ": "TH", "þ": "th",
           "Ð": "D", "ð": "d", "Ħ": "H", "ħ": "h", "Ŋ": "N", "ŋ": "n"}
_CYRILLIC = dict(zip(
    "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ",
    "A B V G D E E J Z I I K L M N O P R S T U F KH C CH SH SHCH ' Y ' E' IU IA".split(),
    strict=True))
_GREEK = dict(zip("ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ",
                  "A V G D E Z I TH I K L M N X O P R S T Y F CH PS O".split(), strict=True))
LETTERS = {**_CYRILLIC, **_GREEK, "Є": "IE", "І": "I", "Ї": "I", "Ґ": "G", "Ў": "U"}
# What a translator writes for what it cannot say: dots (this module's replacement), blanks and
# the punctuation of X. A name made of these alone carries nothing of the party.
_PLACEHOLDER = frozenset(". ,-/'()?:+")


class NotCbprError(TextgymsError, ValueError):
    """Text with letters or digits of a script that the CBPR+ character set excludes and
    that no documented transliteration here covers (only Latin with its accents, Cyrillic
    and Greek are transliterated): the message is not CBPR+ and has no faithful MT text."""


@cache
def _letter(ch: str) -> str | None:
    """The X spelling of one non-Latin letter (same case; "Kh" for a capital followed by
    lower case is decided by the caller), or None."""
    if ch in LETTERS:
        return LETTERS[ch]
    up = ch.upper()
    if up != ch and up in LETTERS:
        return LETTERS[up].lower()
    return None


def clean(value: str) -> str:
    """``value`` in the X character set (see the module docstring)."""
    if _X_ONLY.fullmatch(value):  # the common case: nothing to replace
        return " ".join(value.split())
    out = []
    text = unicodedata.normalize("NFKD", value)
    for greek, latin in (("ΟΥ", "OU"), ("Ου", "Ou"), ("ου", "ou")):  # ELOT 743 digraph
        text = text.replace(greek, latin)
    for i, ch in enumerate(text):
        if ch in X_CHARS:
            out.append(ch)
        elif ch.isspace():
            out.append(" ")
        elif (spelled := SPECIAL.get(ch) or _letter(ch)) is not None:
            if len(spelled) > 1 and ch.isupper() and text[i + 1 : i + 2].islower():
                spelled = spelled.capitalize()  # Хабаров -> Khabarov, not KHabarov
            out.append(spelled)
        elif ch.isalnum() and not unicodedata.name(ch, "").startswith("LATIN"):
            # a letter or digit of a script with no scheme: refused, never written as dots
            raise NotCbprError(
                f"{value[:60]!r} has {ch!r} (U+{ord(ch):04X}), a character of a script that "
                "CBPR+ does not allow (its character set is Latin) and that has no documented "
                "transliteration here (Latin accents, Cyrillic and Greek have one): write the "
                "text in Latin script before translating")
        elif not unicodedata.combining(ch):
            out.append(".")
    return " ".join("".join(out).split())


def placeholder_only(value: str | None) -> bool:
    """True for a non-empty text with no letter or digit: only dots, blanks or the
    punctuation of X, which is what a lossy translation leaves of a name it could not
    write. Such a name never stands for a real one."""
    return bool(value) and all(ch in _PLACEHOLDER or ch.isspace() for ch in value)


def fit(value: str, width: int) -> str:
    """``value`` cut to ``width`` characters, the last one replaced by "+" when cut."""
    return value if len(value) <= width else value[: width - 1] + "+"


def safe_line(line: str) -> str:
    """A continuation line may not start with ":" or "-" (it would read as a new field or
    the end of the block): that first character becomes "."."""
    return "." + line[1:] if line[:1] in (":", "-") else line


def chunks(value: str, width: int, max_lines: int, first: str = "", cont: str = "") -> list[str]:
    """``value`` cut into lines of ``width`` (the first prefixed by ``first``, the others by
    ``cont``); beyond ``max_lines`` the last kept line ends with "+"."""
    lines, rest = [], value
    while rest:
        prefix = first if not lines else cont
        take = width - len(prefix)
        lines.append(prefix + rest[:take])
        rest = rest[take:]
    if len(lines) > max_lines:
        lines = lines[: max_lines - 1] + [lines[max_lines - 1][: width - 1] + "+"]
    return [safe_line(line) for line in lines]
