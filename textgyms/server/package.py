"""``textgyms serve ENV_ID --package DIR``: write a deployable OpenEnv environment directory.

The directory is what OpenEnv's tooling (``openenv validate``, ``openenv push``) and Hugging
Face Spaces expect: ``openenv.yaml`` (the manifest), a ``Dockerfile`` whose command is
``textgyms serve`` with the options given, a ``README.md`` opening with the Space front matter,
``pyproject.toml`` and ``requirements.txt`` with the versions installed here pinned, a
``server/app.py`` (``app`` and ``main()``) and a ``client.py`` for the stock OpenEnv client.
"""

from __future__ import annotations

import json
import re
import shlex
from importlib import metadata
from pathlib import Path
from typing import Any

from textgyms.errors import ConfigError

# The serving stack, pinned to what is installed (the server was tested with these).
PINNED = ("openenv", "fastapi", "uvicorn", "websockets", "h11", "pydantic", "gymnasium", "numpy")
# The textgyms extra each family needs besides [serve].
EXTRAS = {"Search": "search", "Code": "code", "NetConfig": "net", "ISO20022": "iso"}
PORT = 8000


def write_env_dir(env_id: str, kwargs: dict[str, Any], serve_args: list[str], out: Path) -> Path:
    """Write the environment directory for ``env_id`` to ``out`` (created, must be empty)."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"--package {out}: the directory exists and is not empty")
    name = re.sub(r"[^a-z0-9]+", "_", env_id.lower()).strip("_")
    family = env_id.rpartition("/")[2].split("-")[0]
    extras = ",".join(["serve", *([EXTRAS[family]] if family in EXTRAS else [])])
    version = metadata.version("textgyms")
    pins = [f"textgyms[{extras}]=={version}", *(f"{p}=={metadata.version(p)}" for p in PINNED)]
    command = ["textgyms", "serve", env_id, "--host", "0.0.0.0", "--port", str(PORT),
               "--kwargs", json.dumps(kwargs, sort_keys=True), *serve_args]  # fmt: skip
    files = {
        "openenv.yaml": _manifest(name, version, family, kwargs),
        "Dockerfile": _dockerfile(command),
        "requirements.txt": "\n".join(pins) + "\n",
        "pyproject.toml": _pyproject(name, version, pins),
        "README.md": _readme(env_id, name, command),
        "__init__.py": f'"""OpenEnv environment: {env_id} served by textgyms."""\n',
        "client.py": _CLIENT,
        "server/__init__.py": "",
        "server/app.py": _APP.format(env_id=env_id, kwargs=json.dumps(kwargs, sort_keys=True),
                                     args=json.dumps(serve_args)),  # fmt: skip
    }
    for relative, text in files.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return out


def _manifest(name: str, version: str, family: str, kwargs: dict[str, Any]) -> str:
    """The manifest. Rewards are in [0, 1] (the score on the last step, or shaping that sums
    to it) unless a ``*_penalty`` kwarg subtracts up to that much on a step."""
    penalties = [float(v) for k, v in kwargs.items() if k.endswith("penalty") and v]
    low = -max(penalties) if penalties else 0.0
    memory = 2048 if family == "Code" else 1024  # Code: the sandbox's 1 GiB per run on top
    return (
        "spec_version: 1\n"
        f"name: {name}\n"
        f"version: {version}\n"
        "type: space\n"
        "runtime: fastapi\n"
        "app: server.app:app\n"
        f"port: {PORT}\n"
        "validation:\n"
        "  reward:\n"
        f"    range: [{low}, 1.0]\n"
        "    oracle_tolerance: 0.0\n"
        "    floor_margin: 0.1\n"
        "  resources:\n"
        "    cpu: 1.0\n"
        f"    memory_mb: {memory}\n"
        "    disk_mb: 512\n"
        "    episode_timeout_s: 600.0\n"
        "  capabilities:\n"
        "    verifier:\n"
        "      kind: reward_channel\n"
        "  types:\n"
        f"    tags: [textgyms, {family.lower()}]\n"
    )


def _dockerfile(command: list[str]) -> str:
    return f"""FROM python:3.11-slim
WORKDIR /app/env
COPY requirements.txt /app/env/requirements.txt
# The pinned serving stack (openenv, fastapi, uvicorn, ...) and textgyms with its env's extra.
RUN pip install --no-cache-dir -r requirements.txt
COPY . /app/env
ENV PYTHONPATH=/app/env
EXPOSE {PORT}
# Off loopback textgyms serve requires a bearer token: set TEXTGYMS_TOKEN (a Space secret).
CMD {json.dumps(command)}
"""


def _pyproject(name: str, version: str, pins: list[str]) -> str:
    deps = "".join(f'    "{pin}",\n' for pin in pins)
    return f"""[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "openenv-{name.replace("_", "-")}"
version = "{version}"
description = "A textgyms environment served over the OpenEnv protocol"
requires-python = ">=3.10"
dependencies = [
{deps}]

[project.scripts]
server = "{name}.server.app:main"

[tool.setuptools]
packages = ["{name}", "{name}.server"]
package-dir = {{ "{name}" = ".", "{name}.server" = "server" }}
"""


def _readme(env_id: str, name: str, command: list[str]) -> str:
    title = env_id.rpartition("/")[2]
    return f"""---
title: {title} (textgyms)
emoji: 🎯
colorFrom: blue
colorTo: green
sdk: docker
app_port: {PORT}
pinned: false
tags:
  - openenv
  - textgyms
---

# {env_id}, served over the OpenEnv protocol

The textgyms environment `{env_id}` as an OpenEnv server: WebSocket sessions on `/ws`, one env
per session, action `{{"text": completion}}`, observation `{{"text", "info"}}` with OpenEnv's
`reward` and `done` (and `metadata.terminated` / `metadata.truncated`).

The container runs:

```bash
{shlex.join(command)}
```

Set the secret `TEXTGYMS_TOKEN`: off loopback the server refuses to start without a token, and
clients send `Authorization: Bearer <token>`. `GET /capacity` says how many sessions are free.

```python
from openenv.core.generic_client import GenericEnvClient

headers = {{"Authorization": "Bearer <token>"}}
with GenericEnvClient(base_url="https://<space>.hf.space", headers=headers).sync() as env:
    result = env.reset(seed=7)
    result = env.step({{"text": "<completion>"}})
```

Build and run locally:

```bash
docker build -t {name} .
docker run -p {PORT}:{PORT} -e TEXTGYMS_TOKEN=... {name}
```
"""


_CLIENT = '''"""The client: the stock OpenEnv client speaks this server's protocol as it is."""

from openenv.core.generic_client import GenericEnvClient

__all__ = ["GenericEnvClient", "connect"]


def connect(base_url: str, token: str | None = None) -> GenericEnvClient:
    """A client of the server at ``base_url`` (``token``: the server's bearer token)."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return GenericEnvClient(base_url=base_url, headers=headers)
'''

_APP = '''"""The server: ``main()`` runs ``textgyms serve`` (its connection limits and SIGTERM
drain included); ``app`` is the ASGI app alone, for ASGI servers importing server.app:app."""

import json
import os
import sys

ENV_ID = "{env_id}"
KWARGS = json.loads({kwargs!r})
SERVE_ARGS = {args}


def main() -> int:
    """Serve on 0.0.0.0:8000 (the token comes from $TEXTGYMS_TOKEN)."""
    from textgyms.cli import main as textgyms_main

    argv = ["serve", ENV_ID, "--host", "0.0.0.0", "--port", os.environ.get("PORT", "8000"),
            "--kwargs", json.dumps(KWARGS), *SERVE_ARGS]
    return textgyms_main(argv)


def __getattr__(name: str):
    if name == "app":  # built on first use: importing this module starts nothing
        from textgyms.server import load_openenv

        load_openenv()
        from textgyms.server.app import create_app

        return create_app(ENV_ID, KWARGS, token=os.environ.get("TEXTGYMS_TOKEN"))
    raise AttributeError(name)


if __name__ == "__main__":
    sys.exit(main())
'''
