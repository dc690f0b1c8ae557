"""baselines/sft.py: oracle trajectories, assistant-only loss, a short real run with tiny-random."""

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tyro")

from baselines.sft import (  # noqa: E402
    Args,
    batch_loss,
    batches,
    collate,
    evaluate,
    main,
    masked_nll,
    oracle_transcripts,
    shared_prefix,
    tokenize,
    train,
)
from textgyms.models import load_model, tiny_random  # noqa: E402

EASY = '{"vocab": "easy"}'


@pytest.fixture(scope="module")
def wordle_rows():
    _, tok = tiny_random(seed=0)
    args = Args(env_kwargs=EASY)
    transcripts = oracle_transcripts(args, "train", 4, first_seed=0)
    return tok, transcripts, tokenize(tok, transcripts, args)


def test_loss_mask_covers_exactly_the_oracle_actions(wordle_rows):
    tok, transcripts, rows = wordle_rows
    for t, row in zip(transcripts, rows):
        assert t["score"] == 1.0  # the oracle solved it
        acts = [m["content"] for m in t["messages"] if m["role"] == "assistant"]
        taught = tok.decode([i for i, m in zip(row["input_ids"], row["loss_mask"]) if m])
        assert taught == "".join(a + tok.eos_token for a in acts)


def test_masked_loss_ignores_non_assistant_targets(wordle_rows):
    tok, _, rows = wordle_rows
    batch = collate(rows[:2], tok.pad_token_id)
    ids, mask = batch["input_ids"], batch["loss_mask"]
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(*ids.shape, len(tok), generator=gen, requires_grad=True)
    loss, _ = masked_nll(logits, ids, mask)
    loss.backward()
    # Rewriting every env/template token leaves the loss unchanged...
    scrambled = torch.where(mask.bool(), ids, torch.randint(0, len(tok), ids.shape, generator=gen))
    assert not torch.equal(scrambled, ids)
    assert masked_nll(logits, scrambled, mask)[0].item() == pytest.approx(loss.item(), abs=0)
    # ...and only the positions that predict an assistant token receive gradient.
    predicts_policy = torch.zeros_like(mask, dtype=torch.bool)
    predicts_policy[:, :-1] = mask[:, 1:].bool()
    grad_norm = logits.grad.abs().sum(-1)
    assert (grad_norm[~predicts_policy] == 0).all()
    assert (grad_norm[predicts_policy] > 0).all()
    # The masked tokens themselves do count.
    flipped = ids.clone()
    flipped[mask.bool()] = (ids[mask.bool()] + 1) % len(tok)
    assert masked_nll(logits, flipped, mask)[0].item() != pytest.approx(loss.item())


def test_shared_prompt_and_masked_head_give_the_plain_loss_and_gradients(wordle_rows):
    tok, _, rows = wordle_rows
    batch = collate(rows, tok.pad_token_id)
    start = shared_prefix(batch)
    first = int(batch["loss_mask"][0].tolist().index(1))
    assert 0 < start < first  # the Wordle instructions are shared and computed once
    results = []
    for fast in (True, False):
        model, _ = tiny_random(seed=2)
        if fast:
            loss, right = batch_loss(model, batch)
        else:
            logits = model(input_ids=batch["input_ids"],
                           attention_mask=batch["attention_mask"]).logits
            loss, right = masked_nll(logits, batch["input_ids"], batch["loss_mask"])
        loss.backward()
        results.append((loss.item(), int(right), [p.grad for p in model.parameters()]))
    (fast_loss, fast_right, fast_grads), (loss, right, grads) = results
    assert fast_loss == pytest.approx(loss, rel=1e-5) and fast_right == right
    for a, b in zip(fast_grads, grads):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)


def test_training_is_deterministic(wordle_rows, tmp_path):
    tok, _, rows = wordle_rows
    args = Args(batch_size=2, epochs=2, max_steps=3, lr=1e-3, seed=1)
    runs = []
    for k in range(2):
        model, _ = tiny_random(seed=0)
        with open(tmp_path / f"m{k}.jsonl", "w") as log:
            runs.append([r["train/loss"] for r in train(model, rows, tok.pad_token_id, args, log)])
    assert len(runs[0]) == 3 and runs[0] == runs[1]
    assert batches(5, Args(batch_size=2, epochs=2, seed=0)) != batches(5, Args(batch_size=2,
                                                                              epochs=2, seed=1))


def test_sft_run_learns_and_saves_a_reloadable_model(tmp_path, wordle_rows):
    tok, _, _ = wordle_rows
    args = Args(env_kwargs=EASY, episodes=8, epochs=4, batch_size=4, lr=3e-3, warmup_steps=1,
                eval_episodes=4, seed=0, out=str(tmp_path / "sft"))
    result = main(args)
    assert result["steps"] == 8 and result["episodes"] == 8
    assert result["train/loss_last"] < result["train/loss_first"] - 0.5
    assert result["eval/loss_after"] < result["eval/loss_before"] - 0.5
    rows = [json.loads(line) for line in (tmp_path / "sft" / "metrics.jsonl").open()]
    assert [r["step"] for r in rows] == [0, *range(1, 9), 8]
    model, ltok = load_model(str(tmp_path / "sft" / "final"))
    assert ltok.encode("<guess>crane</guess>") == tok.encode("<guess>crane</guess>")
    held = tokenize(ltok, oracle_transcripts(args, "test", 4, args.seed + 1_000_000), args)
    again = evaluate(model, held, ltok.pad_token_id, args.batch_size)
    assert again["eval/loss"] == pytest.approx(result["eval/loss_after"], rel=1e-5)
