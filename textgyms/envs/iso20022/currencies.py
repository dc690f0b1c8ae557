"""ISO 4217 minor units (own table) and amount formatting for XML and SWIFT MT.

The minor unit is the number of decimals a currency allows: 2 for most, 0 for JPY or KRW,
3 for the dinars (KWD, BHD, JOD, OMR, TND, LYD, IQD). A 32A/33B/71F/71G amount with more
decimals than its currency allows breaks SWIFT network rule C03.
"""

from __future__ import annotations

from decimal import Decimal

# Facts from the ISO 4217 list (currency code -> number of minor-unit digits).
MINOR_UNITS: dict[str, int] = {
    "AED": 2, "AUD": 2, "BHD": 3, "BRL": 2, "CAD": 2, "CHF": 2, "CLP": 0, "CNY": 2,
    "CRC": 2, "CZK": 2, "DKK": 2, "EUR": 2, "GBP": 2, "GEL": 2, "HKD": 2, "HUF": 2,
    "IDR": 2, "ILS": 2, "INR": 2, "IQD": 3, "ISK": 0, "JOD": 3, "JPY": 0, "KRW": 0,
    "KWD": 3, "KZT": 2, "LYD": 3, "MXN": 2, "NOK": 2, "NZD": 2, "OMR": 3, "PKR": 2,
    "PLN": 2, "QAR": 2, "RON": 2, "RSD": 2, "SAR": 2, "SEK": 2, "SGD": 2, "THB": 2,
    "TND": 3, "TRY": 2, "UAH": 2, "UGX": 0, "USD": 2, "VND": 0, "XAF": 0, "XOF": 0,
    "ZAR": 2,
}  # fmt: skip


def minor_units(ccy: str) -> int:
    """Decimals allowed for ``ccy`` (2 for a code not in the table, the ISO default)."""
    return MINOR_UNITS.get(ccy, 2)


def quantize(amount: Decimal, ccy: str) -> Decimal:
    """``amount`` rounded to the minor unit of ``ccy``."""
    return amount.quantize(Decimal(1).scaleb(-minor_units(ccy)))


def xml_amount(amount: Decimal, ccy: str) -> str:
    """The XML form: a point and exactly the currency's decimals ("1234.50", "1500")."""
    return f"{quantize(amount, ccy):f}"


def mt_amount(amount: Decimal, ccy: str) -> str:
    """The SWIFT form: a mandatory decimal comma and the currency's decimals ("1234,50",
    "1500,")."""
    text = xml_amount(amount, ccy)
    return text.replace(".", ",") if "." in text else text + ","


def mt_decimal(value: Decimal) -> str:
    """A rate or other SWIFT ``d`` number: decimal comma, no trailing zeros ("0,9215", "1,")."""
    text = f"{value.normalize():f}"
    if "." not in text:
        return text + ","
    return text.rstrip("0").replace(".", ",")
