"""Importing the ART adapter has no side effect beyond what it must: ART's import-time patch of
transformers is undone only where its wrapper does not fit the installed transformers.

openpipe-art 0.5.18 wraps ``transformers.masking_utils._preprocess_mask_arguments`` on import
(``art.transformers.patches``); the wrapper passes seven positional arguments named after an
older transformers. The rollouts themselves are tested against a real server in
``test_integrations_llm.py``.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # ART's litellm: no download
pytest.importorskip("textgyms.integrations.art")
from art.transformers import patches  # noqa: E402
from transformers import masking_utils  # noqa: E402

from textgyms.integrations.art import _undo_mismatched_patch  # noqa: E402


def _names(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_the_installed_transformers_keeps_its_own_function():
    # This transformers renamed the parameters ART's wrapper passes, so the wrapper must go.
    assert _names(patches._patched_preprocess_mask_arguments) != _names(
        patches._preprocess_mask_arguments)
    assert masking_utils._preprocess_mask_arguments is patches._preprocess_mask_arguments


def test_a_transformers_the_wrapper_fits_keeps_arts_patch():
    wrapper = patches._patched_preprocess_mask_arguments

    def fitting(config, input_embeds, attention_mask, cache_position, past_key_values,
                position_ids, layer_idx):
        """The signature ART's wrapper was written for."""

    module = SimpleNamespace(_preprocess_mask_arguments=wrapper)
    art_patches = SimpleNamespace(_patched_preprocess_mask_arguments=wrapper,
                                  _preprocess_mask_arguments=fitting)
    assert _names(fitting) == _names(wrapper)
    assert not _undo_mismatched_patch(module, art_patches)
    assert module._preprocess_mask_arguments is wrapper


def test_a_mismatched_wrapper_is_replaced_by_the_original():
    module = SimpleNamespace(_preprocess_mask_arguments=patches._patched_preprocess_mask_arguments)
    assert _undo_mismatched_patch(module, patches)
    assert module._preprocess_mask_arguments is patches._preprocess_mask_arguments
    # Nothing to do when the wrapper is not installed (someone else restored it, or never set).
    assert not _undo_mismatched_patch(module, patches)


def test_art_imported_first_then_the_adapter_leaves_models_working():
    code = (
        "import art\n"
        "from transformers import masking_utils\n"
        "from art.transformers import patches\n"
        "patched = masking_utils._preprocess_mask_arguments is "
        "patches._patched_preprocess_mask_arguments\n"
        "import textgyms.integrations.art\n"
        "import torch\n"
        "from textgyms.models import tiny_random\n"
        "model, tok = tiny_random()\n"
        "logits = model(torch.tensor([[1, 2, 3]])).logits\n"
        "print(patched, masking_utils._preprocess_mask_arguments is "
        "patches._preprocess_mask_arguments, tuple(logits.shape[:2]))\n"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-4:] == ["True", "True", "(1,", "3)"]
