"""Who is on a research team (--evidence team): the type both the team's run and its pooling read.

It sits below both: `fanout.research.team` runs the team's steps and
`fanout.research.team_pool` pools what they found, and each names the team.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Team:
    """Who researches (pinned in the manifest): the planner, the workers in order, the aggregator, the rounds."""

    planner: str
    workers: tuple[str, ...]
    aggregator: str | None = None
    rounds: int = 2
