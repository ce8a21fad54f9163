"""Summaries of timing samples: median, 95th percentile, extremes.

The machines these run on are shared and noisy, so the benchmark reports medians (robust to the
odd descheduled run) and the 95th percentile (the tail a user feels), never means.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class Summary:
    """Order statistics of one set of samples, in the samples' unit."""

    n: int
    median: float
    p95: float
    minimum: float
    maximum: float

    def as_dict(self) -> dict[str, float]:
        """The summary as plain JSON-ready numbers."""
        return {key: float(value) for key, value in asdict(self).items()}


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (`fraction` in 0..1): a value that was actually observed."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def summarize(samples: Sequence[float]) -> Summary:
    """Median, p95, min and max of `samples` (NaN everywhere when there are none)."""
    if not samples:
        return Summary(0, math.nan, math.nan, math.nan, math.nan)
    return Summary(
        n=len(samples),
        median=statistics.median(samples),
        p95=percentile(samples, 0.95),
        minimum=min(samples),
        maximum=max(samples),
    )
