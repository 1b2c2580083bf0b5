"""The forward model: the referee's engines without a referee (docs/research/forward-model.md)."""
