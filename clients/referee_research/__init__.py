"""For researchers: a search bot and reinforcement-learning adapters on the forward model
(docs/research/)."""
