"""The shipped bank data (textgyms/envs/iso20022/data: iban_pools.txt, registry_banks.txt):
exactly the banks and pools schwifty gives, what the generator reads, and a stale or corrupt
file can neither change a task nor pass silently."""

from __future__ import annotations

import hashlib
import shutil
import warnings
from pathlib import Path

import pytest
from schwifty import IBAN

from textgyms import datafiles
from textgyms.envs.iso20022 import bankdata, banks
from textgyms.envs.iso20022.generate import generate
from textgyms.errors import DataError
from textgyms.seeding import seeded_generator

DATA = Path(bankdata.__file__).parent / "data"


_CACHES = (bankdata._pools, bankdata._registry, banks.iban_pool, banks.registry_banks)


@pytest.fixture
def fresh_pools():
    """Forget what this process has read or built, before and after the test."""
    for cached in _CACHES:
        cached.cache_clear()
    yield
    for cached in _CACHES:
        cached.cache_clear()


def test_the_shipped_registry_banks_are_the_ones_schwifty_gives(fresh_pools):
    assert banks.registry_banks() == banks.pick_registry_banks()
    assert bankdata.registry(banks.BANKS_PER_COUNTRY + 1) is None  # picked with another count


def test_every_shipped_pool_is_the_one_schwifty_builds(fresh_pools):
    shipped = bankdata._pools()
    want = {(b.bic, b.bank_code, b.branch_code): b for b in banks.pooled_banks()}
    assert set(shipped) == set(want)  # every bank drawn at, and no other
    for key, bank in want.items():
        assert shipped[key] == banks.build_pool(bank), key


def test_shipped_ibans_are_valid_and_resolve_to_their_bank(fresh_pools):
    registry = [b for b in banks.pooled_banks() if b.country not in banks.OWN_IBAN_LENGTH]
    for bank in registry[::7]:
        for text in banks.iban_pool(bank)[:4]:
            with warnings.catch_warnings():  # (SE: schwifty has no national check)
                warnings.simplefilter("ignore")
                iban = IBAN(text, validate_bban=True)
            assert iban.country_code == bank.country
            assert str(iban.bic or "")[:8] == bank.bic[:8]


def _tasks(n: int) -> list[str]:
    """The pacs.008 of the first ``n`` seeds, at every level in turn."""
    return [generate(seeded_generator(seed), 1 + seed % 4).xml for seed in range(n)]


def test_the_generator_reads_the_file_and_builds_nothing(fresh_pools, monkeypatch):
    def refuse(bank):
        raise AssertionError(f"built the pool of {bank.bic}")

    monkeypatch.setattr(banks, "build_pool", refuse)
    monkeypatch.setattr(banks, "pick_registry_banks", refuse)
    assert len(_tasks(40)) == 40


def test_tasks_are_the_same_with_the_file_and_without(fresh_pools, monkeypatch):
    shipped = _tasks(25)
    banks.iban_pool.cache_clear()
    bankdata._pools.cache_clear()
    banks.registry_banks.cache_clear()
    bankdata._registry.cache_clear()
    monkeypatch.setattr(bankdata, "_installed_schwifty", lambda: "0.0")  # another schwifty
    assert bankdata._pools() == {}  # the files are not used: every pool is built,
    assert bankdata.registry(banks.BANKS_PER_COUNTRY) is None  # every bank picked
    assert _tasks(25) == shipped


def test_a_pool_of_another_size_is_built_not_read(fresh_pools, monkeypatch):
    bank = banks.pooled_banks()[0]
    key = (bank.bic, bank.bank_code, bank.branch_code)
    assert bankdata.shipped_pool(key, banks.IBANS_PER_BANK) is not None
    assert bankdata.shipped_pool(key, banks.IBANS_PER_BANK + 1) is None
    assert bankdata.shipped_pool(("NOTABANKXXX", "1", ""), banks.IBANS_PER_BANK) is None


def _copy_data(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "data"
    shutil.copytree(DATA, folder)
    monkeypatch.setattr(bankdata, "_data_dir", lambda: folder)
    return folder


def test_an_edited_file_raises(fresh_pools, tmp_path, monkeypatch):
    folder = _copy_data(tmp_path, monkeypatch)
    path = folder / bankdata.POOLS_FILE
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[2].split()[3]  # an IBAN: one digit changed
    path.write_text(text.replace(first, first[:-1] + str((int(first[-1]) + 1) % 10), 1),
                    encoding="utf-8")
    with pytest.raises(DataError, match="sha256"):
        bankdata._pools()


def test_a_missing_file_raises(fresh_pools, tmp_path, monkeypatch):
    folder = _copy_data(tmp_path, monkeypatch)
    (folder / bankdata.POOLS_FILE).unlink()
    with pytest.raises(DataError, match="cannot read"):
        bankdata._pools()


def _write(folder: Path, text: str, name: str = bankdata.POOLS_FILE) -> None:
    """Write ``name`` and record its sha256 (the other file's line is kept)."""
    data = text.encode("utf-8")
    (folder / name).write_bytes(data)
    sums = folder / datafiles.SUMS_FILE
    kept = [ln for ln in sums.read_text().splitlines() if not ln.endswith(f"  {name}")]
    sums.write_text("\n".join([*kept, f"{hashlib.sha256(data).hexdigest()}  {name}"]) + "\n")


def test_a_malformed_file_raises(fresh_pools, tmp_path, monkeypatch):
    folder = _copy_data(tmp_path, monkeypatch)
    version = bankdata._installed_schwifty()
    _write(folder, f"# schwifty {version} 2\nABCDDEFFXXX 1 - DE1 DE2 DE3\n")
    with pytest.raises(DataError, match="3 IBANs, not 2"):
        bankdata._pools()
    bankdata._pools.cache_clear()
    _write(folder, "ABCDDEFFXXX 1 - DE1 DE2\n")
    with pytest.raises(DataError, match="first line"):
        bankdata._pools()


def test_a_malformed_registry_line_raises(fresh_pools, tmp_path, monkeypatch):
    folder = _copy_data(tmp_path, monkeypatch)
    version = bankdata._installed_schwifty()
    for line, why in (('["DE", "X"]', "5 strings"), ("DE MARKDEF1100", "not a JSON line")):
        _write(folder, f"# schwifty {version} 24\n{line}\n", bankdata.REGISTRY_FILE)
        bankdata._registry.cache_clear()
        with pytest.raises(DataError, match=why):
            bankdata.registry(24)


def test_registry_render_reads_back_a_name_with_a_line_break(fresh_pools, tmp_path,
                                                             monkeypatch):
    folder = _copy_data(tmp_path, monkeypatch)
    version = bankdata._installed_schwifty()
    rows = [("IT", "ABCDITMMXXX", "03183", "00000", "BANCA DI CREDITO\nFINANZIARIO SPA ")]
    _write(folder, bankdata.render_registry(rows, version, 3), bankdata.REGISTRY_FILE)
    assert bankdata.registry(3) == tuple(rows)


def test_render_reads_back(fresh_pools, tmp_path, monkeypatch):
    folder = _copy_data(tmp_path, monkeypatch)
    version = bankdata._installed_schwifty()
    pools = [(("ABCDDEFFXXX", "1", ""), ("DE1", "DE2")), (("WXYZKWKWXXX", "", ""), ("K1", "K2"))]
    _write(folder, bankdata.render_pools(pools, version, 2))
    assert bankdata._pools() == dict(pools)
    with pytest.raises(ValueError, match="want 3"):
        bankdata.render_pools(pools, version, 3)
