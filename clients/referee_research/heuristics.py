"""The one place where the search bot knows anything about a particular game.

``PRIORS`` names, per game, the SDK reference bot whose choice is the search's prior (the move
it keeps unless the search finds a clearly better one; ``Settings.prior_weight``).

``SCORE_ESTIMATES`` maps a game's name to a function giving every seat's estimated score in an
unfinished state, read from the public (spectator) view only. A search with a rollout depth cap
(``Settings.rollout_depth``) uses it where a rollout stops early; a game without an entry is
always played out to its end, the result being the only evaluation the contract gives.
"""
from __future__ import annotations

from collections.abc import Callable

from referee_client.bot import Bot
from referee_client.bots import BOTS, GREEDY_FOR_GAME

from referee.core.contract import Decision, Game
from referee.core.rng import Rng
from referee.sim import Simulation
from referee.sim.model import Policy
from referee.v1 import referee_pb2

from .messages import built_decision_message, encoder

ScoreEstimate = Callable[[Simulation], list[float]]


#: Batavia: gold counted per bill of exchange and per card in hand (what they buy later).
BATAVIA_BILL = 0.3
BATAVIA_CARD = 0.4


def _batavia(sim: Simulation) -> list[float]:
    """Gold on the score track (the counting houses' majorities and seals pay at the end), plus
    :data:`BATAVIA_BILL` per bill and :data:`BATAVIA_CARD` per card in hand."""
    view = sim.view(None)
    gold = [0.0] * sim.seat_count
    for player in view.players:  # type: ignore[attr-defined]
        gold[player.seat] = (player.gold + BATAVIA_BILL * player.bills
                             + BATAVIA_CARD * player.hand_size)
    return gold


#: Goa: VP counted per ship, colonist, spice sack and land held (means to progress).
GOA_MEANS = 0.3
#: Goa: VP counted per ducat held (what it buys later; bids are not free).
GOA_DUCAT = 0.25


def _goa(sim: Simulation) -> list[float]:
    """The final scoring's open parts as if the game ended now: each development column's row
    VP, the colonies' VP, fulfilled Duty tiles and the face-down single plantations (hidden
    hands and Missions are left out), plus :data:`GOA_MEANS` per means of progress and
    :data:`GOA_DUCAT` per ducat (read from each seat's own view of the sampled state)."""
    view = sim.view(None)
    row_vp = list(view.board.row_vp)  # type: ignore[attr-defined]
    colony_vp = list(view.colony_vp)  # type: ignore[attr-defined]
    single = view.single_plantation_vp  # type: ignore[attr-defined]
    vp = [0.0] * sim.seat_count
    for player in view.players:  # type: ignore[attr-defined]
        total = sum(row_vp[r - 1] for r in player.rows if 1 <= r <= len(row_vp))
        if player.colonies and colony_vp:
            total += colony_vp[min(len(player.colonies), len(colony_vp)) - 1]
        total += player.duty_vp + single * player.single_plantations_face_down
        # what buys the next steps, at a fraction of a VP each (a coarse guess), so that a
        # rollout cut before a step still tells a richer position from a poorer one
        sacks = sum(1 for land in player.lands for f in land.fields if f.spice)
        vp[player.seat] = float(total) + GOA_MEANS * (player.ships + player.colonists + sacks
                                                      + len(player.lands))
    for seat in range(sim.seat_count):  # ducats are hidden: each seat's own view of the sample
        vp[seat] += GOA_DUCAT * sim.view(seat).my_ducats  # type: ignore[attr-defined]
    return vp


def _santa_maria(sim: Simulation) -> list[float]:
    """Happiness points so far, plus coins and goods at the end's rate (3 coins a point; a good
    sells for about 2 coins)."""
    view = sim.view(None)
    points = [0.0] * sim.seat_count
    for player in view.players:  # type: ignore[attr-defined]
        r = player.resources
        goods = r.wood + r.wheat + r.sugar + r.gem + r.gold
        points[player.seat] = player.points + (player.coins + 2 * goods) / 3
    return points


SCORE_ESTIMATES: dict[str, ScoreEstimate] = {
    "batavia": _batavia,
    "goa": _goa,
    "santa_maria": _santa_maria,
}


def score_estimate(sim: Simulation) -> list[float] | None:
    """Every seat's estimated score now, or None for a game without an estimate."""
    estimate = SCORE_ESTIMATES.get(sim.game.spec.name)
    return None if estimate is None else estimate(sim)


#: Games whose paired searches keep the prior's move at pace with the other root moves
#: (``ismcts.Settings.prior_pace``; docs/research/search-bot.md, *Batavia*): in Batavia's end
#: game a rollout's result hardly depends on the world drawn, the greedy move often looks worse
#: at once and UCB stopped playing it after one visit, so the paired choice, which needs two
#: shared worlds, never left it. The others keep the settings their duels were measured with.
PRIOR_PACE: dict[str, bool] = {"batavia": True}


#: The reference bot (``referee_client.bots.BOTS``) whose move is the prior, per game.
PRIORS: dict[str, str] = dict(GREEDY_FOR_GAME)


def prior_bot(game: str, seed: int) -> Bot | None:
    """A fresh prior bot for one seat of a match of ``game``, or None for a game without one."""
    name = PRIORS.get(game)
    return None if name is None else BOTS[name](seed)


def _without_choice(moves, rng: Rng, epsilon: float) -> object | None:
    """A rollout move that asks no bot: the only legal one, or a uniform one ``epsilon`` of
    the time; None: the bot chooses."""
    if len(moves) == 1:
        return moves[0]
    if epsilon and rng.below(1 << 20) < epsilon * (1 << 20):
        return moves[rng.below(len(moves))]
    return None


def _engine_copy(game: Game, bot: Bot | None):
    """The engine's copy of ``bot`` (``Game.heuristic_policy`` given its ``knobs()``), or None
    where the bot has no knobs or the game no copy."""
    knobs = getattr(bot, "knobs", None)
    return game.heuristic_policy(knobs()) if knobs is not None else None


def engine_policy(game: Game, seat_count: int, rng: Rng, epsilon: float = 0.0) -> Policy | None:
    """A rollout policy that plays every seat as the game's prior bot would, from the engine's
    copy of the bot (``Game.heuristic_policy``, given the bot's ``knobs()``), with a uniformly
    random move instead ``epsilon`` of the time and where the copy has no answer; never a
    message. None where the game has no copy (the search then rolls out uniformly)."""
    choose = _engine_copy(game, prior_bot(game.spec.name, rng.next64()))
    if choose is None:
        return None

    def policy(sim: Simulation, d: Decision) -> object:
        moves = d.moves
        if (forced := _without_choice(moves, rng, epsilon)) is not None:
            return forced
        move = choose(sim.state, d.seat, moves)
        return move if move is not None else moves[rng.below(len(moves))]

    return policy


def prior_policy(game: str, seat_count: int, rng: Rng, epsilon: float = 0.0,
                 encoded: bool = True, engine: bool = True) -> Policy | None:
    """A rollout policy that plays every seat as the game's prior bot would, from that seat's
    view of the (sampled) state, with a uniformly random move instead ``epsilon`` of the time;
    None for a game without a prior bot. A decision with one legal move costs no view.

    Where the game has the bot's copy on the engine (``Game.heuristic_policy``, given the bot's
    ``knobs()``) and ``engine`` is on, that answers from the state, with no message (its test
    pins it to the bot's move). Otherwise the bot is handed the Decision the referee would send,
    assembled from encodings (:class:`.messages.DecisionEncoder`: the game's encoded View, each
    move's encoding kept); ``encoded=False`` builds it field by field instead (the first,
    slower way, kept for the tests: both give the bot the same message, hence the same
    choices)."""
    bots: list[Bot] = []
    for seat in range(seat_count):
        bot = prior_bot(game, rng.next64())
        if bot is None:
            return None
        bot.on_welcome(referee_pb2.Welcome(match_id="rollout", game=game, seat=seat,
                                           seat_count=seat_count))
        bots.append(bot)
    fast: list = [] if engine else [None]  # the engine's copy, looked up on the first decision

    def policy(sim: Simulation, d: Decision) -> object:
        moves = d.moves
        if (forced := _without_choice(moves, rng, epsilon)) is not None:
            return forced
        if not fast:
            fast.append(_engine_copy(sim.game, bots[0]))
        if fast[0] is not None and (move := fast[0](sim.state, d.seat, moves)) is not None:
            return move
        if encoded:
            enc = encoder(sim.game)
            answer = bots[d.seat].choose(enc.decision(sim, d.seat, d.kind, list(moves), 0,
                                                      d.prompt))
        else:
            answer = bots[d.seat].choose(built_decision_message(sim, d.seat, d.kind,
                                                                list(moves), 0, d.prompt))
        if not isinstance(answer, referee_pb2.Move):  # an async bot: no help in a rollout
            return moves[rng.below(len(moves))]
        if encoded:
            return enc.move(answer)
        return sim.move_from_proto(getattr(answer, game))

    return policy
