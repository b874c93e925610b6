"""SQLAlchemy 2.0 typed models, one module per aggregate; ``Base.metadata`` is what Alembic sees."""

from lagscope.models.annotations import Annotation
from lagscope.models.base import Base
from lagscope.models.inventory import Channel, Cluster, Instance
from lagscope.models.params import ParamChange, ParamValue
from lagscope.models.series import (
    InstanceSample,
    Sample,
    SampleRollup1h,
    SampleRollup1m,
    SourceProgress,
)
from lagscope.models.users import ApiToken, LoginThrottle, User

__all__ = [
    "Annotation",
    "ApiToken",
    "Base",
    "Channel",
    "Cluster",
    "Instance",
    "InstanceSample",
    "LoginThrottle",
    "ParamChange",
    "ParamValue",
    "Sample",
    "SampleRollup1h",
    "SampleRollup1m",
    "SourceProgress",
    "User",
]
