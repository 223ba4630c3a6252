"""fanout: one verification task across many LLMs, unattended and resumable."""

__version__ = "0.1.0"
