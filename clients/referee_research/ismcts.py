"""Information-Set Monte Carlo Tree Search on the forward model (docs/research/search-bot.md).

Single-observer ISMCTS (Cowling, Powley and Whitehouse, 2012): one tree for the searching seat,
whose edges are moves (of every seat) and whose statistics are shared by every determinization
that reaches them. Each iteration

1. draws a **determinization**, a full state consistent with what the seat saw (the game's
   sampler, ``Simulation.from_views({seat: view}, history, rng)``; see :func:`from_views`);
2. **selects** down the tree, among the children whose move is legal in *this* determinization,
   the one with the best UCB value, with the *availability* count (how often the move was
   legal when its parent was visited) in place of the parent's visits;
3. **expands** one move not tried yet (drawn at random);
4. **rolls out** with a cheap policy (uniform random moves) to the end of the game, or to a
   depth cap after which the game's score estimate (:mod:`.heuristics`) stands in for the end;
5. **backpropagates** each seat's reward in [0, 1] (:func:`rewards`: its rank, and a little of
   its score margin) to the moves that seat made on the path.

The move played is the most visited of the decision's legal moves, where the move a *prior*
(the game's reference bot, :mod:`.heuristics`) would play counts ``prior_weight`` of the
iterations as virtual visits: with a small budget the search plays like the reference bot and
departs from it where its statistics clearly say so. Everything is drawn from one
:class:`referee.core.rng.Rng` seeded by the caller, so with an iteration budget a search is a
pure function of (seed, what the seat saw); a time budget stops earlier or later with the
machine's load. Nothing here names a game: what differs per game goes through the contract
(legal moves, apply, result, the sampler) or the one table of :mod:`.heuristics`.
"""
from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from referee.core import registry
from referee.core.contract import Decision, Event, Result
from referee.core.rng import Rng
from referee.sim import Simulation
from referee.sim.model import Policy

from . import heuristics

#: Draws one full state consistent with what the searching seat saw.
Determinizer = Callable[[Rng], Simulation]

#: UCB1's exploration constant for rewards in [0, 1].
EXPLORATION = 0.7
#: Of a seat's reward, the share given by its score margin (the rest by its rank).
MARGIN_WEIGHT = 0.25
#: Virtual visits of the prior's move, as a share of the iterations (``Settings.prior_weight``).
PRIOR_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class Budget:
    """When a search stops: after ``iterations`` iterations and/or ``seconds`` of wall time,
    whichever comes first (at least one iteration). Only an iteration budget without seconds
    gives a reproducible search."""

    iterations: int | None = None
    seconds: float | None = 0.2
    #: ``seconds`` of this process's CPU time (``time.process_time``) instead of wall time: a
    #: budget the machine's load does not shorten (duels at a fixed second of CPU a move)
    cpu: bool = False

    def __post_init__(self) -> None:
        if self.iterations is None and self.seconds is None:
            raise ValueError("a budget needs iterations or seconds")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError(f"iterations must be at least 1, not {self.iterations}")
        if self.seconds is not None and self.seconds <= 0:
            raise ValueError(f"seconds must be positive, not {self.seconds}")


@dataclass(frozen=True, slots=True)
class Settings:
    """The search's knobs. ``rollout_depth``: moves played after the tree before the score
    estimate stands in for the end (None: play to the end)."""

    budget: Budget = field(default_factory=Budget)
    exploration: float = EXPLORATION
    rollout_depth: int | None = None
    margin_weight: float = MARGIN_WEIGHT
    #: virtual visits given to the prior's move (the game's reference bot's choice, see
    #: :mod:`.heuristics`) when the most visited move is picked, as a share of the iterations
    #: run: the search overrides the reference bot only where it finds clearly better
    prior_weight: float = PRIOR_WEIGHT
    #: how rollouts (and the tree's first visit of a node) choose moves: ``"random"`` (uniform),
    #: ``"prior"`` (every seat as the game's prior bot would, from its view of the sample;
    #: :func:`heuristics.prior_policy`), which models greedy opponents as they play, or
    #: ``"heuristic"`` (the same bot's copy on the engine, ``Game.heuristic_policy``, where the
    #: game has one, else uniform; never a message: :func:`heuristics.engine_policy`)
    rollout: str = "random"
    #: with ``rollout="prior"`` or ``"heuristic"``: the share of rollout moves drawn uniformly
    #: instead
    epsilon: float = 0.0
    #: choice nodes on a path below the root (None: no limit); 0 is flat Monte Carlo over the
    #: root's moves, every later move by the rollout policy
    tree_depth: int | None = None
    #: progressive widening: a node with n visits has at most ``ceil(widening * sqrt(n + 1))``
    #: children, the policy's move first (None: every legal move is tried)
    widening: float | None = None
    #: common random numbers at the root: the root's move is chosen first, and its j-th visit
    #: plays in the j-th determinization, drawn once and shared by every root move, so two
    #: root moves are compared on the same hidden cards and the same future chance
    paired: bool = False
    #: with ``paired``: the mean reward, over shared worlds, by which a root move must beat
    #: the prior's to be played instead (a paired search picks by that, not by visits)
    prior_margin: float = 0.01
    #: with rollouts to the end (no ``rollout_depth``): a rollout that needs more than this many
    #: moves (it is given up at twice as many) stops the search, which then plays the prior's
    #: move. The search thus works only where the game's end is near enough to be played out
    #: exactly (None: always); the bot skips the searches until the end may be that near
    horizon: int | None = None
    #: with ``paired``: the prior's move keeps pace with the others, played again whenever
    #: another root move has more visits, so every world a candidate is played in is one the
    #: prior's move was played in too (without it UCB may leave the prior's move at one visit
    #: when it looks worse, and the paired choice, which needs two shared worlds, keeps it).
    #: None: the game's choice (``heuristics.PRIOR_PACE``)
    prior_pace: bool | None = None
    #: what scores a rollout cut at ``rollout_depth``: ``"estimate"`` (the game's guess from
    #: the public view, :data:`heuristics.SCORE_ESTIMATES`) or ``"provisional"`` (the game's own
    #: final scoring applied to the sample, ``Game.provisional_scores``: no View built, the
    #: fast profile's; a game without it falls back to the estimate)
    evaluation: str = "estimate"

    def __post_init__(self) -> None:
        if self.rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, not {self.rollout!r}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be within [0, 1], not {self.epsilon}")
        if self.horizon is not None and self.horizon < 1:
            raise ValueError(f"horizon must be at least 1, not {self.horizon}")
        if self.evaluation not in EVALUATIONS:
            raise ValueError(f"evaluation must be one of {', '.join(EVALUATIONS)}, "
                             f"not {self.evaluation!r}")
        if self.widening is not None and self.widening <= 0:
            raise ValueError(f"widening must be positive, not {self.widening}")


#: A search's rollout policy once made, where the game has none for its setting: uniform moves.
_UNIFORM: Any = object()

#: Spreads the indices of a paired search's determinizations over their seeds.
_GOLDEN = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1

#: The rollout policies a search can use (``Settings.rollout``).
ROLLOUTS = ("random", "prior", "heuristic")
#: How a cut rollout is scored (``Settings.evaluation``).
EVALUATIONS = ("estimate", "provisional")

#: The settings the bot plays with (its budget aside): flat Monte Carlo over the root's moves,
#: the greedy move tried first and kept unless clearly beaten, a few more candidates by
#: progressive widening, each scored by rollouts where every seat plays as its greedy bot for
#: ``rollout_depth`` moves before the game's score estimate (docs/research/search-bot.md).
STRONG = Settings(rollout="prior", tree_depth=0, widening=1.5, prior_weight=0.25,
                  rollout_depth=None, horizon=120, paired=True, prior_margin=0.02)

#: The settings of issue 36: the same root choice (the greedy move kept unless paired worlds
#: clearly prefer another, a few candidates by progressive widening) at a thousand iterations a
#: CPU second and more: rollouts cut after ``rollout_depth`` moves, every seat played by the
#: engine's copy of its greedy bot where the game has one (``Game.heuristic_policy``: every game),
#: else by uniform moves from the engine's move lists, where the game's own final scoring
#: applied to the sample (``Game.provisional_scores``) stands in for the end. No protobuf on
#: the inner loop: one sample, a few engine moves and one provisional scoring an iteration
#: (docs/research/search-bot.md, *A thousand iterations a second*).
FAST = Settings(rollout="heuristic", rollout_depth=10, tree_depth=0, widening=1.5,
                prior_weight=0.25, horizon=None, paired=True, prior_margin=0.02,
                evaluation="provisional")


#: The settings a bot or a duel starts from (``--profile``); flags change single knobs.
PROFILES: dict[str, Settings] = {"strong": STRONG, "fast": FAST}


class _BeyondHorizon(Exception):
    """A rollout to the end ran past ``Settings.horizon`` moves: ``moves`` after the root (at
    least; exact when the rollout reached the end within twice the horizon)."""

    def __init__(self, moves: int):
        super().__init__(moves)
        self.moves = moves


class Node:
    """A move in the tree: the seat that made it, its visits, how often it was available, and
    the sum of that seat's rewards through it."""

    __slots__ = ("avail", "children", "seat", "total", "visits")

    def __init__(self, seat: int):
        self.seat = seat
        self.visits = 0
        self.avail = 0
        self.total = 0.0
        self.children: dict[tuple[int, Any], Node] = {}


@dataclass(slots=True)
class SearchResult:
    """The move chosen (an engine move of the game) and what the search saw of each root move:
    visits and mean reward for the searching seat."""

    move: Any
    visits: dict[Any, int]
    values: dict[Any, float]
    iterations: int
    seconds: float
    #: moves from here to the end of the greedy rollout that passed the horizon (0: none did)
    beyond: int = 0

    @property
    def value(self) -> float:
        """The chosen move's mean reward (the searching seat's expected reward in [0, 1])."""
        return self.values.get(self.move, 0.0)

    def note(self, label: Callable[[Any], str] = repr, top: int = 5) -> str:
        """A one-line summary for ``Bot.note``: iterations, value, the most visited moves."""
        ranked = sorted(self.visits.items(), key=lambda kv: -kv[1])[:top]
        parts = ", ".join(f"{label(m)}={n}/{self.values.get(m, 0.0):.2f}" for m, n in ranked)
        return (f"ismcts {self.iterations} it {self.seconds * 1000:.0f} ms; "
                f"value {self.value:.3f}; visits {parts}")


def rewards(result: Result, margin_weight: float = MARGIN_WEIGHT) -> list[float]:
    """Each seat's reward in [0, 1] from a final result: ``1 - margin_weight`` of it from its rank
    (1 for first, 0 for last, shared ranks share), the rest from its score against the best of
    the others (1/2 when level; solo: against 0)."""
    n = len(result.scores)
    out = []
    for s in range(n):
        rank = 0.5 if n == 1 else (n - result.ranks[s]) / (n - 1)
        out.append((1 - margin_weight) * rank
                   + margin_weight * _margin(result.scores[s], _best_other(result.scores, s)))
    return out


def estimate_rewards(scores: Sequence[float], margin_weight: float = MARGIN_WEIGHT) -> list[float]:
    """Rewards in [0, 1] from estimated scores of an unfinished game (ranks from the estimates)."""
    n = len(scores)
    out = []
    for s in range(n):
        above = sum(1 for o in scores if o > scores[s])
        level = sum(1 for o in scores if o == scores[s]) - 1
        rank = 0.5 if n == 1 else (n - 1 - above - level / 2) / (n - 1)
        out.append((1 - margin_weight) * rank
                   + margin_weight * _margin(scores[s], _best_other(scores, s)))
    return out


def _best_other(scores: Sequence[float], s: int) -> float:
    return max((v for i, v in enumerate(scores) if i != s), default=0.0)


def _margin(mine: float, theirs: float) -> float:
    """0.5 + 0.5 * a squashed score difference, in [0, 1]."""
    diff = mine - theirs
    return 0.5 + 0.5 * diff / (abs(diff) + 10.0)


class Search:
    """One ISMCTS search for ``seat`` over the determinizations ``determinize`` draws.

    ``legal``: the moves of the real decision (engine moves); the chosen move is one of them,
    whatever a determinization lists. With one legal move nothing is searched."""

    def __init__(self, determinize: Determinizer, seat: int, legal: Sequence[Any],
                 settings: Settings | None = None, prior: Any = None):
        if not legal:
            raise ValueError("a decision with no legal move")
        self.determinize = determinize
        self.seat = seat
        self.legal = list(legal)
        self.settings = settings or Settings()
        self.root = Node(seat)
        self.prior = prior
        self._rollout_policy: Policy | None = None
        self._policy_rng = Rng(0)
        self._world_seed = 0
        self._worlds: dict[int, Simulation] = {}
        self._pace = settings.prior_pace if settings is not None else None
        self._paired: dict[Node, list[float]] = {}
        #: a rollout passed ``Settings.horizon``: the search stopped and keeps the prior's move;
        #: ``remaining``: how many moves that rollout took (or ran before it was given up, at
        #: twice the horizon), which a bot can use to skip the searches until the end is near
        self.beyond = False
        self.remaining = 0
        self._estimator: bool | None = None  # the game scores a state provisionally
        self._root_legal = set(self.legal)

    def run(self, seed: int) -> SearchResult:
        settings = self.settings
        budget = settings.budget
        clock = time.process_time if budget.cpu else time.perf_counter
        start = clock()
        if len(self.legal) == 1:
            return SearchResult(self.legal[0], {self.legal[0]: 0}, {}, 0, 0.0)
        rng = Rng(seed)
        self._policy_rng = Rng(rng.next64())
        self._world_seed = rng.next64()
        deadline = None if budget.seconds is None else start + budget.seconds
        done = 0
        with cyclic_gc_paused():
            while True:
                done += 1
                try:
                    self._iterate(Rng(rng.next64()))
                except _BeyondHorizon as far:  # the end is further than the search looks
                    self.beyond = True
                    self.remaining = far.moves
                    break
                if budget.iterations is not None and done >= budget.iterations:
                    break
                if deadline is not None and clock() >= deadline:
                    break
        return self._result(done, clock() - start)

    # ------------------------------------------------------------------ one iteration
    def _policy(self, sim: Simulation) -> Policy | None:
        """The rollout policy of this search (made on its first determinization)."""
        rollout = self.settings.rollout
        if rollout == "random":
            return None
        if self._rollout_policy is None:
            if rollout == "heuristic":
                made = heuristics.engine_policy(sim.game, sim.seat_count, self._policy_rng,
                                                self.settings.epsilon)
            else:
                made = heuristics.prior_policy(sim.game.spec.name, sim.seat_count,
                                               self._policy_rng, self.settings.epsilon)
            self._rollout_policy = made if made is not None else _UNIFORM
        return None if self._rollout_policy is _UNIFORM else self._rollout_policy

    def _world(self, j: int) -> Simulation:
        """A copy of the ``j``-th determinization of a paired search (drawn once, kept)."""
        world = self._worlds.get(j)
        if world is None:
            world = self._worlds[j] = self.determinize(
                Rng(self._world_seed ^ ((j * _GOLDEN) & _MASK)))
            if self._pace is None:
                self._pace = heuristics.PRIOR_PACE.get(world.game.spec.name, False)
        return world.clone()

    def _iterate(self, rng: Rng) -> None:
        settings = self.settings
        node = self.root
        path: list[Node] = []
        depth = 0
        expanded = False
        if settings.paired:
            # the root's move first, then the world: a root move's j-th visit is played in the
            # j-th determinization, the same for every root move (common random numbers)
            paced = self._paced_prior() if self._pace else None
            if paced is not None:
                child, move, expanded = paced, self.prior, False
            else:
                child, move, expanded = self._select(self.root, self.seat, self.legal, None,
                                                     None, None, rng)
            sim = self._world(child.visits)
            game, state = sim.game, sim.state
            d = game.decision(state)
            if d is None or d.seat != self.seat or move not in d.moves:
                if expanded:  # a world that does not fit: nothing learnt
                    del self.root.children[(self.seat, move)]
                return
            self.root.visits += 1
            policy = self._policy(sim)
            game.apply(state, d.seat, move)
            path.append(child)
            node = child
            depth = 1
            first = False
        else:
            sim = self.determinize(rng)
            game, state = sim.game, sim.state
            policy = self._policy(sim)
            first = True
        root_legal = self._root_legal
        while not expanded:
            d = game.decision(state)
            if d is None:
                break
            moves = d.moves
            if first:
                # at the root only the real decision's moves count (a determinization lists
                # the same ones when the sampler keeps its promise); one that does not even
                # have this seat to move with one of them teaches nothing: dropped
                moves = [m for m in moves if m in root_legal]
                if d.seat != self.seat or not moves:
                    return
                first = False
                self.root.visits += 1
            if len(moves) == 1:  # forced: no choice to learn, no node
                game.apply(state, d.seat, moves[0])
                continue
            if settings.tree_depth is not None and depth > settings.tree_depth:
                break  # below the tree: the rollout policy plays on
            node, move, expanded = self._select(node, d.seat, moves, sim, d, policy, rng)
            game.apply(state, d.seat, move)
            path.append(node)
            depth += 1
        reward = self._rollout(sim, rng, policy)
        for n in path:
            n.visits += 1
            n.total += reward[n.seat]
        if settings.paired and path:  # the root move's reward in world j = its visit j
            self._paired.setdefault(path[0], []).append(reward[self.seat])

    def _paced_prior(self) -> Node | None:
        """The prior's root node when another root move has been visited more often."""
        prior = self.root.children.get((self.seat, self.prior))
        if prior is None:
            return None
        if any(c.visits > prior.visits for c in self.root.children.values()):
            return prior
        return None

    def _select(self, node: Node, seat: int, moves: Sequence[Any], sim: Simulation | None,
                d: Decision | None, policy: Policy | None, rng: Rng) -> tuple[Node, Any, bool]:
        """The child of ``node`` to follow among ``moves`` (the ones legal here): a new one
        while untried moves remain (within the widening limit), else the best by UCB1 with
        availability counts. Returns it, its move, and whether it is new."""
        c = self.settings.exploration
        widening = self.settings.widening
        children = node.children
        untried = []
        best, best_move, best_ucb = None, None, -1.0
        for m in moves:
            child = children.get((seat, m))
            if child is None:
                untried.append(m)
                continue
            child.avail += 1
            ucb = child.total / child.visits + c * math.sqrt(math.log(child.avail)
                                                             / child.visits)
            if ucb > best_ucb:
                best, best_move, best_ucb = child, m, ucb
        if untried and (best is None or widening is None or len(children) < math.ceil(
                widening * math.sqrt(node.visits + 1))):
            m = self._expansion(untried, sim, d, node is self.root, policy, rng)
            child = Node(seat)
            child.avail = 1
            children[(seat, m)] = child
            return child, m, True
        assert best is not None
        return best, best_move, False

    def _expansion(self, untried: list[Any], sim: Simulation | None, d: Decision | None,
                   at_root: bool, policy: Policy | None, rng: Rng) -> Any:
        """The move a node tries next: the prior's at the root, the rollout policy's below it,
        while untried; otherwise one drawn at random."""
        if at_root and self.prior in untried:
            return self.prior
        if not at_root and policy is not None and sim is not None and d is not None:
            m = policy(sim, d)
            if m in untried:
                return m
        return untried[rng.below(len(untried))]

    def _rollout(self, sim: Simulation, rng: Rng, policy: Policy | None) -> list[float]:
        game, state = sim.game, sim.state
        depth = self.settings.rollout_depth
        played = 0
        if depth is not None and not self._can_estimate(sim):
            depth = None  # nothing to stand in for the end: play to it
        horizon = self.settings.horizon if depth is None else None
        while (d := game.decision(state)) is not None:
            if horizon is not None and played >= 2 * horizon:
                raise _BeyondHorizon(played)
            if depth is not None and played >= depth:
                estimate = self._estimate(sim)
                # an estimated rank is a coarse guess: the margin alone, which moves with
                # every point, scores an unfinished game
                return estimate_rewards(estimate, 1.0)
            moves = d.moves
            move = policy(sim, d) if policy is not None else moves[rng.below(len(moves))]
            game.apply(state, d.seat, move)
            played += 1
        if horizon is not None and played > horizon:  # the end measured, and too far
            raise _BeyondHorizon(played)
        result = game.result(state)
        assert result is not None
        return rewards(result, self.settings.margin_weight)

    def _can_estimate(self, sim: Simulation) -> bool:
        if self._estimator is None:
            # the engine's own provisional scoring (no protobuf, the hot path) where asked and
            # the game has one, else the view-based guess of heuristics.py
            self._estimator = (self.settings.evaluation == "provisional"
                               and sim.game.provisional_scores(sim.state) is not None)
        return self._estimator or sim.game.spec.name in heuristics.SCORE_ESTIMATES

    def _estimate(self, sim: Simulation) -> list[float]:
        if self._estimator:
            scores = sim.game.provisional_scores(sim.state)
        else:
            scores = heuristics.score_estimate(sim)
        assert scores is not None
        return scores

    def _result(self, iterations: int, seconds: float) -> SearchResult:
        visits: dict[Any, int] = {}
        values: dict[Any, float] = {}
        for (seat, m), child in self.root.children.items():
            if seat == self.seat and m in self.legal:
                visits[m] = visits.get(m, 0) + child.visits
                values[m] = child.total / child.visits if child.visits else 0.0
        order = {m: i for i, m in enumerate(self.legal)}
        prior_node = self.root.children.get((self.seat, self.prior))
        if self.beyond and self.prior in order:
            move = self.prior
        elif self.settings.paired and prior_node is not None:
            move = self._paired_choice(prior_node)
        else:
            # most visited (the prior's move with its virtual visits), then best value, then
            # the decision's order (deterministic)
            bonus = self.settings.prior_weight * iterations
            move = max(self.legal, key=lambda m: (
                visits.get(m, 0) + (bonus if m == self.prior else 0), values.get(m, 0.0),
                -order[m]))
        return SearchResult(move, visits, values, iterations, seconds,
                            self.remaining if self.beyond else 0)

    def _paired_choice(self, prior_node: Node) -> Any:
        """A paired search's move: the root move whose rewards beat the prior's by the most on
        the worlds both were played in (at least two), if by more than ``prior_margin`` on
        average; otherwise the prior's move."""
        base = self._paired.get(prior_node, [])
        best, best_gain = self.prior, self.settings.prior_margin
        for m in self.legal:
            node = self.root.children.get((self.seat, m))
            if node is None or node is prior_node:
                continue
            mine = self._paired.get(node, [])
            k = min(len(mine), len(base))
            if k < 2:
                continue
            gain = sum(a - b for a, b in zip(mine[:k], base[:k], strict=True)) / k
            if gain > best_gain:
                best, best_gain = m, gain
        return best


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for one search, back on after (if it was on).

    A rollout allocates many short-lived containers (clones, views, the greedy bot's tables) and
    the caches of encodings grow beside them, so the collector kept walking the long-lived heap:
    in Goa a fifth of a strong search's CPU (docs/research/search-bot.md, *Speed*). Reference
    counting still frees everything acyclic at once; cycles made during one search wait for the
    next collection after it. It changes no choice. Process-wide, as the switch is: a search that
    starts with it off (another thread's search) leaves it to the one that turned it off."""
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def from_views(game: str, seat: int, view: Message | bytes, seat_count: int,
               history: Sequence[Event] = (), options: Mapping[str, Any] | None = None
               ) -> Determinizer:
    """The determinizer a bot uses: the game's sampler on ``seat``'s view and the public
    events so far, nothing else."""
    if isinstance(view, bytes | bytearray):  # as a Decision carries it: parse it once
        message = registry.get(game).view_message()
        message.ParseFromString(bytes(view))
        view = message
    frozen_history = list(history)
    # what every draw shares is derived once per decision, not once per iteration
    g = registry.get(game)
    parsed = g.spec.parse_options(options)
    sheet = g.default_components(parsed)
    # the game's sampler on these views (Game.sampler: what is on the table read once)
    sample = g.sampler({seat: view}, frozen_history, parsed, seat_count, sheet)

    def draw(rng: Rng) -> Simulation:
        return Simulation(g, sample(rng), parsed, sheet)

    return draw


def search(determinize: Determinizer, seat: int, legal: Sequence[Any], seed: int,
           settings: Settings | None = None, prior: Any = None) -> SearchResult:
    """Search one decision: ``Search(determinize, seat, legal, settings, prior).run(seed)``."""
    return Search(determinize, seat, legal, settings, prior).run(seed)


__all__ = [
    "EVALUATIONS",
    "EXPLORATION",
    "FAST",
    "MARGIN_WEIGHT",
    "PROFILES",
    "ROLLOUTS",
    "STRONG",
    "Budget",
    "Determinizer",
    "Search",
    "SearchResult",
    "Settings",
    "cyclic_gc_paused",
    "estimate_rewards",
    "from_views",
    "rewards",
    "search",
]
