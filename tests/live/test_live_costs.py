"""Time and tokens per turn of a live debate (clearside/live/costs.py): the rows, the summary
with its time-to-first-token spread, the Markdown export's section, and the Timeline page's table and chart."""

from __future__ import annotations

import pytest
from test_app_timeline import open_timeline, run_debate

from clearside.live import costs
from clearside.live.exchange import import_live
from clearside.live.export import to_markdown
from clearside.store import open_store


def timed(transcript, figures):
    """``transcript`` with each turn given (seconds, first-token seconds, tokens) from ``figures``, in order."""
    for turn, (seconds, first, tokens) in zip(transcript.turns, figures, strict=False):
        turn.seconds, turn.first_token_seconds, turn.completion_tokens = seconds, first, tokens
    return transcript


def test_rows_and_summary_give_each_turns_time_and_the_first_token_spread():
    transcript = run_debate(turns=4)
    timed(transcript, [(4.0, 0.5, 100), (2.0, 1.5, 50), (0.0, 0.0, 0), (3.0, 4.0, 60)])
    rows = costs.rows(transcript)
    assert [r["turn"] for r in rows] == [t.turn for t in transcript.turns]
    assert rows[0] == {"turn": 1, "speaker": rows[0]["speaker"], "seconds": 4.0, "first_token_seconds": 0.5,
                       "completion_tokens": 100, "tokens_per_second": 25.0}
    assert rows[2]["tokens_per_second"] is None, "a turn with no recorded time has no rate"
    facts = costs.summary(transcript)
    assert facts == {"turns": 4, "timed_turns": 3, "seconds": 9.0, "completion_tokens": 210,
                     "first_token_p50": 1.5, "first_token_p90": 4.0, "first_token_max": 4.0}
    assert costs.sentence(facts) == ("9.0 s of model time over 3 turns, 210 tokens; time to first token: median "
                                     "1.5 s, 90th percentile 4.0 s, longest 4.0 s.")


@pytest.mark.parametrize(("values", "share", "expected"), [([], 0.5, None), ([3.0], 0.9, 3.0),
                                                           ([1.0, 2.0, 3.0, 4.0], 0.5, 2.0),
                                                           ([5.0, 1.0, 4.0, 2.0, 3.0], 0.9, 5.0)])
def test_percentile_is_the_nearest_rank(values, share, expected):
    assert costs.percentile(values, share) == expected


def test_the_markdown_export_has_a_time_and_tokens_table_only_when_turns_were_timed():
    transcript = timed(run_debate(turns=2), [(2.5, 0.0, 40), (1.5, 0.0, 30)])
    text = to_markdown(transcript)
    assert "## Time and tokens" in text and "no turn recorded its time to first token" in text
    assert "| Turn | Speaker | Time (s) | First token (s) | Tokens | Tokens/s |" in text
    assert "| 1 | " in text and "| 2.5 | 0.0 | 40 | 16.0 |" in text
    untimed = timed(run_debate(turns=1), [(0.0, 0.0, 0)])
    assert "## Time and tokens" not in to_markdown(untimed)


def test_the_timeline_shows_time_and_tokens_per_turn_as_a_table_and_a_chart():
    transcript = timed(run_debate(turns=3), [(2.0, 0.4, 30), (1.0, 0.2, 20), (3.0, 0.9, 45)])
    data = transcript.model_dump(mode="json")
    data["id"] = "timed-costs-1"  # the same debate with recorded times, saved as an import is
    imported = import_live(open_store(), data, "a test")
    at = open_timeline(imported.id)
    [expander] = [e for e in at.expander if e.label == "Time and tokens per turn"]
    [table] = expander.dataframe
    assert list(table.value.columns) == list(costs.COLUMNS.values()) and len(table.value) == 3
    assert list(table.value["Turn"]) == [1, 2, 3]
    assert expander.get("plotly_chart"), "the chart of time per turn"
    assert list(table.value["Time (s)"]) == [2.0, 1.0, 3.0]
    assert expander.caption[0].value == ("6\\.0 s of model time over 3 turns, 95 tokens; time to first token\\: "
                                         "median 0\\.4 s, 90th percentile 0\\.9 s, longest 0\\.9 s\\.")
