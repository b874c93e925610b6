"""lag episodes and their cause segments; a channel's current causes (issue 19)

Existing channels start with no causes, no memory and no episode: the next poll fills them.

Revision ID: eps19a000001
Revises: app17de0001
Create Date: 2026-11-25 12:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "eps19a000001"
down_revision: str | None = "app17de0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "episodes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cluster_id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=True),
        sa.Column("peak_lag_s", sa.BigInteger(), nullable=True),
        sa.Column("peak_at", sa.BigInteger(), nullable=True),
        sa.Column("main_cause", sa.SmallInteger(), nullable=True),
        sa.Column("end_reason", sa.String(length=32), nullable=True),
        sa.Column("ended_by_change_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_episodes_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["cluster_id"],
            ["clusters.id"],
            name=op.f("fk_episodes_cluster_id_clusters"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["ended_by_change_id"],
            ["param_changes.id"],
            name=op.f("fk_episodes_ended_by_change_id_param_changes"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_episodes")),
    )
    op.create_index(op.f("ix_episodes_channel_id"), "episodes", ["channel_id"])
    op.create_index(op.f("ix_episodes_cluster_id"), "episodes", ["cluster_id"])
    op.create_index(op.f("ix_episodes_started_at"), "episodes", ["started_at"])
    op.create_table(
        "episode_causes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("episode_id", sa.Integer(), nullable=False),
        sa.Column("cause", sa.SmallInteger(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("sentence", sa.Text(), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("needs", sa.String(length=255), nullable=True),
        sa.ForeignKeyConstraint(
            ["episode_id"],
            ["episodes.id"],
            name=op.f("fk_episode_causes_episode_id_episodes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_episode_causes")),
    )
    op.create_index(op.f("ix_episode_causes_episode_id"), "episode_causes", ["episode_id"])
    with op.batch_alter_table("channels") as batch:
        batch.add_column(sa.Column("current_causes", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("diagnosis_memory", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("episode_state", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("episode_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("channels") as batch:
        batch.drop_column("episode_id")
        batch.drop_column("episode_state")
        batch.drop_column("diagnosis_memory")
        batch.drop_column("current_causes")
    # Dropping a table drops its indexes; MySQL refuses to drop an index a foreign key needs.
    op.drop_table("episode_causes")
    op.drop_table("episodes")
