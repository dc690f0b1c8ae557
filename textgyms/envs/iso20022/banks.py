"""Banks, BICs and accounts for the pacs.008 generator and the ``bic_info`` tool.

Banks in IBAN countries come from ``schwifty``'s bank registry (real bank codes with their
BICs), so every generated IBAN is registry-consistent: its bank code resolves, through
schwifty, to the BIC of the agent that services it. Banks of non-IBAN countries (and a few
IBAN countries schwifty has no registry for) come from the small own table ``OTHER_BANKS``
of well-known public BICs; their accounts are national account numbers (``Othr/Id``).
"""

from __future__ import annotations

import hashlib
import warnings
from functools import cache
from typing import NamedTuple

import numpy as np

from textgyms.envs.iso20022 import bankdata
from textgyms.errors import DataError


class Bank(NamedTuple):
    """One financial institution: its BIC11, name, country and (for registry banks) the
    bank and branch codes its IBANs carry."""

    bic: str
    name: str
    country: str
    city: str = ""
    bank_code: str = ""
    branch_code: str = ""


# Countries whose banks are drawn from schwifty's registry (IBAN countries).
REGISTRY_COUNTRIES = (
    "DE", "FR", "NL", "IT", "ES", "BE", "AT", "CH", "GB", "SE", "LU", "IE", "FI", "PL",
    "NO", "PT", "AE", "TR",
)  # fmt: skip
# Public BICs (facts) of banks outside the registry, with their head-office city.
OTHER_BANKS: tuple[Bank, ...] = tuple(
    Bank(bic, name, bic[4:6], city)
    for bic, name, city in (
        ("CHASUS33XXX", "JPMORGAN CHASE BANK, N.A.", "NEW YORK"),
        ("CITIUS33XXX", "CITIBANK N.A.", "NEW YORK"),
        ("BOFAUS3NXXX", "BANK OF AMERICA, N.A.", "NEW YORK"),
        ("IRVTUS3NXXX", "THE BANK OF NEW YORK MELLON", "NEW YORK"),
        ("WFBIUS6SXXX", "WELLS FARGO BANK, N.A.", "SAN FRANCISCO"),
        ("BOTKJPJTXXX", "MUFG BANK, LTD.", "TOKYO"),
        ("MHCBJPJTXXX", "MIZUHO BANK, LTD.", "TOKYO"),
        ("SMBCJPJTXXX", "SUMITOMO MITSUI BANKING CORPORATION", "TOKYO"),
        ("DBSSSGSGXXX", "DBS BANK LTD.", "SINGAPORE"),
        ("OCBCSGSGXXX", "OVERSEA-CHINESE BANKING CORPORATION LIMITED", "SINGAPORE"),
        ("HSBCHKHHHKH", "THE HONGKONG AND SHANGHAI BANKING CORPORATION LIMITED", "HONG KONG"),
        ("SCBLHKHHXXX", "STANDARD CHARTERED BANK (HONG KONG) LIMITED", "HONG KONG"),
        ("ROYCCAT2XXX", "ROYAL BANK OF CANADA", "TORONTO"),
        ("TDOMCATTTOR", "THE TORONTO-DOMINION BANK", "TORONTO"),
        ("CTBAAU2SXXX", "COMMONWEALTH BANK OF AUSTRALIA", "SYDNEY"),
        ("ANZBAU3MXXX", "AUSTRALIA AND NEW ZEALAND BANKING GROUP LIMITED", "MELBOURNE"),
        ("BKCHCNBJXXX", "BANK OF CHINA LIMITED", "BEIJING"),
        ("ICBKCNBJXXX", "INDUSTRIAL AND COMMERCIAL BANK OF CHINA LIMITED", "BEIJING"),
        ("SBININBBXXX", "STATE BANK OF INDIA", "MUMBAI"),
        ("HDFCINBBXXX", "HDFC BANK LIMITED", "MUMBAI"),
        ("NBOKKWKWXXX", "NATIONAL BANK OF KUWAIT S.A.K.P.", "KUWAIT"),
        ("NBOBBHBMXXX", "NATIONAL BANK OF BAHRAIN B.S.C.", "MANAMA"),
        ("BMUSOMRXXXX", "BANK MUSCAT SAOG", "MUSCAT"),
        ("DEUTDEFFXXX", "DEUTSCHE BANK AG", "FRANKFURT AM MAIN"),
        ("COBADEFFXXX", "COMMERZBANK AG", "FRANKFURT AM MAIN"),
        ("BNPAFRPPXXX", "BNP PARIBAS", "PARIS"),
        ("SOGEFRPPXXX", "SOCIETE GENERALE", "PARIS"),
        ("HSBCGB2LXXX", "HSBC BANK PLC", "LONDON"),
        ("BARCGB22XXX", "BARCLAYS BANK PLC", "LONDON"),
        ("UBSWCHZH80A", "UBS SWITZERLAND AG", "ZURICH"),
        ("INGBNL2AXXX", "ING BANK N.V.", "AMSTERDAM"),
        ("BBVAESMMXXX", "BANCO BILBAO VIZCAYA ARGENTARIA, S.A.", "MADRID"),
        ("UNCRITMMXXX", "UNICREDIT S.P.A.", "MILAN"),
        ("NDEAFIHHXXX", "NORDEA BANK ABP", "HELSINKI"),
        ("ESSESESSXXX", "SKANDINAVISKA ENSKILDA BANKEN AB", "STOCKHOLM"),
        ("SCBLUS33XXX", "STANDARD CHARTERED BANK", "NEW YORK"),
    )
)
# Fedwire routing numbers (ABA) of the US banks above (public facts).
ABA = {"CHASUS33XXX": "021000021", "CITIUS33XXX": "021000089", "BOFAUS3NXXX": "026009593",
       "IRVTUS3NXXX": "021000018", "WFBIUS6SXXX": "121000248"}
# Countries whose registry bank or branch code is the national clearing member id.
CLEARING_BY_BANK_CODE = {"DE": "DEBLZ", "AT": "ATBLZ", "CH": "CHBCC"}
CLEARING_BY_BRANCH_CODE = {"GB": "GBDSC", "IE": "IENCC"}
# Correspondent banks used as intermediary, reimbursement and previous instructing agents.
CORRESPONDENTS = tuple(b for b in OTHER_BANKS if b.country in ("US", "DE", "FR", "GB", "CH",
                                                               "NL", "ES", "IT", "FI", "SE"))
# Own-format IBANs for the IBAN countries of OTHER_BANKS (bank code = BIC's first 4 letters).
OWN_IBAN_LENGTH = {"KW": 22, "BH": 14, "OM": 0}
# National account-number lengths in non-IBAN countries (digits).
ACCOUNT_DIGITS = {"US": 12, "JP": 7, "SG": 10, "HK": 12, "CA": 12, "AU": 9, "CN": 19,
                  "IN": 14, "OM": 16}
CURRENCY = {
    "DE": "EUR", "FR": "EUR", "NL": "EUR", "IT": "EUR", "ES": "EUR", "BE": "EUR", "AT": "EUR",
    "LU": "EUR", "IE": "EUR", "FI": "EUR", "PT": "EUR", "CH": "CHF", "GB": "GBP", "SE": "SEK",
    "PL": "PLN", "NO": "NOK", "AE": "AED", "TR": "TRY", "US": "USD", "JP": "JPY", "SG": "SGD",
    "HK": "HKD", "CA": "CAD", "AU": "AUD", "CN": "CNY", "IN": "INR", "KW": "KWD", "BH": "BHD",
    "OM": "OMR",
}  # fmt: skip
BANKS_PER_COUNTRY = 24
IBANS_PER_BANK = 48


@cache
def registry_banks() -> dict[str, tuple[Bank, ...]]:
    """Per registry country, up to ``BANKS_PER_COUNTRY`` banks of that country:
    :func:`pick_registry_banks`'s, read from the shipped bank data (:mod:`bankdata`) when it
    was picked with the installed schwifty, else picked (once per process)."""
    rows = bankdata.registry(BANKS_PER_COUNTRY)
    if rows is None:
        return pick_registry_banks()
    out: dict[str, list[Bank]] = {}
    for country, bic, bank_code, branch_code, name in rows:
        out.setdefault(country, []).append(Bank(bic, name, country, "", bank_code, branch_code))
    return {country: tuple(found) for country, found in out.items()}


def pick_registry_banks() -> dict[str, tuple[Bank, ...]]:
    """Per registry country, up to ``BANKS_PER_COUNTRY`` banks of that country (their BIC's
    country code is the registry's) whose generated IBANs are valid and resolve back to the
    bank's BIC (three probes each)."""
    from schwifty import IBAN, registry

    probe = np.random.default_rng(20022)  # a fixed stream: the pool is the same everywhere
    pool: dict[str, tuple[Bank, ...]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for country in REGISTRY_COUNTRIES:
            spec = registry.get_iban_spec(country)
            # Only banks whose BIC is of the registry's country: the registry of FR also lists
            # banks of French Polynesia and Martinique (BIC countries PF, MQ), CH one in DE, SE
            # one in MT, and a customer of theirs would get an address of the wrong country.
            entries = sorted(
                {(b.bank_code, b.bic, b.name) for b in registry.get_banks_by_country(country)
                 if b.bic and b.bank_code and b.primary and len(b.bic) in (8, 11)
                 and b.bic[4:6] == country}
            )
            step = max(1, len(entries) // (3 * BANKS_PER_COUNTRY))
            kept: list[Bank] = []
            for code, bic, name in entries[::step]:
                bank = _registry_bank(country, code, bic, name, spec)
                if bank is not None and all(_probe(IBAN, bank, probe) for _ in range(3)):
                    kept.append(bank)
                if len(kept) == BANKS_PER_COUNTRY:
                    break
            if not kept:
                raise DataError(f"schwifty's registry gave no usable bank for {country}")
            pool[country] = tuple(kept)
    return pool


def _registry_bank(country: str, code: str, bic: str, name: str, spec) -> Bank | None:
    """A Bank for a registry entry, splitting a combined bank+branch code when needed."""
    from schwifty.domain import Component

    pos = spec.positions
    bank_len = pos[Component.BANK_CODE].end - pos[Component.BANK_CODE].start
    branch_len = pos[Component.BRANCH_CODE].end - pos[Component.BRANCH_CODE].start
    if len(code) == bank_len + branch_len:
        bank_code, branch = code[:bank_len], code[bank_len:]
    elif len(code) == bank_len:
        bank_code, branch = code, "0" * branch_len
    else:
        return None
    bic11 = bic if len(bic) == 11 else bic + "XXX"
    return Bank(bic11, name.upper(), country, "", bank_code, branch)


def _probe(iban_cls, bank: Bank, rng: np.random.Generator) -> bool:
    """True when a random IBAN at ``bank`` validates and resolves back to its BIC."""
    try:
        iban = iban_cls(make_iban(bank, rng), validate_bban=True)
    except (ValueError, DataError):
        return False
    bic = str(iban.bic or "")
    return bic[:8] == bank.bic[:8] and (len(bic) == 8 or bic == bank.bic)


@cache
def _account_length(country: str) -> int:
    from schwifty import registry
    from schwifty.domain import Component

    pos = registry.get_iban_spec(country).positions[Component.ACCOUNT_CODE]
    return pos.end - pos.start


def make_iban(bank: Bank, rng: np.random.Generator) -> str:
    """A valid IBAN of a random account at ``bank`` (national check digits included)."""
    from schwifty import IBAN

    if bank.country in OWN_IBAN_LENGTH:
        digits = _digits(rng, OWN_IBAN_LENGTH[bank.country])
        return str(IBAN.generate(bank.country, bank.bic[:4], digits))
    # A random account number fails a national check digit now and then (NO, some DE
    # banks): draw again, a bounded number of times.
    for _ in range(50):
        digits = _digits(rng, _account_length(bank.country))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return str(
                    IBAN.generate(bank.country, bank.bank_code, digits, bank.bank_code and
                                  bank.branch_code)
                )
        except ValueError:
            continue
    raise DataError(f"no valid IBAN could be generated for {bank.bic}")


@cache
def iban_pool(bank: Bank) -> tuple[str, ...]:
    """``IBANS_PER_BANK`` valid IBANs at ``bank``: :func:`build_pool`'s, read from the shipped
    bank data (:mod:`bankdata`) when it holds this bank's pool for the installed schwifty,
    else built (once per process)."""
    pool = bankdata.shipped_pool((bank.bic, bank.bank_code, bank.branch_code), IBANS_PER_BANK)
    return pool if pool is not None else build_pool(bank)


def build_pool(bank: Bank) -> tuple[str, ...]:
    """``IBANS_PER_BANK`` valid IBANs at ``bank``, drawn from a stream seeded by the BIC (so
    the pool is the same in every process, whatever the order of use): schwifty's IBAN
    construction costs about 100 us, most of a message's generation time."""
    seed = int.from_bytes(hashlib.blake2b(bank.bic.encode(), digest_size=8).digest(), "little")
    rng = np.random.default_rng(seed)
    return tuple(make_iban(bank, rng) for _ in range(IBANS_PER_BANK))


def pooled_banks(registry: dict[str, tuple[Bank, ...]] | None = None) -> tuple[Bank, ...]:
    """Every bank :func:`make_account` draws IBANs at (what the shipped pools cover): those of
    ``registry`` (default :func:`registry_banks`), and those of :data:`OTHER_BANKS` with
    own-format IBANs."""
    others = tuple(b for b in OTHER_BANKS
                   if b.country in OWN_IBAN_LENGTH and b.country not in ACCOUNT_DIGITS)
    picked = registry_banks() if registry is None else registry
    return tuple(b for banks in picked.values() for b in banks) + others


def make_account(bank: Bank, rng: np.random.Generator) -> tuple[str, bool]:
    """An account at ``bank``: ``(IBAN, True)`` in IBAN countries, else ``(number, False)``."""
    if bank.country in ACCOUNT_DIGITS:
        return _digits(rng, ACCOUNT_DIGITS[bank.country]), False
    pool = iban_pool(bank)
    return pool[int(rng.integers(len(pool)))], True


def _digits(rng: np.random.Generator, n: int) -> str:
    """``n`` random decimal digits."""
    out = ""
    while len(out) < n:
        k = min(18, n - len(out))
        out += f"{int(rng.integers(10**k)):0{k}d}"
    return out


@cache
def by_bic() -> dict[str, Bank]:
    """Every known bank by BIC11 (the ``bic_info`` directory)."""
    table = {b.bic: b for b in OTHER_BANKS}
    for banks in registry_banks().values():
        for b in banks:
            table.setdefault(b.bic, b)
    return table


def clearing_id(bank: Bank) -> tuple[str, str] | None:
    """The bank's clearing-system member id as (ISO clearing system code, member id), for
    the countries where one is known: Fedwire ABA, UK and Irish sort codes, German and
    Austrian Bankleitzahl, Swiss bank clearing number."""
    if bank.bic in ABA:
        return "USABA", ABA[bank.bic]
    if bank.country in CLEARING_BY_BANK_CODE and bank.bank_code.isdigit():
        return CLEARING_BY_BANK_CODE[bank.country], bank.bank_code
    if (bank.country in CLEARING_BY_BRANCH_CODE and len(bank.branch_code) == 6
            and bank.branch_code.strip("0")):
        return CLEARING_BY_BRANCH_CODE[bank.country], bank.branch_code
    return None


def bic_info(bic: str) -> str:
    """What the ``bic_info`` tool tells the agent about ``bic`` (BIC8 or BIC11)."""
    from textgyms.envs.iso20022.mt103 import BIC_RE

    code = bic.strip().upper()
    if not BIC_RE.fullmatch(code):
        return f"{code[:20]!r} is not a well-formed BIC (4!a2!a2!c[3!c])."
    bic11 = code if len(code) == 11 else code + "XXX"
    bank = by_bic().get(bic11)
    if bank is None:
        return f"{bic11}: not in this directory (country code {code[4:6]})."
    city = f", {bank.city}" if bank.city else ""
    return f"{bic11}: {bank.name}{city}, country {bank.country}."
