"""``python -m privopt.cli``: the command line, as ``python -m privopt`` (Ctrl-C safe from
start-up)."""

from privopt._entry import run

if __name__ == "__main__":
    run()
