"""Typed client for the Cairn memory server (HTTP API ``/v1``)."""

from .client import (
    Cairn,
    CairnError,
    Hit,
    IngestReport,
    Page,
    Recall,
    SpaceStats,
)

__all__ = ["Cairn", "CairnError", "Hit", "IngestReport", "Page", "Recall", "SpaceStats"]
__version__ = "0.1.0"
