"""The ISMCTS search bot as an SDK bot: ``python -m referee_research.ismcts_bot`` plays one seat
through a referee, like ``referee-bot random`` (docs/research/search-bot.md)::

    REFEREE_TOKEN=T python -m referee_research.ismcts_bot --match M --seconds 0.2 [--seed 7]

It asks for the match's public events (``Join.events``) and keeps them as the history its
sampler reads; each Decision's view and legal moves go to :class:`~.ismcts.Search`, with
determinizations drawn from that seat's view and those events only. Its answer carries a note:
iterations, the value of the move and the visits of the most searched moves.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from google.protobuf.message import Message
from referee_client import logs
from referee_client.bot import Backoff, Bot, BotError, WrongGame, run_bot
from referee_client.connection import RefereeError, TlsConfig
from referee_client.tokens import add_token_flag, token_arg

from referee.core import registry
from referee.core.contract import Event, Game
from referee.sim.convert import event_from_proto
from referee.v1 import referee_pb2

from . import heuristics, ismcts
from .ismcts import FAST, STRONG, Budget, Determinizer, Settings

log = logs.get_logger("referee_research.ismcts_bot")

#: The bot's thinking time per move when neither --seconds nor --iterations is given.
DEFAULT_SECONDS = 0.5

#: Builds the determinizer of one decision: (game, seat, view, seat count, public events so far,
#: options) -> Determinizer. The default is the game's sampler (:func:`ismcts.from_views`).
DeterminizerFactory = Callable[[str, int, Message, int, Sequence[Event], Mapping[str, Any]],
                               Determinizer]


#: The profile (:data:`ismcts.PROFILES`) the bot plays with unless told otherwise: the one
#: whose duels against greedy are measured (docs/research/search-bot.md).
DEFAULT_PROFILE = "strong"


def default_settings(profile: str = DEFAULT_PROFILE) -> Settings:
    """The bot's settings: ``profile``'s, at :data:`DEFAULT_SECONDS` a move."""
    return replace(ismcts.PROFILES[profile], budget=Budget(seconds=DEFAULT_SECONDS))


class ISMCTSBot(Bot):
    """Information-Set MCTS on the forward model, for any game with a sampler.

    ``seed``: the search's randomness (each decision's search is seeded by it and the state
    version, so with an iteration budget the bot's play is reproducible). ``settings``: budget
    and knobs (default: 0.2 s per move). ``determinizer``: see :data:`DeterminizerFactory`."""

    name = "ismcts"

    def __init__(self, seed: int | None = None, settings: Settings | None = None,
                 determinizer: DeterminizerFactory | None = None):
        self.seed = 0 if seed is None else seed
        self.settings = settings or default_settings()
        self.determinizer = determinizer or ismcts.from_views
        self.history: list[Event] = []
        self.game: Game | None = None
        self.seat = -1
        self.seat_count = 0
        self.options: dict[str, Any] = {}
        self.last: ismcts.SearchResult | None = None
        self.use_prior = self.settings.prior_weight > 0
        self.prior: Bot | None = None
        self.searches = 0  # decisions searched (more than one legal move)
        #: state version before which the end is too far for the horizon: the prior's move
        self.skip_until = 0
        self.search_seconds = 0.0  # their time (CPU time with a CPU budget)
        self.search_iterations = 0  # their iterations

    def on_welcome(self, welcome: referee_pb2.Welcome) -> None:
        self.game = registry.get(welcome.game)
        self.seat, self.seat_count = welcome.seat, welcome.seat_count
        self.options = self.game.spec.parse_options(dict(welcome.options))
        self.skip_until = 0
        self.prior = heuristics.prior_bot(welcome.game, self.seed) if self.use_prior else None
        if self.prior is not None:
            self.prior.on_welcome(welcome)

    def wants_events(self) -> bool:
        return True

    def on_event(self, event: referee_pb2.MatchEvent) -> None:
        self.history.append(event_from_proto(event))

    def choose(self, decision: referee_pb2.Decision) -> referee_pb2.Move:
        if self.game is None:
            raise BotError("a decision before the welcome")
        game = self.game
        name = game.spec.name
        legal = [game.move_from_proto(getattr(m, name)) for m in decision.legal_moves]
        view = getattr(decision.view, name)
        determinize = self.determinizer(name, self.seat, view, self.seat_count,
                                        list(self.history), self.options)
        seed = decision_seed(self.seed, decision.state_version)
        prior = None
        if self.prior is not None and len(legal) > 1:
            answer = self.prior.choose(decision)
            if isinstance(answer, referee_pb2.Move) and answer in decision.legal_moves:
                prior = legal[list(decision.legal_moves).index(answer)]
                if decision.state_version < self.skip_until:  # the end is still far: greedy
                    return answer
        try:
            result = ismcts.search(determinize, self.seat, legal, seed, self.settings, prior)
        except NotImplementedError as exc:  # the game's sampler has not been written
            raise BotError(f"the search bot cannot play {name}: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - a sampler or engine bug must not cost the match
            log.error("search failed; playing the prior's move (or the first legal one)",
                      state_version=decision.state_version, error=repr(exc)[:300])
            self.note(f"search failed: {exc!r}"[:200])
            return decision.legal_moves[legal.index(prior) if prior is not None else 0]
        self.last = result
        horizon = self.settings.horizon
        if result.beyond and horizon is not None:  # no search until the end may be near
            self.skip_until = decision.state_version + result.beyond - horizon
            self.searches += 1
            self.search_seconds += result.seconds
            self.search_iterations += result.iterations
            self.note(f"greedy move: the end is {result.beyond} moves or more away (horizon "
                      f"{horizon}); {result.seconds * 1000:.0f} ms")
        elif result.iterations:
            self.searches += 1
            self.search_seconds += result.seconds
            self.search_iterations += result.iterations
            self.note(result.note(_label))
        return decision.legal_moves[legal.index(result.move)]


def decision_seed(seed: int, version: int) -> int:
    """The search seed of the decision at state ``version`` for a bot seeded with ``seed``."""
    return (seed * 0x9E3779B97F4A7C15 + version * 0xBF58476D1CE4E5B9) % 2**64


def _label(move: Any) -> str:
    """A short name of an engine move for the note."""
    return repr(move).replace(" ", "")[:40]


# ---------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="referee-research ismcts",
        description="Play one seat of a match with the ISMCTS search bot (any game with a "
                    "sampler). The seat token comes from $REFEREE_TOKEN or --token-file.",
        epilog="Exit status: 0 the match ended, 1 the bot failed, 2 bad usage.")
    add_bot_flags(p)
    return p


def add_bot_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--match", required=True, help="match id (from CreateMatch)")
    add_token_flag(p, "--token", "REFEREE_TOKEN", "this seat's secret token")
    p.add_argument("--address", default=os.environ.get("REFEREE_ADDRESS", "127.0.0.1:50051"),
                   help="referee host:port (default: $REFEREE_ADDRESS or 127.0.0.1:50051)")
    p.add_argument("--ca-cert", metavar="PEM", help="trust this CA (TLS)")
    p.add_argument("--tls", action="store_true", help="connect with TLS (system root CAs)")
    p.add_argument("--seed", type=int, default=0, help="the search's seed (default 0)")
    p.add_argument("--seconds", type=float,
                   help="thinking time per move in seconds (default 0.2 unless --iterations)")
    p.add_argument("--iterations", type=int,
                   help="iterations per move (with --seconds: whichever ends first; alone: "
                        "reproducible play)")
    add_search_flags(p)
    p.add_argument("--give-up-after", type=float, default=120.0, metavar="S",
                   help="stop retrying after S seconds without reaching the referee")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                   help="log lines at this level and above (default info)")


def add_search_flags(p: argparse.ArgumentParser) -> None:
    """The search's knobs shared by ``ismcts``, ``duel`` and ``bench.sprt``: ``--profile`` picks
    the settings (:data:`ismcts.PROFILES`), each other flag changes one knob of them (unset: the
    profile's; the help names the strong profile's)."""
    p.add_argument("--profile", choices=sorted(ismcts.PROFILES), default=DEFAULT_PROFILE,
                   help="the settings the other flags change: strong (rollouts where every "
                        "seat plays greedy, to the end) or fast (rollouts where every seat plays "
                        "the engine's copy of its greedy bot, cut after a few moves and scored "
                        "by the game's provisional final scoring; 1,000+ iterations a CPU "
                        f"second) (default {DEFAULT_PROFILE})")
    p.add_argument("--rollout-depth", type=int, metavar="N",
                   help="stop rollouts after N moves where the game has a score estimate "
                        f"(strong's {STRONG.rollout_depth}, fast's {FAST.rollout_depth})")
    p.add_argument("--prior-weight", type=float,
                   help="virtual visits of the greedy bot's move, as a share of the iterations "
                        f"(strong's {STRONG.prior_weight})")
    p.add_argument("--rollout", choices=ismcts.ROLLOUTS,
                   help="rollout policy: every seat as the game's greedy bot (prior: the same "
                        "choices, from the engine's copy of the bot where the game has one, "
                        "else from Decision messages), as the engine's copy alone (heuristic: "
                        "uniform where the game has none) or uniform (random) "
                        f"(strong's {STRONG.rollout})")
    p.add_argument("--epsilon", type=float,
                   help="with --rollout prior or heuristic: the share of rollout moves drawn "
                        "at random "
                        f"(strong's {STRONG.epsilon})")
    p.add_argument("--tree-depth", type=int, metavar="N",
                   help="choice nodes below the root (0: flat Monte Carlo over the root's "
                        f"moves; strong's {STRONG.tree_depth})")
    p.add_argument("--widening", type=float,
                   help="progressive widening: at most ceil(W*sqrt(visits+1)) children a node, "
                        f"the greedy move first (strong's {STRONG.widening})")
    p.add_argument("--paired", action=argparse.BooleanOptionalAction,
                   help="compare the root's moves on the same determinizations (common random "
                        f"numbers; strong's {'on' if STRONG.paired else 'off'})")
    p.add_argument("--horizon", type=int, metavar="N",
                   help="rollouts to the end: search only where greedy play ends the game "
                        f"within N moves, else play the greedy move (strong's {STRONG.horizon})")
    p.add_argument("--prior-margin", type=float,
                   help="paired: the mean reward gain over the greedy move, on shared worlds, "
                        f"that another move needs to be played (strong's {STRONG.prior_margin})")
    p.add_argument("--prior-pace", action=argparse.BooleanOptionalAction, default=None,
                   help="paired: play the greedy move again whenever another root move has "
                        "more visits, so they share every world (default: the game's choice, "
                        "on for Batavia)")
    p.add_argument("--evaluation", choices=ismcts.EVALUATIONS,
                   help="what scores a rollout cut at --rollout-depth: the game's estimate from "
                        "the public view, or its final scoring applied to the sample now "
                        f"(strong's {STRONG.evaluation}, fast's {FAST.evaluation})")
    p.add_argument("--exploration", type=float,
                   help=f"UCB1's exploration constant (strong's {STRONG.exploration})")


def search_knobs(args: argparse.Namespace) -> dict[str, Any]:
    """The Settings fields the flags set (the unset ones left to the profile)."""
    knobs = {"rollout": args.rollout, "epsilon": args.epsilon, "tree_depth": args.tree_depth,
             "widening": args.widening, "exploration": args.exploration, "paired": args.paired,
             "horizon": args.horizon, "prior_margin": args.prior_margin,
             "prior_pace": args.prior_pace, "rollout_depth": args.rollout_depth,
             "prior_weight": args.prior_weight, "evaluation": args.evaluation}
    return {k: v for k, v in knobs.items() if v is not None}


def settings_from(args: argparse.Namespace) -> Settings:
    seconds = args.seconds
    if seconds is None and args.iterations is None:
        seconds = DEFAULT_SECONDS
    return replace(ismcts.PROFILES[args.profile],
                   budget=Budget(iterations=args.iterations, seconds=seconds,
                                 cpu=getattr(args, "cpu", False)),
                   **search_knobs(args))


def run(args: argparse.Namespace) -> int:
    logs.configure(args.log_level, False)
    token = token_arg(args, "--token", "REFEREE_TOKEN")
    if not token:
        args.usage_error("no seat token: pass --token-file or set REFEREE_TOKEN")
        return 2  # usage_error exits; kept for a caller whose usage_error returns
    tls = TlsConfig(ca_file=args.ca_cert) if (args.tls or args.ca_cert) else None
    try:
        bot = ISMCTSBot(args.seed, settings_from(args))
        over = run_bot(bot, args.address, args.match, token, tls=tls,
                       backoff=Backoff(give_up_after=args.give_up_after))
    except ValueError as exc:
        print(f"bad settings: {exc}", file=sys.stderr)
        return 2
    except WrongGame as exc:
        log.error("wrong game", error=str(exc))
        return 2
    except (BotError, RefereeError) as exc:
        log.error("failed", error=str(exc))
        return 1
    log.info("finished", match=args.match, summary=over.summary)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.usage_error = parser.error
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
