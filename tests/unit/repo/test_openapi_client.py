"""The UI's API client is generated from the API's OpenAPI document: both committed files must
match what ``make client`` would write now, or the UI compiles against an API that no longer
exists."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
API_DIR = ROOT / "frontend" / "src" / "api"
GENERATOR = ROOT / "frontend" / "node_modules" / ".bin" / "openapi-typescript"
HINT = "stale generated client: run `make client` and commit frontend/src/api/"


def _dump_module():
    spec = importlib.util.spec_from_file_location("dump_openapi", ROOT / "scripts/dump_openapi.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("dump_openapi", module)
    spec.loader.exec_module(module)
    return module


def test_openapi_json_is_current():
    current = _dump_module().openapi_text()
    committed = (API_DIR / "openapi.json").read_text(encoding="utf-8")
    assert committed == current, HINT


def test_enum_values_are_current():
    module = _dump_module()
    committed = (API_DIR / "enums.ts").read_text(encoding="utf-8")
    assert committed == module.enums_text(module.openapi_text()), HINT


@pytest.mark.skipif(
    not GENERATOR.exists() or shutil.which("node") is None,
    reason="frontend/node_modules missing (make ui installs it)",
)
def test_schema_types_are_current(tmp_path: Path):
    # The generator runs exactly as `npm run client` does (its flags live in package.json),
    # writing to a scratch file instead of the committed one.
    scripts = json.loads((ROOT / "frontend" / "package.json").read_text())["scripts"]
    args = shlex.split(scripts["client"])
    fresh = tmp_path / "schema.d.ts"
    args[args.index("-o") + 1] = str(fresh)
    path = f"{GENERATOR.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    subprocess.run(
        args,
        check=True,
        capture_output=True,
        cwd=ROOT / "frontend",
        timeout=120,
        env={**os.environ, "PATH": path},
    )
    committed = (API_DIR / "schema.d.ts").read_text(encoding="utf-8")
    assert committed == fresh.read_text(encoding="utf-8"), HINT
