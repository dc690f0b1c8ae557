"""UTC offsets of the generated banks' countries, for plausible 13C time indications.

A 13C time is the local time of the place it names (the sending or receiving central bank,
or CLS for CLSTIME) with that place's offset against UTC. The offsets are the standard ones
of each country's financial centre; daylight-saving time is applied only in the months it
lasts all month (the generator draws days 1 to 28, so the changeover months are left at the
standard offset, which keeps the table free of changeover dates).
"""

from __future__ import annotations

# Standard offset (minutes east of UTC) of each country's financial centre.
STANDARD = {
    "DE": 60, "FR": 60, "NL": 60, "IT": 60, "ES": 60, "BE": 60, "AT": 60, "LU": 60, "CH": 60,
    "SE": 60, "NO": 60, "PL": 60, "GB": 0, "IE": 0, "PT": 0, "FI": 120, "TR": 180, "AE": 240,
    "KW": 180, "BH": 180, "OM": 240, "US": -300, "CA": -300, "JP": 540, "SG": 480, "HK": 480,
    "CN": 480, "IN": 330, "AU": 600,
}  # fmt: skip
# Months wholly inside daylight-saving time (one hour added): Europe from the last Sunday of
# March to the last Sunday of October, the US and Canada from the second Sunday of March to
# the first Sunday of November, Sydney from the first Sunday of October to that of April.
_EUROPE = frozenset({"DE", "FR", "NL", "IT", "ES", "BE", "AT", "LU", "CH", "SE", "NO", "PL",
                     "GB", "IE", "PT", "FI"})
_SUMMER = {**dict.fromkeys(_EUROPE, range(4, 10)), "US": range(4, 11), "CA": range(4, 11),
           "AU": (11, 12, 1, 2, 3)}
# CLS expresses its deadlines in Central European Time.
CLS_COUNTRY = "DE"


def utc_offset(country: str, month: int) -> str:
    """The offset against UTC ("+01:00") of ``country`` in ``month`` (1-12); "+00:00" for a
    country the table does not know."""
    minutes = STANDARD.get(country, 0) + (60 if month in _SUMMER.get(country, ()) else 0)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
