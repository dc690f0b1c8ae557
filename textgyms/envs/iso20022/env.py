"""``textgyms/ISO20022-MT103-v4``: translate an ISO 20022 pacs.008 into a SWIFT MT103.

The agent sees a pacs.008.001.08 FI-to-FI customer credit transfer (CBPR+ usage; at level 4
sometimes inside a business application header envelope) and answers with the equivalent
MT103, ``<answer>{1:...}{2:...}{3:{121:...}}{4:\\n...\\n-}</answer>`` or the JSON tool call
``{"name": "answer", "arguments": {"mt": "..."}}``. The answer is scored field by field
against the reference translation (:mod:`textgyms.envs.iso20022.verify`); the first answer
ends the episode. Actions without a tool call get feedback and count as invalid.

Kwargs: ``difficulty`` (levels 1-4, default 2; see :mod:`generate`), ``multi_turn`` (False;
True adds the ``validate(mt)`` tool, which returns only format and network-rule errors, and the
``bic_info(bic)`` tool), ``rule_card`` (None: shown at levels 1-3, hidden at 4; or
True/False), ``max_turns`` (default 3 single-turn, 10 multi-turn), ``max_invalid``,
``invalid_penalty``, ``reward_mode`` (dense shaping is 0 before the answer), ``split``
("train" default, "test": the one task in five held out by a hash of the task, "all").

Family info keys: ``difficulty`` (the level, 1-4); on the answer turn also
``translation_loss`` (names of pacs.008 elements no MT103 field carries, and the cuts of
field 70 to its 4*35x; generated messages keep to what the MT103 can say but for those cuts).
"""

from __future__ import annotations

import numpy as np

from textgyms.actions import Param, ParseError, ToolSpec, parse
from textgyms.core import SPLITS, TextEnv, Turn, Verdict, check_choice, generate_in_split
from textgyms.envs.iso20022 import banks, mt103, xsd
from textgyms.envs.iso20022.generate import LEVELS, IsoTask, MtTask, generate, generate_mt
from textgyms.envs.iso20022.reverse import HEADER_RULES, translate_mt_with_losses
from textgyms.envs.iso20022.reverse import RULES as MX_RULES
from textgyms.envs.iso20022.rulecard import RULE_CARD
from textgyms.envs.iso20022.verify import score
from textgyms.envs.iso20022.verify_mx import score_mx_report
from textgyms.extras import require

require("iso", "lxml", "schwifty")  # the env needs both (translate/score alone need neither)

ANSWER = ToolSpec("answer", "Submit the MT103 (final; ends the episode).",
                  (Param("mt", "string", "the complete MT103 message, blocks 1 to 4"),))
VALIDATE = ToolSpec("validate", "Check an MT103 for format and network-rule errors only.",
                    (Param("mt", "string", "the MT103 message to check"),))
BIC_INFO = ToolSpec("bic_info", "Look up a BIC: institution name, city and country.",
                    (Param("bic", "string", "a BIC8 or BIC11"),))
MX_ANSWER = ToolSpec("answer", "Submit the pacs.008 XML (final; ends the episode).",
                     (Param("xml", "string", "the complete pacs.008.001.08 Document"),))
SINGLE_TOOLS = (ANSWER,)
MULTI_TOOLS = (ANSWER, VALIDATE, BIC_INFO)


class IsoState:
    """The task and whether the episode has an answer yet."""

    __slots__ = ("task", "verdict")

    def __init__(self, task: IsoTask) -> None:
        self.task = task
        self.verdict: Verdict | None = None


class Iso20022Env(TextEnv):
    """pacs.008 -> MT103 translation; see the module docstring."""

    metric_parts = ("format", "content", "precision", "material")

    tools = SINGLE_TOOLS
    conformance_variants = ({}, {"difficulty": 1}, {"difficulty": 3}, {"difficulty": 4},
                            {"difficulty": 2, "multi_turn": True})

    def __new__(cls, *args, **kwargs):
        # The tool schemas in info["tools"] are per class: multi-turn is a subclass.
        if cls is Iso20022Env and kwargs.get("multi_turn") is True:
            cls = Iso20022MultiTurnEnv
        return super().__new__(cls)

    def __init__(self, *, difficulty: int = 2, multi_turn: bool = False,
                 rule_card: bool | None = None, max_turns: int | None = None,
                 split: str = "train", **kwargs) -> None:
        self.level = check_choice("difficulty", difficulty, LEVELS)
        self.split = check_choice("split", split, SPLITS)
        self.multi_turn = check_choice("multi_turn", multi_turn, (False, True))
        self.rule_card = check_choice("rule_card", rule_card, (None, True, False))
        turns = (10 if multi_turn else 3) if max_turns is None else max_turns
        super().__init__(max_turns=turns, max_obs_chars=32_768, **kwargs)

    def generate(self, rng: np.random.Generator) -> IsoTask:
        """A random pacs.008 of the configured level and split with its reference MT103."""
        return generate_in_split(
            lambda: generate(rng, self.level, rule_card=self.rule_card, multi_turn=self.multi_turn),
            self.split,
        )

    def prompt(self, task: IsoTask) -> str:
        """Instructions, the rule card (unless hidden) and the pacs.008 message."""
        return render_prompt(task)

    def init_state(self, task: IsoTask) -> IsoState:
        return IsoState(task)

    def respond(self, state: IsoState, action: str) -> Turn:
        """Score an answer, run a tool, or explain what was wrong with the action."""
        call = parse(action, self.tools)
        if type(call) is ParseError:
            return Turn(call.message, error=call.error, obs_kind="feedback",
                        info={"difficulty": state.task.level})
        if call.name == "answer":
            return answer_turn(state, score(state.task.reference, str(call.args["mt"])))
        if call.name == "validate":
            report = validate_report(str(call.args["mt"]))
            return Turn(report, info={"difficulty": state.task.level})
        return Turn(banks.bic_info(str(call.args["bic"])), info={"difficulty": state.task.level})

    def final_verdict(self, state: IsoState) -> Verdict:
        return state.verdict or Verdict(0.0, False, "No MT103 was submitted.", {"format": 0.0},
                                        "no_answer")

    def solve(self, task: IsoTask) -> list[str]:
        """The oracle: submit the reference translation."""
        return [f"<answer>\n{task.reference}\n</answer>"]

    def sample_action(self, rng: np.random.Generator) -> str:
        """A well-formed MT103 of another, random payment of the same level (the random
        baseline knows the format but not this message), or, in multi-turn, sometimes a
        validate or bic_info call on it."""
        other = generate(rng, self.level, rule_card=self.rule_card, multi_turn=self.multi_turn)
        if self.multi_turn and rng.random() < 0.4:
            if rng.random() < 0.5:
                return f"<bic_info>{other.reference[6:14]}</bic_info>"
            return f"<validate>\n{other.reference}\n</validate>"
        return f"<answer>\n{other.reference}\n</answer>"

    def data_sha256(self) -> dict[str, str]:
        return xsd.data_sha256()


class Iso20022MultiTurnEnv(Iso20022Env):
    """The multi-turn variant (``multi_turn=True``): adds ``validate`` and ``bic_info``."""

    tools = MULTI_TOOLS
    conformance_variants = ()  # covered through Iso20022Env's multi_turn variant


class Mt103ToIsoEnv(TextEnv):
    """``textgyms/MT103ToISO20022-v3``: translate a SWIFT MT103 into a pacs.008.001.08.

    The agent sees an MT103 (CBPR+ traffic, levels 1-4 as in the other direction) and answers
    ``<answer>pacs.008 XML</answer>`` or ``{"name": "answer", "arguments": {"xml": "..."}}``;
    the first answer ends the episode. It is scored by
    :func:`textgyms.envs.iso20022.verify_mx.score_mx`: XSD gate, then field by field on ISO
    element paths against :func:`textgyms.envs.iso20022.reverse.translate_mt`'s reference.
    Kwargs: ``difficulty`` (1-4, default 2), ``rule_card`` (None: shown at levels 1-3),
    ``header`` (False; True: the answer is an ``Envelope`` of the CBPR+ head.001.001.02
    ``AppHdr`` and the Document, and the header is scored too), ``max_turns`` (3), ``split``,
    and the common ``max_invalid``, ``invalid_penalty``, ``reward_mode``. Family info keys:
    ``difficulty``; on the answer turn also ``schema_errors`` (the answer's XSD errors, the
    reason of a schema gate; empty when valid) and ``translation_loss`` (what of the MT103
    no pacs.008 element carries; empty for generated messages).
    """

    metric_parts = ("format", "content", "precision", "material")

    tools = (MX_ANSWER,)
    conformance_variants = ({}, {"difficulty": 1}, {"difficulty": 4}, {"header": True})

    def __init__(self, *, difficulty: int = 2, rule_card: bool | None = None,
                 header: bool = False, max_turns: int = 3, split: str = "train",
                 **kwargs) -> None:
        self.level = check_choice("difficulty", difficulty, LEVELS)
        self.split = check_choice("split", split, SPLITS)
        self.rule_card = check_choice("rule_card", rule_card, (None, True, False))
        self.header = check_choice("header", header, (False, True))
        super().__init__(max_turns=max_turns, max_obs_chars=32_768, **kwargs)

    def generate(self, rng: np.random.Generator) -> MtTask:
        """A random MT103 of the configured level and split with its reference pacs.008."""
        return generate_in_split(lambda: generate_mt(rng, self.level, header=self.header),
                                 self.split)

    def prompt(self, task: MtTask) -> str:
        card = self.level < 4 if self.rule_card is None else self.rule_card
        rules = f"\n\nTranslation rules (MT103 -> pacs.008.001.08):\n{MX_RULES}" if card else ""
        if card and self.header:
            rules += HEADER_RULES
        what = ("an Envelope holding its CBPR+ business application header (head.001.001.02 "
                "AppHdr) and the Document, both" if self.header else "Document,")
        return ("Translate this SWIFT MT103 into the equivalent ISO 20022 pacs.008.001.08 "
                f"(CBPR+) {what} valid against their XSDs. It is scored element by element "
                "against the reference translation. Reply with <answer>XML</answer> (or the "
                'JSON tool call {"name": "answer", "arguments": {"xml": "..."}}). The first '
                f"answer is final.{rules}\n\nMT103:\n{task.mt}")

    def init_state(self, task: MtTask) -> IsoState:
        return IsoState(task)  # type: ignore[arg-type]

    def respond(self, state: IsoState, action: str) -> Turn:
        """Score an answer, or explain what was wrong with the action."""
        call = parse(action, self.tools)
        if type(call) is ParseError:
            return Turn(call.message, error=call.error, obs_kind="feedback",
                        info={"difficulty": state.task.level})
        verdict, errors = score_mx_report(state.task.reference, str(call.args["xml"]))
        return answer_turn(state, verdict, {"schema_errors": [e[:300] for e in errors[:10]],
                                            "translation_loss": translate_mt_with_losses(
                                                state.task.mt)[1]})

    def final_verdict(self, state: IsoState) -> Verdict:
        return state.verdict or Verdict(0.0, False, "No pacs.008 was submitted.",
                                        {"format": 0.0}, "no_answer")

    def solve(self, task: MtTask) -> list[str]:
        """The oracle: submit the reference translation."""
        return [f"<answer>\n{task.reference}\n</answer>"]

    def sample_action(self, rng: np.random.Generator) -> str:
        """The pacs.008 of another, random payment of the same level."""
        other = generate_mt(rng, self.level, header=self.header)
        return f"<answer>\n{other.reference}\n</answer>"

    def data_sha256(self) -> dict[str, str]:
        return xsd.data_sha256()


def answer_turn(state: IsoState, verdict: Verdict, extra: dict | None = None) -> Turn:
    """The terminal turn of an answer (either direction), with family info keys ``extra``."""
    state.verdict = verdict
    info: dict = {"difficulty": state.task.level, **(extra or {})}
    if isinstance(state.task, IsoTask):
        info["translation_loss"] = list(state.task.losses)
    return Turn(verdict.feedback, 0.0, True, verdict, None, "feedback", info)


def validate_report(text: str) -> str:
    """What the ``validate`` tool returns: format and network-rule errors, never content."""
    issues = mt103.validate_text(text)
    if issues is None:
        return (f"Not an MT message: {mt103.parse_error(text)}. Expected {{1:...}}{{2:...}}"
                "{3:{121:...}}{4:, one field per line (:tag:value), and a closing line -}.")
    if not issues:
        return "No format or network-rule errors."
    return f"{len(issues)} error(s):\n" + "\n".join(str(i) for i in issues[:30])


def render_prompt(task: IsoTask) -> str:
    """The first observation of a task."""
    tools = ("Reply with <answer>MT103</answer> (or the JSON tool call "
             '{"name": "answer", "arguments": {"mt": "..."}}). The first answer is final.')
    if task.multi_turn:
        tools += (" Before answering you may call <validate>MT103</validate> (format and "
                  "network-rule errors only) and <bic_info>BIC</bic_info>.")
    card = f"\n\n{RULE_CARD}" if task.rule_card else ""
    return (
        "Translate this ISO 20022 pacs.008 FI-to-FI customer credit transfer (CBPR+, version "
        "pacs.008.001.08 to .13) into the "
        "equivalent SWIFT MT103 (blocks 1, 2, 3 and 4, one field per line, ending with -}). "
        f"It is scored field by field against the reference translation.\n{tools}{card}\n\n"
        f"pacs.008 message:\n{task.xml}"
    )


__all__ = ["Iso20022Env", "Iso20022MultiTurnEnv", "Mt103ToIsoEnv", "render_prompt",
           "validate_report"]
