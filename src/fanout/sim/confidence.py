"""The confidence a simulated model states with its verdict, with its calibration planted.

A model is calibrated when, of the verdicts it gives with confidence c, a
share c is right. The simulator knows the truth of each sample edit, so it
can plant that: a verdict that is right draws its confidence from
Beta(a + 1, b), a wrong one from Beta(a, b + 1), where a / (a + b) is the
accuracy the model expects of itself (`expected_accuracy`). By Bayes, the
share of right verdicts among those stated at c is then c exactly when the
model's real accuracy equals that expectation, so a model whose expectation
matches its measured accuracy is calibrated up to chance. `overconfidence`
then bends the calibrated figure, stated = c ** (1 / overconfidence): 1
leaves it calibrated, 3 turns a 0.5 into 0.79 (overconfident), as RLHF
models' verbalized confidence tends to run high (Tian et al., 2023).
An edit the simulator has no truth for gets the draw of a right verdict.
"""

from __future__ import annotations

import random

from fanout.judging.scales import STANCE_OF_TRUTH, stance
from fanout.sim.models import SimModel

STRENGTH = 4.0
"""a + b of the Beta draws: how sharply a model's confidence tells its right verdicts from its wrong ones."""


def stated_confidence(verdict: str, truth: str | None, model: SimModel, rng: random.Random) -> float:
    """The confidence the model states for `verdict` on an edit whose truth is `truth`, to two decimals."""
    a = STRENGTH * model.expected_accuracy
    b = STRENGTH - a
    right = truth is None or stance(verdict) == STANCE_OF_TRUTH.get(truth)
    calibrated = rng.betavariate(a + 1, b) if right else rng.betavariate(a, b + 1)
    stated: float = calibrated ** (1 / model.overconfidence)
    return round(stated, 2)
