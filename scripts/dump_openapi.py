"""Write the API's OpenAPI document to frontend/src/api/openapi.json (``make client``).

The UI's typed client (schema.d.ts) is generated from this file; tests/unit/test_openapi_client.py
fails when either is stale. The app is built over an unused in-memory store with a throwaway key:
the document depends on the routes and schemas only, never on settings or data. (Not in demo
mode: that runs only on a store the demo made.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lagscope.api.app import create_app
from lagscope.config import Settings, generate_key

TARGET = Path(__file__).resolve().parent.parent / "frontend" / "src" / "api" / "openapi.json"


def openapi_text() -> str:
    settings = Settings(
        database_url="sqlite://",
        secret_key=generate_key(),
        demo=False,
        admin_username=None,
        admin_password=None,
    )
    document = create_app(settings).openapi()
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(openapi_text(), encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
