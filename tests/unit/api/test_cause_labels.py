"""The API's cause labels are the analysis's: one list, spelled once in each language layer."""

from typing import get_args

from lagscope.analysis.causes.model import Cause
from lagscope.api.schemas.episodes import CauseLabel


def test_the_api_serves_exactly_the_analysis_cause_labels() -> None:
    assert list(get_args(CauseLabel)) == [c.label for c in Cause]
