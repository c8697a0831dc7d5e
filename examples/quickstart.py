"""Stream a small clustering through the full suite and print every metric."""

import random

import streameval as se


def main(n: int = 2000, seed: int = 0) -> dict:
    rng = random.Random(seed)
    ev = se.Evaluator()
    for _ in range(n):
        truth = rng.randrange(50)
        pred = truth if rng.random() < 0.8 else rng.randrange(60)
        ev.update(truth, pred)
    return ev.get()


if __name__ == "__main__":
    for name, value in main().items():
        print(f"{name:40s} {value:.6f}")
