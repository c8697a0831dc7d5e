"""``python -m streameval``: the same command line as the ``streameval`` console script."""

from .cli import console

if __name__ == "__main__":
    console()
