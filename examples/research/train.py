"""Train a small agent on one game through the Gymnasium wrapper, with numpy only, and plot its
learning curve against random play (docs/research/environments.md, *Training example*).

The agent is a linear softmax policy over the action space, on the observation vector
normalised by running statistics, masked to the legal actions, trained by REINFORCE with a
running-mean baseline (the reward is the rank reward at the end of the match: +1 first ... -1
last). Every ``--eval-every`` episodes it plays ``--eval-games`` matches on a fixed set of seeds
against the same opponents; the plot shows its win rate (first place, shared or not) with a 95%
interval, and the win rate of a uniformly random policy on the same seeds.

    .venv/bin/python examples/research/train.py --game batavia --minutes 4
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "clients")]  # run from a checkout without installing

from referee_research.envs import single  # noqa: E402  (after the path set-up above)
from referee_research.envs.single import SingleSeatEnv  # noqa: E402


class LinearPolicy:
    """Softmax over ``W @ x + b`` on the legal actions, ``x`` the normalised observation."""

    def __init__(self, obs_size: int, actions: int, rng: np.random.Generator, lr: float):
        self.w = np.zeros((actions, obs_size), dtype=np.float32)
        self.b = np.zeros(actions, dtype=np.float32)
        self.lr = lr
        self.rng = rng
        self.count = 0  # running mean and variance of the observations (Welford)
        self.mean = np.zeros(obs_size, dtype=np.float64)
        self.m2 = np.zeros(obs_size, dtype=np.float64)

    def normalise(self, obs: np.ndarray, learn: bool) -> np.ndarray:
        if learn:
            self.count += 1
            delta = obs - self.mean
            self.mean += delta / self.count
            self.m2 += delta * (obs - self.mean)
        std = np.sqrt(self.m2 / max(self.count - 1, 1)) + 1e-3
        return np.clip((obs - self.mean) / std, -5, 5).astype(np.float32)

    def probabilities(self, x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal = np.flatnonzero(mask)
        logits = self.w[legal] @ x + self.b[legal]
        logits -= logits.max()
        p = np.exp(logits)
        return legal, p / p.sum()

    def act(self, obs: dict[str, np.ndarray], learn: bool) -> tuple[int, tuple]:
        x = self.normalise(obs["observation"], learn)
        legal, p = self.probabilities(x, obs["action_mask"])
        k = int(self.rng.choice(len(legal), p=p))
        return int(legal[k]), (x, legal, p, k)

    def update(self, steps: list[tuple], advantage: float) -> None:
        """One REINFORCE step: raise the log-probability of each action taken by
        ``advantage``, averaged over the episode's decisions."""
        scale = self.lr * advantage / max(len(steps), 1)
        for x, legal, p, k in steps:
            grad = -p
            grad[k] += 1.0
            self.w[legal] += scale * np.outer(grad, x)
            self.b[legal] += scale * grad


def play(env: SingleSeatEnv, seed: int, choose) -> float:
    obs, _ = env.reset(seed=seed)
    done = False
    reward = 0.0
    while not done:
        obs, reward, done, _, _ = env.step(choose(obs))
    return float(reward)


def evaluate(env: SingleSeatEnv, seeds: list[int], choose) -> float:
    """The win rate (first place) over matches on ``seeds``."""
    return sum(play(env, s, choose) == 1.0 for s in seeds) / len(seeds)


def interval(p: float, n: int) -> float:
    """Half-width of the normal 95% interval of a proportion."""
    return 1.96 * math.sqrt(max(p * (1 - p), 1e-9) / n)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="batavia")
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--opponents", default="random", help="random, greedy or an SDK bot")
    parser.add_argument("--minutes", type=float, default=4.0, help="training time budget")
    parser.add_argument("--episodes", type=int, default=0, help="stop after this many (0: none)")
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--eval-games", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "docs/research/learning-curve.png"))
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    env = single(args.game, args.seats, seat=0, opponents=args.opponents)
    space = env.observation_space["observation"]
    policy = LinearPolicy(space.shape[0], int(env.action_space.n), rng, args.lr)
    eval_seeds = [10_000_000 + k for k in range(args.eval_games)]

    def learned(obs):
        return policy.act(obs, learn=False)[0]

    def uniform(obs):
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))

    baseline_rate = evaluate(env, eval_seeds, uniform)
    curve = [(0, evaluate(env, eval_seeds, learned))]
    print(f"{args.game}: random policy wins {baseline_rate:.0%}; before training "
          f"{curve[0][1]:.0%}", flush=True)
    baseline = 0.0
    start = time.monotonic()
    episode = 0
    while time.monotonic() - start < args.minutes * 60 and (
            not args.episodes or episode < args.episodes):
        obs, _ = env.reset(seed=args.seed * 1_000_003 + episode)
        steps = []
        done = False
        reward = 0.0
        while not done:
            action, step = policy.act(obs, learn=True)
            steps.append(step)
            obs, reward, done, _, _ = env.step(action)
        policy.update(steps, reward - baseline)
        baseline += 0.02 * (reward - baseline)
        episode += 1
        if episode % args.eval_every == 0:
            curve.append((episode, evaluate(env, eval_seeds, learned)))
            print(f"episode {episode}: wins {curve[-1][1]:.0%} "
                  f"({time.monotonic() - start:.0f} s)", flush=True)
    if episode - curve[-1][0] >= max(args.eval_every // 2, 1):  # a last point, if far enough
        curve.append((episode, evaluate(env, eval_seeds, learned)))

    summary = {"game": args.game, "seats": args.seats, "opponents": args.opponents,
               "episodes": episode, "eval_games": args.eval_games,
               "random_win_rate": baseline_rate, "curve": curve}
    plot(summary, Path(args.out))
    print(json.dumps({k: v for k, v in summary.items() if k != "curve"}))
    print(f"final win rate {curve[-1][1]:.0%} after {episode} episodes; wrote {args.out}")
    return summary


def plot(summary: dict, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    episodes = np.array([e for e, _ in summary["curve"]])
    rates = np.array([r for _, r in summary["curve"]])
    n = summary["eval_games"]
    half = np.array([interval(r, n) for r in rates])
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(episodes, rates, marker="o", label="linear softmax policy (REINFORCE)")
    ax.fill_between(episodes, rates - half, rates + half, alpha=0.2, label="95% interval")
    ax.axhline(summary["random_win_rate"], color="grey", linestyle="--",
               label="uniformly random policy")
    ax.set_xlabel("training matches")
    ax.set_ylabel(f"win rate over {n} matches")
    ax.set_ylim(0, 1)
    ax.set_title(f"{summary['game']}, {summary['seats']} seats, learner in seat 0 against "
                 f"{summary['opponents']} opponents")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)


if __name__ == "__main__":
    main()
