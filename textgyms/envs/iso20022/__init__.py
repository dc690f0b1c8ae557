"""ISO 20022 pacs.008 -> SWIFT MT103 translation (``textgyms/ISO20022-MT103-v1``).

Public API: :func:`translate` (the reference translator) and :func:`score` (the verifier).
Both modules use only the standard library and textgyms' core (no lxml, no schwifty), so
importing this package stays cheap.
"""

from textgyms.envs.iso20022.translate import translate
from textgyms.envs.iso20022.verify import score

__all__ = ["translate", "score"]
