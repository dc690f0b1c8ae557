"""ISO 20022 pacs.008 <-> SWIFT MT103 translation (``textgyms/ISO20022-MT103-v4`` and
``textgyms/MT103ToISO20022-v3``).

Public API: :func:`translate` (pacs.008.001.08-.13 -> MT103), :func:`translate_mt` (MT103 ->
pacs.008.001.08), :func:`score` and :func:`score_mx` (the verifiers of the two directions).
Importing this package needs only the standard library, numpy and textgyms' core: lxml
(XSD validation) and schwifty (IBANs) are imported when first used.
"""

from textgyms.envs.iso20022.reverse import translate_mt
from textgyms.envs.iso20022.translate import translate
from textgyms.envs.iso20022.verify import score
from textgyms.envs.iso20022.verify_mx import score_mx

__all__ = ["translate", "translate_mt", "score", "score_mx"]
