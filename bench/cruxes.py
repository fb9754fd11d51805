"""The crux thresholds (clearside/cruxes.py): precision, recall and F1 of "this item rests on this hinge".

Two labelled sets:

- the flagship reference debate: its 4 decision hinges against its 34 items (18 arguments, each as claim and
  explanation, and 16 assumptions), with the 19 dependencies below labelled by hand (GOLD);
- ArgKP dev (its arguments, key points and labels, ``--argkp DIR``): the labelled argument / key point pairs, a
  key point standing in for a hinge (an argument matches a key point when it rests on it), each argument compared
  with its topic's key points.

For each set and each measure (MiniLM cosine, or the lexical Jaccard the checks fall back to) it prints the rule
clearside.cruxes uses (at least a floor, and within a margin of the item's closest hinge) over a grid, and the
plain threshold rule for comparison.

Run from the repository root:  python bench/cruxes.py [--argkp DIR]   (writes bench/results/cruxes.json; about 30 s)
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clearside import cruxes, embed  # noqa: E402
from clearside.checks.text import jaccard  # noqa: E402
from clearside.quality import references  # noqa: E402

# the labels are not in the repository (clearside/quality/references/argkp holds the dev arguments and key points only):
# the full ArgKP release, e.g. https://github.com/IBM/KPA_2021_shared_task kpm_data, or --argkp DIR
ARGKP = Path("/work/shared/data/argkp")
# hinge index -> (side, kind, index) that rest on it, read by hand from the flagship's texts
GOLD = {
    0: {("pro", "arguments", 0), ("pro", "arguments", 1), ("pro", "arguments", 2), ("con", "arguments", 4),
        ("con", "arguments", 5), ("pro", "assumptions", 7), ("con", "assumptions", 4), ("con", "assumptions", 5)},
    1: {("pro", "arguments", 3), ("pro", "arguments", 4), ("pro", "assumptions", 2), ("pro", "assumptions", 3),
        ("con", "arguments", 5)},
    2: {("con", "arguments", 1), ("con", "arguments", 0), ("con", "assumptions", 1)},
    3: {("pro", "arguments", 7), ("pro", "arguments", 8), ("pro", "assumptions", 6)},
}
GRID = {"semantic": [(f, m) for f in (0.25, 0.30, 0.35, 0.40) for m in (0.0, 0.05, 0.1)],
        "lexical": [(f, m) for f in (0.05, 0.10, 0.15) for m in (0.0, 0.05)]}
PLAIN = {"semantic": [round(x, 2) for x in np.arange(0.20, 0.61, 0.01)],
         "lexical": [round(x, 2) for x in np.arange(0.02, 0.31, 0.01)]}


def _score(predicted: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    tp = int((predicted & gold).sum())
    return {"predicted": int(predicted.sum()), "true_positive": tp,
            "precision": round(tp / max(int(predicted.sum()), 1), 3), "recall": round(tp / int(gold.sum()), 3),
            "f1": round(2 * tp / (int(predicted.sum()) + int(gold.sum())), 3)}


def _cosines(rows: list[str], columns: list[str]) -> np.ndarray:
    vectors = embed.encode([*rows, *columns])
    return vectors[: len(rows)] @ vectors[len(rows):].T


def _measure(rows: list[str], columns: list[str], semantic: bool) -> np.ndarray:
    if semantic:
        return _cosines(rows, columns)
    return np.array([[jaccard(r, c) for c in columns] for r in rows])


def flagship(semantic: bool) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], int]:
    data = references.load("flagship").document
    items = [(side, kind, i, cruxes.argument_text(x) if kind == "arguments" else x) for side in ("pro", "con")
             for kind in ("arguments", "assumptions") for i, x in enumerate(data[side][kind])]
    hinges = data["moderator"]["decision_hinges"]
    matrix = _measure(hinges, [t for *_, t in items], semantic)
    gold = np.array([[(s, k, i) in GOLD[h] for s, k, i, _ in items] for h in range(len(hinges))])
    return [(matrix, gold, matrix.max(axis=0, keepdims=True))], int(gold.sum())


def argkp(semantic: bool, folder: Path) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], int]:
    def rows(name: str) -> list[dict[str, str]]:
        with (folder / name).open(encoding="utf-8") as f:
            return list(csv.DictReader(f))

    arguments = {r["arg_id"]: r for r in rows("arguments_dev.csv")}
    points = {r["key_point_id"]: r for r in rows("key_points_dev.csv")}
    labels = {(r["arg_id"], r["key_point_id"]): r["label"] == "1" for r in rows("labels_dev.csv")}
    out, positives = [], 0
    for topic in sorted({r["topic"] for r in points.values()}):
        kps = [k for k, r in points.items() if r["topic"] == topic]
        args = [a for a, r in arguments.items() if r["topic"] == topic]
        matrix = _measure([points[k]["key_point"] for k in kps], [arguments[a]["argument"] for a in args], semantic)
        labelled = np.array([[(a, k) in labels for a in args] for k in kps])
        gold = np.array([[labels.get((a, k), False) for a in args] for k in kps])
        positives += int(gold.sum())
        # only labelled pairs are scored; the closest key point is taken over all of the topic's
        out.append((np.where(labelled, matrix, -np.inf), gold, matrix.max(axis=0, keepdims=True)))
    return out, positives


def rule(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], floor: float, margin: float | None) -> dict:
    """The crux rule (``margin`` set) or a plain threshold (``margin`` None), scored on every part."""
    predicted = []
    for matrix, _, closest in parts:
        hit = matrix >= floor
        if margin is not None:
            hit &= matrix >= closest - margin - 1e-9
        predicted.append(hit.ravel())
    return _score(np.concatenate(predicted), np.concatenate([g.ravel() for _, g, _ in parts]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--argkp", type=Path, default=ARGKP, help=f"folder with ArgKP's *_dev.csv (default {ARGKP})")
    folder = parser.parse_args().argkp
    sets = [("flagship", flagship)]
    if (folder / "labels_dev.csv").exists():
        sets.append(("argkp-dev", lambda semantic: argkp(semantic, folder)))
    else:
        print(f"No {folder / 'labels_dev.csv'}: ArgKP dev skipped (give --argkp DIR)")
    results: dict[str, dict] = {}
    for semantic in (True, False):
        measure = "semantic" if semantic else "lexical"
        chosen = (cruxes.FLOOR, cruxes.MARGIN) if semantic else (cruxes.FLOOR_LEXICAL, cruxes.MARGIN_LEXICAL)
        for name, load in sets:
            parts, positives = load(semantic)
            grid = {f"floor {f:.2f} margin {m:.2f}": rule(parts, f, m) for f, m in GRID[measure]}
            plain = {f"threshold {f:.2f}": rule(parts, f, None) for f in PLAIN[measure]}
            picked = rule(parts, *chosen)
            results[f"{measure} {name}"] = {"positives": positives, "chosen": {"floor": chosen[0], "margin": chosen[1],
                                                                             **picked}, "grid": grid, "plain": plain}
            print(f"{measure:8} {name:9} floor {chosen[0]:.2f} margin {chosen[1]:.2f}: precision "
                  f"{picked['precision']:.2f} recall {picked['recall']:.2f} F1 {picked['f1']:.2f} "
                  f"({positives} labelled dependencies); best plain threshold F1 "
                  f"{max(p['f1'] for p in plain.values()):.2f}")
    out = ROOT / "bench" / "results" / "cruxes.json"
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"Wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
