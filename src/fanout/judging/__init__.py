"""How verdicts become decisions: the scales they are compared on, and the strategies that spend them.

    scales   the six-step verdict scale, its three stances, and ground truth on the same stances
    policy   thresholds for a human, the cascade and the router, as pure functions of verdicts given:
             the run (fanout.engine) and the report's policy replay call the same ones
"""
