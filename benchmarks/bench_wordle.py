"""Wordle side by side: textgyms vs TextArena vs GEM (CPU cost per step, reset and make).

Every library runs in its own subprocess (so imports, caches and garbage do not leak between
them) and plays the same episodes: six distinct valid 5-letter guesses per game, drawn from a
fixed word list with a seeded ``numpy.random.Generator``, stepped until the game ends, then
reset with the next seed. CPU time (``time.process_time``) is summed separately over resets
and over the steps of each game; a repetition's rate is ``count / CPU seconds`` and the report
gives medians over repetitions. Env creation is the median CPU time of one ``make`` after a
first, untimed ``make`` (which pays the imports). The textgyms vector overhead is measured in
wall time (``time.perf_counter``) with ``make_vec(..., backend="multiprocessing")``.

Results go to ``benchmarks/results/wordle.json`` and ``wordle.md``. A library that cannot be
imported or run is recorded with the reason, and the others are still measured.
Run it through ``bash benchmarks/run.sh`` (``make bench``), which prepares the venv and the
offline NLTK data the peers need.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wordle_adapters import (
    ADAPTERS,
    DEFAULT_NLTK_DATA,
    GUARD_COUNTS,
    LABELS,
    PeerUnavailable,
    dist_version,
    install_offline_guards,
)
from wordle_report import (
    GUESSES_PER_GAME,
    LIB_ORDER,
    compute_ratios,
    judge,
    render_markdown,
)

HERE = Path(__file__).resolve().parent

#: Common 5-letter English words (our own list). Each library's validity check filters it, and
#: only words every available library accepts are played.
CANDIDATES = [
    "about",
    "apple",
    "beach",
    "black",
    "blaze",
    "bread",
    "brick",
    "brown",
    "build",
    "candy",
    "carry",
    "chair",
    "chalk",
    "charm",
    "chest",
    "child",
    "clean",
    "climb",
    "clock",
    "cloud",
    "coast",
    "crane",
    "cream",
    "dance",
    "dream",
    "drink",
    "drive",
    "eagle",
    "earth",
    "fence",
    "field",
    "flame",
    "floor",
    "frost",
    "fruit",
    "ghost",
    "giant",
    "glass",
    "grape",
    "grass",
    "green",
    "heart",
    "horse",
    "house",
    "knife",
    "laugh",
    "lemon",
    "light",
    "metal",
    "money",
    "mouse",
    "music",
    "night",
    "ocean",
    "paint",
    "paper",
    "party",
    "peach",
    "piano",
    "pilot",
    "plant",
    "plate",
    "queen",
    "quiet",
    "radio",
    "river",
    "robin",
    "round",
    "salad",
    "scale",
    "shark",
    "sheep",
    "shirt",
    "slate",
    "smile",
    "snake",
    "sound",
    "spark",
    "speak",
    "spoon",
    "stone",
    "storm",
    "sugar",
    "sweet",
    "table",
    "teach",
    "thumb",
    "tiger",
    "toast",
    "tower",
    "train",
    "truck",
    "voice",
    "water",
    "whale",
    "wheel",
    "white",
    "world",
    "young",
    "zebra",
]


@dataclasses.dataclass
class Config:
    """What to measure and how often."""

    reps: int = 7
    episodes: int = 300
    make_reps: int = 7
    warmup_episodes: int = 20
    vec_envs: int = 64
    vec_steps: int = 200
    seed: int = 0
    timeout: float = 1800.0


# ----------------------------------------------------------------------------- measurement


def median(values: Iterable[float]) -> float:
    """Median of a non-empty iterable."""
    return float(statistics.median(list(values)))


def plan_games(
    pool: list[str], games: int, rng: np.random.Generator
) -> list[tuple[int, list[str]]]:
    """``games`` (reset seed, six distinct guesses) pairs drawn from ``pool`` with ``rng``."""
    if len(pool) < GUESSES_PER_GAME:
        raise ValueError(f"need at least {GUESSES_PER_GAME} valid words, got {len(pool)}")
    plan = []
    for _ in range(games):
        seed = int(rng.integers(0, 2**31 - 1))
        picks = rng.choice(len(pool), size=GUESSES_PER_GAME, replace=False)
        plan.append((seed, [pool[i] for i in picks]))
    return plan


def formatted(adapter: Any, plan: list[tuple[int, list[str]]]) -> list[tuple[int, list[str]]]:
    """The plan with every guess turned into the library's action string (done before timing)."""
    return [(seed, [adapter.fmt(w) for w in words]) for seed, words in plan]


def rep_rng(cfg: Config, rep: int) -> np.random.Generator:
    """The Generator of repetition ``rep`` (same for every library)."""
    return np.random.default_rng([cfg.seed, rep])


def timer_overhead(clock: Callable[[], float], n: int = 20001) -> float:
    """Median cost in seconds of one back-to-back pair of ``clock()`` calls."""
    samples = []
    for _ in range(n):
        t0 = clock()
        samples.append(clock() - t0)
    return median(samples)


def time_makes(adapter: Any, n: int) -> list[float]:
    """CPU seconds of ``n`` separate ``adapter.make()`` calls (garbage collected in between)."""
    samples = []
    for _ in range(n):
        gc.collect()
        t0 = time.process_time()
        env = adapter.make()
        samples.append(time.process_time() - t0)
        del env
    return samples


def time_games(adapter: Any, env: Any, plan: list[tuple[int, list[str]]]) -> dict[str, float]:
    """Play ``plan``; CPU time of resets and of steps is summed separately."""
    clock = time.process_time
    reset_s = step_s = 0.0
    steps = solved = 0
    for seed, actions in plan:
        t0 = clock()
        adapter.reset(env, seed)
        t1 = clock()
        n, won = adapter.play(env, actions)
        t2 = clock()
        reset_s += t1 - t0
        step_s += t2 - t1
        steps += n
        solved += won
    return {
        "games": len(plan),
        "steps": steps,
        "solved": solved,
        "reset_cpu_s": reset_s,
        "step_cpu_s": step_s,
    }


def check_games(adapter: Any, env: Any, plan: list[tuple[int, list[str]]]) -> int:
    """Play ``plan`` untimed (warm-up) and return how many steps the env rejected."""
    invalid = 0
    for seed, actions in plan:
        adapter.reset(env, seed)
        invalid += adapter.count_invalid(env, actions)
    return invalid


def progress(iterable: Iterable[Any], desc: str, total: int) -> Iterable[Any]:
    """A tqdm bar on stderr when tqdm is installed, else the plain iterable with a print."""
    try:
        from tqdm import tqdm
    except ImportError:
        print(f"  {desc} ...", file=sys.stderr, flush=True)
        return iterable
    return tqdm(iterable, desc=f"  {desc}", total=total, leave=False, file=sys.stderr)


def load_adapter(lib: str) -> tuple[Any, float]:
    """Install the offline guards, import ``lib``; return the adapter and the import CPU s."""
    install_offline_guards(need_nltk=lib != "textgyms")
    adapter = ADAPTERS[lib]()
    t0 = time.process_time()
    try:
        adapter.import_library()
    except Exception as exc:
        raise PeerUnavailable(f"cannot import {lib}: {type(exc).__name__}: {exc}") from exc
    return adapter, time.process_time() - t0


def first_make(adapter: Any) -> tuple[Any, float]:
    """The first (untimed for the report) ``make``, which may import the env module."""
    t0 = time.process_time()
    try:
        env = adapter.make()
    except Exception as exc:
        raise PeerUnavailable(f"cannot make {adapter.env_id}: {type(exc).__name__}: {exc}") from exc
    return env, time.process_time() - t0


def versions(adapter: Any) -> dict[str, str | None]:
    """Installed versions of the distributions behind ``adapter``."""
    return {name: dist_version(name) for name in adapter.distributions}


def worker_validate(lib: str, cfg: Config, pool: list[str]) -> dict[str, Any]:
    """Which of ``CANDIDATES`` the library accepts as valid guesses."""
    adapter, _ = load_adapter(lib)
    env, _ = first_make(adapter)
    valid = [w for w in CANDIDATES if adapter.is_valid(env, w)]
    return {"ok": True, "valid": valid, "rejected": sorted(set(CANDIDATES) - set(valid))}


def worker_measure(lib: str, cfg: Config, pool: list[str]) -> dict[str, Any]:
    """Make, reset and step costs of one library (runs in its own process)."""
    adapter, import_s = load_adapter(lib)
    env, first_make_s = first_make(adapter)
    print(
        f"  {LABELS[lib]}: imported in {import_s:.2f} CPU-s, first make {first_make_s:.3f} CPU-s",
        file=sys.stderr,
        flush=True,
    )
    warm = formatted(
        adapter, plan_games(pool, cfg.warmup_episodes, np.random.default_rng(cfg.seed))
    )
    invalid = check_games(adapter, env, warm)
    if invalid:
        raise RuntimeError(f"{LABELS[lib]} rejected {invalid} guesses of the warm-up games")
    makes = time_makes(adapter, cfg.make_reps)
    reps = [
        time_games(
            adapter, env, formatted(adapter, plan_games(pool, cfg.episodes, rep_rng(cfg, r)))
        )
        for r in progress(range(cfg.reps), f"{LABELS[lib]} games", cfg.reps)
    ]
    steps_rate = [r["steps"] / r["step_cpu_s"] for r in reps]
    reset_rate = [r["games"] / r["reset_cpu_s"] for r in reps]
    return {
        "ok": True,
        "library": LABELS[lib],
        "env_id": adapter.env_id,
        "make_kwargs": getattr(adapter, "make_kwargs", {}),
        "action_format": adapter.action_format,
        "versions": versions(adapter),
        "import_cpu_s": import_s,
        "first_make_cpu_s": first_make_s,
        "make_cpu_s": {"median": median(makes), "samples": makes},
        "steps_per_cpu_s": {"median": median(steps_rate), "samples": steps_rate},
        "resets_per_cpu_s": {"median": median(reset_rate), "samples": reset_rate},
        "step_cpu_us_median": 1e6 / median(steps_rate),
        "reset_cpu_us_median": 1e6 / median(reset_rate),
        "games_per_rep": cfg.episodes,
        "steps_per_rep": [r["steps"] for r in reps],
        "solved_per_rep": [r["solved"] for r in reps],
        "process_time_pair_overhead_us": 1e6 * timer_overhead(time.process_time),
        "offline_guards": dict(GUARD_COUNTS),
    }


def single_step_wall(adapter: Any, env: Any, cfg: Config, pool: list[str]) -> list[float]:
    """Per repetition: wall seconds per in-process step (resets excluded)."""
    per_step = []
    for rep in range(cfg.reps):
        wall = 0.0
        steps = 0
        for seed, actions in formatted(adapter, plan_games(pool, cfg.episodes, rep_rng(cfg, rep))):
            adapter.reset(env, seed)
            t0 = time.perf_counter()
            n, _ = adapter.play(env, actions)
            wall += time.perf_counter() - t0
            steps += n
        per_step.append(wall / steps)
    return per_step


class GuessStream:
    """Per-env guess sequences for a vector env: a new six-word game whenever an env is done."""

    def __init__(self, pool: list[str], num_envs: int, rng: np.random.Generator) -> None:
        self.pool, self.rng = pool, rng
        self.games = [self._new_game() for _ in range(num_envs)]
        self.pos = [0] * num_envs

    def _new_game(self) -> list[str]:
        """Six distinct guesses for one game, already formatted as textgyms actions."""
        picks = self.rng.choice(len(self.pool), size=GUESSES_PER_GAME, replace=False)
        return [f"<guess>{self.pool[i]}</guess>" for i in picks]

    def actions(self) -> list[str]:
        """The next action of every env."""
        return [game[p] for game, p in zip(self.games, self.pos)]

    def advance(self, done: np.ndarray) -> None:
        """Move every env on by one guess; start a new game where an env is done."""
        for i, finished in enumerate(done):
            self.pos[i] += 1
            if finished or self.pos[i] >= GUESSES_PER_GAME:
                self.games[i], self.pos[i] = self._new_game(), 0


def time_vec_steps(vec: Any, stream: GuessStream, n: int) -> tuple[list[float], list[float], int]:
    """Wall and parent-CPU seconds of ``n`` ``vec.step`` calls, and the count of invalid guesses."""
    wall, cpu = [], []
    invalid = 0
    for _ in range(n):
        actions = stream.actions()
        c0, t0 = time.process_time(), time.perf_counter()
        batch = vec.step(actions)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        invalid += sum(info.get("error") is not None for info in batch.infos)
        stream.advance(np.asarray(batch.terminated) | np.asarray(batch.truncated))
    return wall, cpu, invalid


def worker_vector(lib: str, cfg: Config, pool: list[str]) -> dict[str, Any]:
    """Overhead per env-step of textgyms' multiprocessing vector env over in-process steps."""
    adapter, _ = load_adapter("textgyms")
    import textgyms

    env, _ = first_make(adapter)
    single = single_step_wall(adapter, env, cfg, pool)
    n = cfg.vec_envs
    t0 = time.perf_counter()
    vec = textgyms.make_vec(adapter.env_id, n, backend="multiprocessing")
    make_wall = time.perf_counter() - t0
    try:
        vec.reset(seed=cfg.seed)
        stream = GuessStream(pool, n, np.random.default_rng([cfg.seed, 10**6]))
        time_vec_steps(vec, stream, 10)  # warm-up
        wall, cpu, invalid = time_vec_steps(vec, stream, cfg.vec_steps)
    finally:
        vec.close()
    step_wall = median(wall)
    single_med = median(single)
    return {
        "ok": True,
        "num_envs": n,
        "backend": "multiprocessing",
        "num_workers": getattr(vec, "num_workers", None),
        "make_vec_wall_s": make_wall,
        "vec_step_wall_s": {"median": step_wall, "mean": statistics.fmean(wall), "n": len(wall)},
        "vec_step_parent_cpu_s_median": median(cpu),
        "single_step_wall_s": {"median": single_med, "samples": single},
        "overhead_ms_per_env_step": 1e3 * (step_wall - n * single_med) / n,
        "invalid_guesses": invalid,
        "note": "vec.step includes same-step autoresets of finished envs; the in-process "
        "baseline excludes resets, so the overhead is, if anything, overstated",
    }


WORKERS: dict[str, Callable[[str, Config, list[str]], dict[str, Any]]] = {
    "validate": worker_validate,
    "measure": worker_measure,
    "vector": worker_vector,
}


def run_worker_main(args: argparse.Namespace) -> None:
    """Entry point of a worker subprocess: run one job, write its JSON result to ``--out``."""
    cfg = Config(**json.loads(args.config))
    pool = json.loads(args.pool) if args.pool else []
    try:
        result = WORKERS[args.worker](args.lib, cfg, pool)
    except PeerUnavailable as exc:
        result = {"ok": False, "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 -- recorded in the report; the others still run
        traceback.print_exc()
        result = {
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback_tail": tail(traceback.format_exc()),
        }
    Path(args.out).write_text(json.dumps(result, indent=2))


# ----------------------------------------------------------------------------- orchestration


def tail(text: str, lines: int = 15) -> str:
    """The last ``lines`` lines of ``text``."""
    return "\n".join(text.strip().splitlines()[-lines:])


def spawn(job: str, lib: str, cfg: Config, pool: list[str]) -> dict[str, Any]:
    """Run one worker job in a fresh interpreter; a crash or timeout becomes ``ok: False``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            job,
            "--lib",
            lib,
            "--config",
            json.dumps(dataclasses.asdict(cfg)),
            "--pool",
            json.dumps(pool),
            "--out",
            str(out),
        ]
        try:  # stderr is inherited, so the worker's progress shows live
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, timeout=cfg.timeout, check=False)
        except subprocess.TimeoutExpired:
            return {"ok": False, "error": f"{job} worker timed out after {cfg.timeout:.0f} s"}
        if not out.is_file():
            return {
                "ok": False,
                "error": f"{job} worker exited with {proc.returncode} "
                "without a result (see its output above)",
            }
        return json.loads(out.read_text())


class Phases:
    """Numbered phase headers ("[2/7] ...") and one status line per finished phase."""

    def __init__(self, total: int) -> None:
        self.total, self.n = total, 0

    def run(self, text: str, job: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Print the header, run ``job``, print how it ended; return its result."""
        self.n += 1
        print(f"[{self.n}/{self.total}] {text}", flush=True)
        start = time.perf_counter()
        result = job()
        status = "ok" if result.get("ok") else f"FAILED: {result.get('error')}"
        print(f"      {status} ({time.perf_counter() - start:.0f} s wall)", flush=True)
        return result


def build_pool(libs: list[str], cfg: Config, phases: Phases) -> tuple[list[str], dict]:
    """Words every library that could be loaded accepts; also the per-library validation."""
    validation: dict[str, Any] = {}
    pool = list(CANDIDATES)
    for lib in libs:
        validation[lib] = phases.run(
            f"checking which words {LABELS[lib]} accepts",
            functools.partial(spawn, "validate", lib, cfg, []),
        )
        if validation[lib].get("ok"):
            pool = [w for w in pool if w in set(validation[lib]["valid"])]
    return pool, validation


def measure_libraries(
    libs: list[str], validation: dict, cfg: Config, pool: list[str], phases: Phases
) -> dict[str, Any]:
    """Run the measure worker of every library whose validation worked."""
    results: dict[str, Any] = {
        lib: {"ok": False, "error": "not requested (--libs)"} for lib in LIB_ORDER
    }
    for lib in libs:
        what = f"{cfg.reps} reps x {cfg.episodes} games, {cfg.make_reps} makes"
        if validation[lib].get("ok"):
            job = functools.partial(spawn, "measure", lib, cfg, pool)
        else:  # report the validation failure (e.g. the import error) as this phase's result
            job = functools.partial(dict, validation[lib])
        results[lib] = phases.run(f"measuring {LABELS[lib]} ({what})", job)
    return results


def measure_vector(
    wanted: bool, results: dict[str, Any], cfg: Config, pool: list[str], phases: Phases
) -> dict[str, Any]:
    """Run the vector-overhead worker when asked and textgyms itself could be measured."""
    if not wanted:
        return {"ok": False, "error": "skipped (--no-vector or textgyms not in --libs)"}
    if not results["textgyms"].get("ok"):
        return {"ok": False, "error": "textgyms single-env measurement failed"}
    return phases.run(
        f"measuring textgyms make_vec({cfg.vec_envs}, multiprocessing)",
        functools.partial(spawn, "vector", "textgyms", cfg, pool),
    )


def machine_info() -> dict[str, Any]:
    """Where the numbers were taken: CPU, cores, OS, Python, load."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "loadavg_at_start": list(os.getloadavg()),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Benchmark textgyms' Wordle against TextArena and GEM (CPU time, medians).",
        epilog="Normally run via `bash benchmarks/run.sh` (make bench), which sets up the "
        "bench venv and the offline NLTK data.",
    )
    parser.add_argument("--reps", type=int, default=None, help="repetitions per metric (default 7)")
    parser.add_argument(
        "--episodes", type=int, default=None, help="games per repetition (default 300)"
    )
    parser.add_argument(
        "--vec-steps", type=int, default=None, help="timed vec.step calls (default 200)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a fast smoke run: 3 reps, 40 games, 40 vec steps (numbers are rough)",
    )
    parser.add_argument(
        "--libs",
        default=",".join(LIB_ORDER),
        help="comma-separated subset of: " + ", ".join(LIB_ORDER),
    )
    parser.add_argument("--no-vector", action="store_true", help="skip the vector-overhead phase")
    parser.add_argument("--seed", type=int, default=0, help="seed of the numpy Generator")
    parser.add_argument(
        "--out-dir", type=Path, default=HERE / "results", help="where to write results"
    )
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--lib", choices=sorted(ADAPTERS), help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--pool", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def make_config(args: argparse.Namespace) -> Config:
    """The Config the options ask for."""
    cfg = (
        Config(reps=3, episodes=40, make_reps=3, warmup_episodes=5, vec_steps=40)
        if args.quick
        else Config()
    )
    if args.reps is not None:
        cfg.reps = cfg.make_reps = args.reps
    if args.episodes is not None:
        cfg.episodes = args.episodes
    if args.vec_steps is not None:
        cfg.vec_steps = args.vec_steps
    cfg.seed = args.seed
    if min(cfg.reps, cfg.episodes, cfg.vec_steps) < 1:
        raise SystemExit("--reps, --episodes and --vec-steps must be positive")
    return cfg


def install_failures() -> dict[str, str]:
    """Requirements that run.sh failed to install (name -> last line of pip's output)."""
    path = os.environ.get("BENCH_INSTALL_FAILURES")
    if not path or not Path(path).is_file():
        return {}
    rows = (line.split("\t", 1) for line in Path(path).read_text().splitlines() if line.strip())
    return {row[0]: row[-1] for row in rows}


def offline_notes() -> dict[str, Any]:
    """How the peers were made to run offline (recorded in the JSON)."""
    data = Path(os.environ.get("NLTK_DATA", DEFAULT_NLTK_DATA))
    stamp = data / ".textgyms-bench-stamp.json"
    return {
        "NLTK_DATA": str(data),
        "nltk_data_build": json.loads(stamp.read_text()) if stamp.is_file() else None,
        "patches": [
            "nltk.download -> no-op returning True (counted)",
            "socket.connect for AF_INET/AF_INET6 -> OSError (counted)",
        ],
        "details": "see benchmarks/README.md and benchmarks/build_nltk_data.py",
    }


def orchestrate(args: argparse.Namespace) -> dict[str, Any]:
    """Validate words, measure every library, measure the vector env; return the report."""
    cfg = make_config(args)
    libs = [name.strip() for name in args.libs.split(",") if name.strip()]
    unknown = set(libs) - set(LIB_ORDER)
    if unknown:
        raise SystemExit(f"unknown --libs {sorted(unknown)}; choose from {', '.join(LIB_ORDER)}")
    vector_on = "textgyms" in libs and not args.no_vector
    phases = Phases(2 * len(libs) + vector_on)
    machine = machine_info()
    pool, validation = build_pool(libs, cfg, phases)
    results = measure_libraries(libs, validation, cfg, pool, phases)
    vector = measure_vector(vector_on, results, cfg, pool, phases)
    ratios = compute_ratios(results, vector)
    targets = judge(ratios)
    machine["loadavg_at_end"] = list(os.getloadavg())
    return {
        "benchmark": "wordle",
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "config": dataclasses.asdict(cfg),
        "machine": machine,
        "versions": {LABELS[lib]: results[lib].get("versions") for lib in LIB_ORDER},
        "pool": pool,
        "validation": validation,
        "offline": offline_notes(),
        "install_failures": install_failures(),
        "libraries": results,
        "vector": vector,
        "ratios": ratios,
        "targets": targets,
        "all_pass": all(t["pass"] for t in targets)
        if all(t["pass"] is not None for t in targets)
        else None,
    }


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (or, with the hidden ``--worker``, one measurement job)."""
    args = parse_args(argv)
    if args.worker:
        run_worker_main(args)
        return
    report = orchestrate(args)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "wordle.json").write_text(json.dumps(report, indent=2) + "\n")
    markdown = render_markdown(report)
    (args.out_dir / "wordle.md").write_text(markdown)
    print("\n" + markdown)
    print(f"Wrote {args.out_dir / 'wordle.json'} and {args.out_dir / 'wordle.md'}")


if __name__ == "__main__":
    main()
