"""``textgyms view``: eval runs as one self-contained HTML page.

The page lists every episode (sortable, filterable by run, env, score, solved and text),
shows an episode's transcript with its tool calls rendered readably (search pages, code and
test output, IOS output, an MT103 answer side by side with the reference fields), the reward
parts and the verdict, and for two runs of the same protocol a per-task diff. It has no
network access and works opened from disk. ``write_page(run_dirs, out_file)`` writes it.
"""

from textgyms.view.data import build_payload, load_view_runs
from textgyms.view.page import fit, render, write_page

__all__ = ["build_payload", "fit", "load_view_runs", "render", "write_page"]
