"""Sources (clearside/sources): time to read 50 pages of text and a 20-page PDF, split them, build the index, and
retrieval latency per query.

The material is generated here (seeded): 50 pages of about 3,000 characters of plain text, and a 20-page PDF of
about 2,500 characters a page written with fpdf2. The index is built twice: with MiniLM (the model loaded
first, its load timed apart) and lexical (``CLEARSIDE_SEMANTIC_CHECKS=0``'s fallback). Retrieval latency is the
median of 20 queries, each ``Index.top(query, 8)``.

Run from the repository root:  python bench/sources.py   (writes bench/results/sources.json; about 30 s)
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fpdf import FPDF  # noqa: E402

from clearside import checks, embed  # noqa: E402
from clearside.sources import Index, read_source, split  # noqa: E402

SUBJECTS = ["The council", "The levee", "The new bus line", "Local rents", "The hospital", "The school board",
            "Tourism", "The river authority", "Small businesses", "The regional budget", "Water quality",
            "The housing agency"]
VERBS = ["raised", "cut", "reviewed", "doubled", "delayed", "funded", "measured", "reported", "questioned",
         "approved"]
OBJECTS = ["its spending on flood defences", "the cost of repairs", "waiting times", "the number of new flats",
           "emissions from diesel buses", "the price of water", "the share of local jobs", "the maintenance plan",
           "the forecast for the next decade", "the survey of residents"]
TAILS = ["by twelve percent in 2021", "after the spring flood", "despite objections from residents",
         "for the third year running", "according to the annual report", "at a cost of 4.2 million euros",
         "within the limits set by the state", "before the election"]
QUERIES = [
    "How much did the flood defences cost?", "Did waiting times at the hospital fall?",
    "What happened to rents in the old town?", "Were diesel bus emissions reduced?",
    "Who approved the regional budget?", "Did the survey of residents change the plan?",
    "How did tourism affect small businesses?", "Was the water price raised?",
    "What did the annual report say about repairs?", "Did the school board delay the plan?",
    "How many new flats were built?", "What did the river authority measure?",
    "Is the maintenance plan funded?", "What is the forecast for the next decade?",
    "Did residents object to the levee?", "What share of jobs is local?",
    "Did the council double its spending?", "What limits did the state set?",
    "What happened after the spring flood?", "Were repairs delayed before the election?",
]


def sentence(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}."


def page(rng: random.Random, chars: int) -> str:
    paragraphs, size = [], 0
    while size < chars:
        paragraph = " ".join(sentence(rng) for _ in range(rng.randint(3, 7)))
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)


def pdf_bytes(rng: random.Random, pages: int, chars: int) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for _ in range(pages):
        pdf.add_page()
        pdf.multi_cell(0, 5, page(rng, chars))
    return bytes(pdf.output())


def timed(fn, *args, **kwargs):
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - started


def main() -> None:
    load_before = os.getloadavg()
    rng = random.Random(17)
    text_data = "\n\n".join(page(rng, 3000) for _ in range(50)).encode()
    pdf_data = pdf_bytes(rng, 20, 2500)

    text_source, text_read = timed(read_source, "fifty-pages.txt", text_data)
    pdf_source, pdf_read = timed(read_source, "twenty-pages.pdf", pdf_data)
    text_passages, text_split = timed(split, text_source)
    pdf_passages, pdf_split = timed(split, pdf_source)
    passages = text_passages + pdf_passages

    _, model_load = timed(embed.encode, ["warm"])
    semantic, semantic_build = timed(Index, passages, checks.Embeddings(enabled=True))
    lexical, lexical_build = timed(Index, passages, checks.Embeddings(enabled=False))
    latency = {}
    for name, index in (("semantic", semantic), ("lexical", lexical)):
        index.top(QUERIES[0], 8)
        latency[name] = statistics.median(timed(index.top, q, 8)[1] for q in QUERIES)
    load_after = os.getloadavg()

    rows = [
        ("read 50 text pages", f"{len(text_data):,} B -> {len(text_source.text):,} chars", text_read),
        ("read 20-page PDF", f"{len(pdf_data):,} B -> {len(pdf_source.text):,} chars", pdf_read),
        ("split text", f"{len(text_passages)} passages", text_split),
        ("split PDF", f"{len(pdf_passages)} passages", pdf_split),
        ("load MiniLM (once per process)", "", model_load),
        ("index, MiniLM", f"{len(passages)} passages", semantic_build),
        ("index, lexical", f"{len(passages)} passages", lexical_build),
        ("query, MiniLM (median of 20)", "top 8", latency["semantic"]),
        ("query, lexical (median of 20)", "top 8", latency["lexical"]),
    ]
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}  "
          f"({os.cpu_count()} cores)")
    print(f"{'step':32} {'size':34} {'seconds':>9}")
    for step, size, seconds in rows:
        print(f"{step:32} {size:34} {seconds:9.4f}")
    print(f"load average after:  {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")

    out = ROOT / "bench" / "results" / "sources.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "load_before": load_before, "load_after": load_after, "cores": os.cpu_count(),
        "text": {"bytes": len(text_data), "chars": len(text_source.text), "read_s": text_read,
                 "passages": len(text_passages), "split_s": text_split},
        "pdf": {"bytes": len(pdf_data), "pages": pdf_source.pages, "chars": len(pdf_source.text), "read_s": pdf_read,
                "passages": len(pdf_passages), "split_s": pdf_split},
        "model_load_s": model_load,
        "index_build_s": {"semantic": semantic_build, "lexical": lexical_build},
        "query_median_s": latency, "queries": len(QUERIES), "k": 8,
    }, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
