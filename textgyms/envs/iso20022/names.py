"""Word lists for party names, addresses and remittance texts (own lists; the towns and
postcode shapes are public facts). Level 3+ draws from the ``*_INTL`` lists, which carry
characters outside the SWIFT X character set."""

from __future__ import annotations

FIRST = ("ANNA", "LUCAS", "MARIA", "JONAS", "SOFIA", "DAVID", "EMMA", "PAUL", "LINA", "OMAR",
         "KENJI", "PRIYA", "WEI", "FATIMA", "MARCO", "ELENA", "THOMAS", "CHLOE", "IVAN", "NORA")
LAST = ("SMITH", "MUELLER", "ROSSI", "MARTIN", "GARCIA", "JANSEN", "NOVAK", "BERG", "KHAN",
        "TANAKA", "SHARMA", "CHEN", "DUBOIS", "SILVA", "WALSH", "KOWALSKI", "LINDQVIST")
ROOTS = ("ACME", "NORDIC", "ALPINE", "HARBOUR", "SUNRISE", "ORBIT", "GREENFIELD", "ATLAS",
         "CEDAR", "HORIZON", "QUANTUM", "RIVERSIDE", "SUMMIT", "VERTEX", "PIONEER", "LOTUS")
TRADES = ("TRADING", "LOGISTICS", "TEXTILES", "ENGINEERING", "FOODS", "PHARMA", "SOFTWARE",
          "METALS", "SHIPPING", "ENERGY", "FURNITURE", "CONSULTING")
SUFFIX = {"DE": "GMBH", "AT": "GMBH", "CH": "AG", "FR": "SAS", "BE": "NV", "NL": "BV",
          "IT": "SRL", "ES": "SL", "PT": "LDA", "GB": "LTD", "IE": "LTD", "SE": "AB", "NO": "AS",
          "FI": "OY", "PL": "SP. Z O.O.", "LU": "SARL", "US": "INC", "CA": "INC", "AU": "PTY LTD",
          "JP": "KK", "SG": "PTE LTD", "HK": "LIMITED", "CN": "CO LTD", "IN": "PVT LTD",
          "AE": "LLC", "TR": "AS", "KW": "WLL", "BH": "WLL", "OM": "LLC"}
# Names with characters of the CBPR+ character set that are outside the SWIFT X set (CBPR+
# text has no accented letters: its set is X plus ! " # $ % & * ; < = > @ [ ] _ { | } ~), and
# names too long for one 35-character line.
NAMES_INTL = ("MUELLER & SOEHNE MASCHINENBAU GMBH", "SOCIETE GENERALE DE TRANSPORT S.A R.L.",
              "ORSTED OSTERGAARD APS", "LUKASZ WISNIEWSKI", "JOSE ANGEL NUNEZ PENA",
              "CELIK DIS TICARET A.S.", "BJORK & ABERG HANDELSBOLAG", "STRASSE@WERK_KOELN KG",
              "FRANCOIS-XAVIER LEFEVRE", "ZOE O'BRIEN-NI BHRIAIN", "ALPHA#1 TRADING; EXPORT")
LONG_NAMES = ("INTERNATIONAL ADVANCED MANUFACTURING AND DISTRIBUTION HOLDINGS LIMITED",
              "FONDATION POUR LA RECHERCHE MEDICALE ET L'INNOVATION THERAPEUTIQUE",
              "CONSOLIDATED MARITIME CONTAINER LEASING AND TERMINAL SERVICES PLC",
              "VEREINIGTE ELEKTRIZITAETS- UND WASSERVERSORGUNGSGESELLSCHAFT MBH")
# country -> (town, postcode) pairs.
TOWNS = {
    "DE": (("BERLIN", "10115"), ("MUENCHEN", "80331"), ("HAMBURG", "20095")),
    "AT": (("WIEN", "1010"), ("GRAZ", "8010")), "CH": (("ZUERICH", "8001"), ("GENEVE", "1201")),
    "FR": (("PARIS", "75008"), ("LYON", "69002")), "BE": (("BRUXELLES", "1000"), ("GENT", "9000")),
    "NL": (("AMSTERDAM", "1012 AB"), ("ROTTERDAM", "3011 AA")),
    "IT": (("MILANO", "20121"), ("ROMA", "00184")), "ES": (("MADRID", "28013"),),
    "PT": (("LISBOA", "1100-148"),), "GB": (("LONDON", "EC2V 7HH"), ("MANCHESTER", "M1 1AE")),
    "IE": (("DUBLIN", "D02 X285"),), "SE": (("STOCKHOLM", "111 52"),), "NO": (("OSLO", "0150"),),
    "FI": (("HELSINKI", "00100"),), "PL": (("WARSZAWA", "00-001"),),
    "LU": (("LUXEMBOURG", "L-1150"),),
    "US": (("NEW YORK", "10005"), ("CHICAGO", "60603")), "CA": (("TORONTO", "M5J 2J5"),),
    "AU": (("SYDNEY", "2000"),), "JP": (("TOKYO", "100-0005"),), "SG": (("SINGAPORE", "018989"),),
    "HK": (("HONG KONG", "999077"),), "CN": (("SHANGHAI", "200120"),),
    "IN": (("MUMBAI", "400001"),),
    "AE": (("DUBAI", "00000"),), "TR": (("ISTANBUL", "34394"),), "KW": (("KUWAIT CITY", "13001"),),
    "BH": (("MANAMA", "317"),), "OM": (("MUSCAT", "112"),),
}  # fmt: skip
# town -> streets of that town (public facts). Keyed by town, not country, so an address
# never puts a street of one city (or one country: a Bahnhofstrasse is in DE and CH) in
# another; no street name appears under two towns.
STREETS = {
    "BERLIN": ("FRIEDRICHSTRASSE", "KURFUERSTENDAMM", "UNTER DEN LINDEN"),
    "MUENCHEN": ("MAXIMILIANSTRASSE", "LEOPOLDSTRASSE", "KAUFINGERSTRASSE"),
    "HAMBURG": ("JUNGFERNSTIEG", "MOENCKEBERGSTRASSE", "GROSSE BLEICHEN"),
    "WIEN": ("KAERNTNER STRASSE", "MARIAHILFER STRASSE"), "GRAZ": ("HERRENGASSE", "ANNENSTRASSE"),
    "ZUERICH": ("BAHNHOFSTRASSE", "LIMMATQUAI"), "GENEVE": ("RUE DU RHONE", "RUE DU MARCHE"),
    "PARIS": ("RUE DE LA PAIX", "AVENUE DES CHAMPS-ELYSEES", "RUE DE RIVOLI"),
    "LYON": ("RUE DE LA REPUBLIQUE", "QUAI SAINT-ANTOINE"),
    "BRUXELLES": ("RUE DE LA LOI", "AVENUE LOUISE"), "GENT": ("VELDSTRAAT", "KORENMARKT"),
    "AMSTERDAM": ("DAMRAK", "KALVERSTRAAT"), "ROTTERDAM": ("COOLSINGEL", "LIJNBAAN"),
    "MILANO": ("CORSO BUENOS AIRES", "VIA MONTENAPOLEONE"), "ROMA": ("VIA DEL CORSO",
    "VIA NAZIONALE"), "MADRID": ("CALLE DE ALCALA", "GRAN VIA", "PASEO DE LA CASTELLANA"),
    "LISBOA": ("AVENIDA DA LIBERDADE", "RUA AUGUSTA"),
    "LONDON": ("KINGSWAY", "PICCADILLY", "CHEAPSIDE"), "MANCHESTER": ("DEANSGATE",
    "MARKET STREET"), "DUBLIN": ("GRAFTON STREET", "O'CONNELL STREET"),
    "STOCKHOLM": ("DROTTNINGGATAN", "KUNGSGATAN"), "OSLO": ("KARL JOHANS GATE", "STORGATA"),
    "HELSINKI": ("MANNERHEIMINTIE", "ALEKSANTERINKATU"), "WARSZAWA": ("ULICA MARSZALKOWSKA",
    "NOWY SWIAT"), "LUXEMBOURG": ("BOULEVARD ROYAL", "GRAND-RUE"),
    "NEW YORK": ("BROADWAY", "WALL STREET"), "CHICAGO": ("MICHIGAN AVENUE", "LASALLE STREET"),
    "TORONTO": ("BAY STREET", "KING STREET W"), "SYDNEY": ("GEORGE STREET", "PITT STREET"),
    "TOKYO": ("MARUNOUCHI", "NIHONBASHI"), "SINGAPORE": ("RAFFLES PLACE", "ORCHARD ROAD"),
    "HONG KONG": ("QUEEN'S ROAD CENTRAL", "DES VOEUX ROAD"),
    "SHANGHAI": ("NANJING ROAD", "LUJIAZUI RING ROAD"), "MUMBAI": ("NARIMAN POINT", "MG ROAD"),
    "DUBAI": ("SHEIKH ZAYED ROAD", "AL WASL ROAD"), "ISTANBUL": ("ISTIKLAL CADDESI",
    "BUYUKDERE CADDESI"), "KUWAIT CITY": ("ARABIAN GULF STREET", "FAHAD AL SALEM STREET"),
    "MANAMA": ("GOVERNMENT AVENUE",), "MUSCAT": ("SULTAN QABOOS STREET",),
}  # fmt: skip
REMITTANCE = ("INVOICE {n} DATED {d}", "PO {n} PARTIAL PAYMENT", "CONTRACT {n} INSTALMENT 2",
              "SALARY {d}", "RENT FLAT 4B {d}", "SERVICE FEE Q{q} REF {n}",
              "ORDER {n} - GOODS AS PER PROFORMA", "LOAN REPAYMENT {n}")
REMITTANCE_INTL = ("RECHNUNG NR. {n} VOM {d} - ZAHLUNG FUER LIEFERUNG & MONTAGE",
                   "FACTURE NO {n} : ACOMPTE 30 % (ECHEANCE {d})",
                   "INVOICE #{n}; REF {d} <URGENT> 50% @ NET-30",
                   "PAGO FACTURA {n} - MANTENIMIENTO {d}")
# Corporate (non-bank) BIC stems: the fifth to eighth characters are country and location.
CORPORATE_BIC_STEMS = ("ACME", "NRDC", "ALPN", "HRBR", "SNRS", "ORBT", "GRNF", "ATLS")
NEXT_AGENT_INFO = ("PLEASE ADVISE BENEFICIARY ON RECEIPT", "FUNDS FOR IMMEDIATE CREDIT",
                   "COVER SENT VIA CORRESPONDENT, VALUE AS INDICATED ABOVE")
REG_INFO = ("PAYMENT FOR IMPORTED GOODS", "SERVICES RENDERED, CONSULTING",
            "DIVIDEND TO NON-RESIDENT HOLDER", "REPATRIATION OF CAPITAL")
