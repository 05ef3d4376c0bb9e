"""``privopt notions`` and ``privopt solvers``: what privopt designs for, and with what."""

from __future__ import annotations

import argparse

from ._output import _print_json


def cmd_notions(args: argparse.Namespace) -> int:
    """``privopt notions``: list the privacy notions.

    Parameters
    ----------
    args : argparse.Namespace
        Only ``--json`` is read (a JSON array instead of the listing).

    Returns
    -------
    int
        0: the listing cannot fail.
    """
    from privopt.notions import NOTIONS, notion_names

    rows = []
    for name in notion_names():
        notion = NOTIONS[name]
        aliases = [k for k, v in NOTIONS.items() if v is notion and k != name]
        rows.append(
            {
                "name": name,
                "aliases": aliases,
                "convexity": notion.convexity,
                "uses_neighbors": notion.uses_neighbors,
                "source": notion.source,
                "options": {o.name: o.description for o in notion.options},
            }
        )
    if args.json:
        _print_json(rows)
    else:
        for r in rows:
            alias = f" (alias {', '.join(r['aliases'])})" if r["aliases"] else ""
            print(f"{r['name']:<26}{r['convexity']:<18}{r['source']}{alias}")
            for key, text in r["options"].items():
                print(f"{'':<4}[privacy] {key}: {text}")
        print(
            "\nnot designable (non-convex; audited by privopt audit with delta): "
            "pml_tail, eml, probabilistic_dp, persuasive_privacy"
        )
    return 0


def cmd_solvers(args: argparse.Namespace) -> int:
    """``privopt solvers``: list the solvers and fast paths.

    Parameters
    ----------
    args : argparse.Namespace
        ``--json`` (a JSON array instead of the table).

    Returns
    -------
    int
        The exit code, always 0.
    """
    from privopt.methods import METHODS, method_names
    from privopt.solve.method_notions import method_notions, notions_text

    solves = method_notions()
    rows = [
        {
            "name": name,
            "family": METHODS[name].family,
            "description": METHODS[name].description,
            "notions": solves.get(name, {}),
        }
        for name in method_names()
    ]
    if args.json:
        _print_json(rows)
    else:
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            print(f"{r['name']:<{width}}  {r['description']}")
            print(f"{'':<{width}}  solves: {notions_text(r['notions'])}")
        print("\nNames are matched case-insensitively; privopt picks methods itself when none is")
        print("named, and falls back to the next one when a method fails or cannot certify.")
    return 0
