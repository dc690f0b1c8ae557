"""generate_shared: one encoding of the shared prefix, the distribution of a plain batch."""

import pytest

torch = pytest.importorskip("torch")

from textgyms.models import tiny_random  # noqa: E402
from textgyms.prefix import MIN_SHARED, common_prefix_len, generate_shared  # noqa: E402


def test_common_prefix_len_leaves_every_row_a_token_of_its_own():
    assert common_prefix_len([[1, 2, 3, 4], [1, 2, 5]]) == 2
    assert common_prefix_len([[1, 2, 3], [1, 2, 3]]) == 2  # identical rows keep their last token
    assert common_prefix_len([[1, 2, 3], [1]]) == 0
    assert common_prefix_len([[7, 8], [9, 8]]) == 0
    assert common_prefix_len([]) == 0


def plain(model, contexts, pad, **kw):
    """The reference: one left-padded batch, every row encoded in full."""
    width = max(map(len, contexts))
    ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts])
    attn = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts])
    return model.generate(input_ids=ids, attention_mask=attn, **kw), width


@pytest.mark.parametrize("tails", [["a b c", "d", "e f"], ["x", "x", "x y z w"]])
def test_shared_prefix_batch_equals_the_plain_batch(tails):
    model, tok = tiny_random(0)
    prefix = tok.encode("<|im_start|>system\nThe rules of the game, long enough to share.")
    assert len(prefix) > MIN_SHARED
    contexts = [prefix + tok.encode(t) for t in tails]
    kw = dict(max_new_tokens=5, do_sample=False, pad_token_id=tok.pad_token_id,
              return_dict_in_generate=True, output_logits=True)
    with torch.no_grad():
        out, rows, width = generate_shared(model, contexts, tok.pad_token_id, **kw)
        ref, ref_width = plain(model, contexts, tok.pad_token_id, **kw)
    assert rows == contexts
    assert out.sequences[:, width:].tolist() == ref.sequences[:, ref_width:].tolist()
    for step, (got, want) in enumerate(zip(out.logits, ref.logits)):
        assert torch.allclose(got, want, atol=1e-4), f"step {step} differs"


def test_a_short_common_prefix_is_not_shared_and_still_generates():
    model, tok = tiny_random(0)
    contexts = [tok.encode("ab"), tok.encode("ac d e")]
    out, _, width = generate_shared(model, contexts, tok.pad_token_id, max_new_tokens=3,
                                    do_sample=False, pad_token_id=tok.pad_token_id)
    assert width == max(map(len, contexts))  # no prefix: a plain left-padded batch
    assert out.shape == (2, width + 3)
