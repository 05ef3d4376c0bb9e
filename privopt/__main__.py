"""``python -m privopt``: the command line (see :mod:`privopt.cli`), Ctrl-C safe from start-up."""

from privopt._entry import run

if __name__ == "__main__":
    run()
