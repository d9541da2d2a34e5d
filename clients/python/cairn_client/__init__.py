"""Typed clients for the Cairn memory server (HTTP API ``/v1``): :class:`Cairn` (blocking)
and :class:`AsyncCairn` (asyncio/trio), with the same methods and results.

Framework adapters are optional extras, imported from their own modules:
``cairn_client.langgraph`` (``CairnStore``), ``cairn_client.langchain``
(``CairnRetriever``, ``CairnChatMessageHistory``), ``cairn_client.llama_index``
(``CairnRetriever``).
"""

from ._api import ROUTES
from ._core import RetryPolicy
from .client import AsyncCairn, Cairn
from .errors import ApiError, CairnError, CairnWarning, ConnectionError, TimeoutError
from .types import (
    AgentRun,
    AgentState,
    AgentStep,
    CardLine,
    ContextSpan,
    EntityDetail,
    EntityMention,
    EntityRelation,
    EntitySummary,
    Evidence,
    FactHistory,
    FactSubject,
    FactVersion,
    ForgotMemory,
    ForgotPartition,
    GroupMessage,
    Health,
    Hit,
    HitExplanation,
    HitPart,
    IngestReport,
    InspectedRecall,
    ListScore,
    Manifest,
    ManifestEntry,
    MatchLine,
    Matches,
    Me,
    MemoryDeleted,
    Message,
    ProfileFact,
    Provenance,
    Ready,
    Recall,
    RecallExplanation,
    RenderedContext,
    RenderedSpan,
    SessionInput,
    SessionPage,
    SessionRecord,
    SpaceStats,
    SpanView,
    SpeakerProfile,
    StateMatch,
    StateView,
    StepLine,
    Style,
    Timings,
    TimelineEntry,
    TrajectoryInput,
    TrajectoryOverview,
    TrajectoryRecord,
    TrajectorySummary,
    Unit,
    UnitPage,
)
from .version import __version__

__all__ = [
    "ROUTES", "RetryPolicy", "Cairn", "AsyncCairn",
    "CairnError", "CairnWarning", "ApiError", "ConnectionError", "TimeoutError",
    "AgentRun", "AgentState", "AgentStep", "CardLine", "ContextSpan", "EntityDetail", "EntityMention",
    "EntityRelation", "EntitySummary", "Evidence", "FactHistory",
    "FactSubject", "FactVersion", "ForgotMemory", "ForgotPartition", "GroupMessage", "Health", "Hit",
    "HitExplanation", "HitPart", "IngestReport", "InspectedRecall", "ListScore", "Manifest",
    "ManifestEntry", "MatchLine", "Matches", "Me", "MemoryDeleted", "Message",
    "ProfileFact", "Provenance", "Ready", "Recall", "RecallExplanation", "RenderedContext",
    "RenderedSpan", "SessionInput", "SessionPage", "SessionRecord", "SpaceStats",
    "SpanView", "SpeakerProfile", "StateMatch", "StateView", "StepLine", "Style",
    "TimelineEntry", "Timings", "TrajectoryInput", "TrajectoryOverview", "TrajectoryRecord",
    "TrajectorySummary", "Unit", "UnitPage",
    "__version__",
]
