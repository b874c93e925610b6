"""SQLAlchemy 2.0 typed models, one module per aggregate; ``Base.metadata`` is what Alembic sees."""

from lagscope.models.base import Base

__all__ = ["Base"]
