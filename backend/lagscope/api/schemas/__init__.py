"""Pydantic v2 request/response schemas, one module per router (separate from ORM models)."""
