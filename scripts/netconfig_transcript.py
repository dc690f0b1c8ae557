"""Print the example NetConfig transcript used in docs/netconfig.md.

``python scripts/netconfig_transcript.py``: a routing/easy episode (seed 0) in which the agent
looks at a routing table, adds the static routes with ``apply_config``, tests with ping and
traceroute and submits its candidate.
"""

from __future__ import annotations

import gymnasium as gym

import textgyms  # noqa: F401  (registers the ids)


def main() -> None:
    env = gym.make("textgyms/NetConfig-v4", family="routing", difficulty="easy", render_mode="ansi")
    env.reset(seed=0)
    task = env.unwrapped.task
    mine = [d for d, _ in task.start]
    actions = [f'<show_ip_route device="{mine[0]}"/>']
    for dev, text in task.reference:
        routes = "\n".join(ln for ln in text.splitlines() if ln.startswith("ip route"))
        actions.append(f'<apply_config device="{dev}">{routes}</apply_config>')
    hosts = [d for d, k in task.devices if k == "host"]
    far = dict(task.fixed)[hosts[-1]].split()[6]
    actions += [f'<ping device="{hosts[0]}">{far}</ping>',
                f'<traceroute device="{hosts[0]}">{far}</traceroute>', "<submit/>"]
    info: dict = {}
    for action in actions:
        *_, info = env.step(action)
    print(env.render())
    print(f"score {info['score']}, parts {info['parts']}")


if __name__ == "__main__":
    main()
