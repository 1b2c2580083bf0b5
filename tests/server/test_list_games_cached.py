"""ListGames is served from a reply built once (issue 37 item 5), and built again when the
registered games change (a game registered after start: a plugin, a test)."""
from __future__ import annotations

from referee.core import registry


def test_list_games_is_built_once_and_again_when_the_games_change(server, monkeypatch):
    service = server.service
    first = service.list_games()
    assert service.list_games() is first  # not rebuilt per call
    every = registry.games()
    assert [g.name for g in first.games] == sorted(every)
    # the registered games change (here: one fewer): the reply follows them
    fewer = {name: game for name, game in every.items() if name != "goa"}
    monkeypatch.setattr(registry, "games", lambda: dict(fewer))
    again = service.list_games()
    assert again is not first and [g.name for g in again.games] == sorted(fewer)
