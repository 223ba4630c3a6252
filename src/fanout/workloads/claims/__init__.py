"""The claims workload: texts split into atomic claims, every claim verified by every model (docs/claims.md)."""
