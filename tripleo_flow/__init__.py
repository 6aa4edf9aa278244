"""tripleo-flow: plans, workflows and ephemeral Heat for TripleO-style deployments."""

__version__ = "0.1.0"
