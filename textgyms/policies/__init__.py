"""Policies: a batch of observations (and infos) in, a batch of action strings out.

``ScriptedPolicy("oracle")`` plays each env's ``solve()`` actions; ``ScriptedPolicy("random")``
plays each env's ``sample_action`` (a random valid move where the family defines one). Both
need to reach the envs: pass ``envs`` to :meth:`Policy.act`, either a list of Gymnasium envs or
a textgyms ``VecEnv`` (which forwards ``call`` to its workers). Model-backed policies (OpenAI-
compatible servers, transformers, vLLM) come with the ecosystem adapters and ignore ``envs``.
"""

from textgyms.policies.base import Policy, make_policy
from textgyms.policies.scripted import ScriptedPolicy

__all__ = ["Policy", "ScriptedPolicy", "make_policy"]
