"""SQLAlchemy 2.0 typed models, one module per aggregate; ``Base.metadata`` is what Alembic sees."""

from lagscope.models import auditing as _auditing  # noqa: F401  (registers the listener)
from lagscope.models import revisions as _revisions  # noqa: F401  (registers the listener)
from lagscope.models.alerts import (
    AlertEvent,
    AlertRule,
    AlertState,
    Delivery,
    DeliveryAttempt,
    Silence,
    WebhookTarget,
)
from lagscope.models.annotations import Annotation
from lagscope.models.audit import AuditEvent
from lagscope.models.base import Base
from lagscope.models.check_tokens import CheckToken, CheckTokenCluster
from lagscope.models.demo import DemoStore
from lagscope.models.episodes import Episode, EpisodeCause
from lagscope.models.inventory import Channel, Cluster, Instance
from lagscope.models.parallelism import CommitSample
from lagscope.models.params import ParamChange, ParamValue
from lagscope.models.processes import LagscopeProcess
from lagscope.models.secrets import SecretKeySalt
from lagscope.models.series import (
    InstanceSample,
    Sample,
    SampleRollup1h,
    SampleRollup1m,
    SourceProgress,
)
from lagscope.models.shards import PollOwner, ShardLease
from lagscope.models.ticks import PollGap
from lagscope.models.users import ApiToken, LoginThrottle, User
from lagscope.models.workers import ApplierWorkerSample, ApplierWorkerState

__all__ = [
    "AlertEvent",
    "AlertRule",
    "AlertState",
    "Annotation",
    "ApiToken",
    "ApplierWorkerSample",
    "ApplierWorkerState",
    "AuditEvent",
    "Base",
    "Channel",
    "CheckToken",
    "CheckTokenCluster",
    "Cluster",
    "CommitSample",
    "Delivery",
    "DeliveryAttempt",
    "DemoStore",
    "Episode",
    "EpisodeCause",
    "Instance",
    "InstanceSample",
    "LagscopeProcess",
    "LoginThrottle",
    "ParamChange",
    "ParamValue",
    "PollGap",
    "PollOwner",
    "Sample",
    "SampleRollup1h",
    "SampleRollup1m",
    "SecretKeySalt",
    "ShardLease",
    "Silence",
    "SourceProgress",
    "User",
    "WebhookTarget",
]
