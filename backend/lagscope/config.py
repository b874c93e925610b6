"""Settings: every knob is an environment variable ``LAGSCOPE_*`` (pydantic-settings).

Unsafe defaults are refused outside demo mode: a placeholder secret key would make the
at-rest encryption of stored credentials worthless.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pydantic import field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRET = "change-me"


@dataclass(frozen=True, slots=True)
class Retention:
    raw_days: float
    minute_days: float
    hour_days: float


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LAGSCOPE_", extra="ignore")

    database_url: str = "sqlite:///./lagscope.db"
    secret_key: str = PLACEHOLDER_SECRET
    demo: bool = False
    broker_url: str = "redis://127.0.0.1:6379/0"
    # The first admin, created at API start-up when the store has no user yet.
    admin_username: str | None = None
    admin_password: str | None = None
    # The largest request body the API reads (bytes); larger ones are answered 413.
    max_body_bytes: int = 1024 * 1024
    # Login: failures free before back-off starts, per username and per client address, and
    # how many password checks (argon2) may run at once.
    login_free_failures_user: int = 5
    login_free_failures_address: int = 20
    login_concurrency: int = 2
    # API tokens: the longest lifetime one may be given (days; none = no maximum).
    api_token_max_days: float | None = None
    # A live stream re-checks its token this often (seconds): a revoked token's stream ends.
    stream_recheck_s: float = 30.0
    # Collector timeouts (seconds): see ConnectionSpec for why they are short.
    connect_timeout_s: float = 2.0
    read_timeout_s: float = 2.0
    # Parameters are read at most this often (they change rarely; a change shows within this).
    params_every_s: float = 5.0
    # Retention per table (DESIGN.md §5).
    retention_raw_days: float = 3.0
    retention_1m_days: float = 60.0
    retention_1h_days: float = 730.0

    def retention(self) -> Retention:
        return Retention(self.retention_raw_days, self.retention_1m_days, self.retention_1h_days)

    @field_validator("database_url")
    @classmethod
    def _normalise_url(cls, value: str) -> str:
        value = value.strip()
        # Accept the common shorthands and pin the drivers we ship.
        if value.startswith("postgres://"):
            value = "postgresql+psycopg://" + value[len("postgres://") :]
        if value.startswith("mysql://"):
            value = "mysql+pymysql://" + value[len("mysql://") :]
        return value

    @model_validator(mode="after")
    def _refuse_placeholder_secret(self) -> Settings:
        if not self.demo and self.secret_key == PLACEHOLDER_SECRET:
            raise ValueError(
                "LAGSCOPE_SECRET_KEY must be set (it encrypts stored credentials); "
                "only LAGSCOPE_DEMO=1 may run with the placeholder"
            )
        return self


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
