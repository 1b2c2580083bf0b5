"""Tournament runner for the board-game referee: bots in any language, ratings, reports.

Write a TOML file naming the game, the entrants (command lines with ``{address}``, ``{match}``,
``{seat}``, ``{seed}`` placeholders; a bot's seat token is in its ``$REFEREE_TOKEN``), the format
and the number of matches, then::

    referee-tournament run examples/tournaments/batavia.toml

It starts a referee (or uses one given ``--address``/``--admin-token-file``), plays the matches in
parallel with a progress bar and writes a results folder (leaderboard, ``results.json``,
``matches.csv``, per-match records, plots). Interrupted, the same command resumes.

Modules: :mod:`.config` (TOML schema), :mod:`.formats` (schedules: seat rotation, duplicate
seeds), :mod:`.sequential` (SPRT early stop), :mod:`.ratings` (OpenSkill, intervals),
:mod:`.play` (one match), :mod:`.runner` (the loop, SQLite resume), :mod:`.report`,
:mod:`.events` (Swiss, knockout, arena: the next round's tables from the results so far),
:mod:`.staged` (the events on the store), :mod:`.sensitivity` (``report --sensitivity``),
:mod:`.ray_backend`, :mod:`.bench`, :mod:`.cli`.

The runner is a client: it imports nothing from ``referee`` but the generated protocol modules
``referee.v1.*_pb2`` and starts referees only as ``referee serve`` subprocesses.
"""
from .config import ConfigError, TournamentConfig, load, parse
from .formats import MatchSpec, schedule
from .runner import RunError, Runner, report_only, run_tournament

__all__ = ["ConfigError", "MatchSpec", "RunError", "Runner", "TournamentConfig", "load",
           "parse", "report_only", "run_tournament", "schedule"]
