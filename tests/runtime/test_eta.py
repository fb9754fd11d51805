"""How long work takes here: the time a job has run, and the estimate from the stages' history (runtime/eta.py)."""

from __future__ import annotations

from clearside.runtime import eta


def test_a_clock_reads_minutes_and_seconds_and_hours_past_one():
    assert [eta.clock(s) for s in (0, 4.4, 62, 725, 3729, -3)] == ["0:00", "0:04", "1:02", "12:05", "1:02:09", "0:00"]


def test_the_history_is_each_stages_median_over_the_jobs_that_ran_it():
    past = eta.history([{"orchestrator": 3, "pro": 20, "con": 22, "moderator": 30},
                        {"orchestrator": 5, "pro": 40, "con": 18, "moderator": 10},
                        {"pro": 30, "con": 20, "moderator": 20},  # finished in parts: its orchestrator ran before
                        {}])
    assert past.count == 3 and dict(past.stages) == {"orchestrator": 4, "pro": 30, "con": 20, "moderator": 20}
    assert past.total == 74
    assert eta.history([]) is None and eta.history([{}, {"pro": 0.0}]) is None, "no time measured: no history"


def test_what_is_left_is_at_least_the_stages_not_begun_and_at_least_the_usual_total_less_the_time_gone():
    past = eta.History({"orchestrator": 4, "pro": 30, "con": 20, "moderator": 20}, 5)
    assert past.left(10, ["pro", "con", "moderator"]) == 70  # the stages to come
    assert past.left(10, ["moderator"]) == 64  # the usual total less the time gone
    assert past.left(100, []) == 0


def test_a_running_line_says_how_long_it_has_run_and_about_how_long_is_left():
    past = eta.History({"orchestrator": 4, "pro": 30, "con": 20, "moderator": 20}, 7)
    assert eta.running_line(42, past, ["moderator"]) == (
        "Running for 0:42 · about 1:14 in all, about 0:32 left (the median of the last 7 debates with this model "
        "here)")
    assert eta.running_line(130, past, []).startswith("Running for 2:10 · longer than usual: about 1:14 in all")
    assert eta.running_line(5, None, ["pro"], verb="Queued") == (
        "Queued for 0:05 · no debate with this model has finished here yet, so no estimate")


def test_a_batch_line_counts_its_debates_in_rounds_of_those_run_at_once():
    past = eta.History({"pro": 30, "con": 30}, 1)
    assert eta.batch_line(3, past) == ("3 debates: about 3:00 in all here (a debate takes about 1:00, the median "
                                       "of the last 1 debate with this model here)")
    assert eta.batch_line(5, past, concurrency=2).startswith("5 debates, 2 at a time: about 3:00 in all here")
    assert eta.batch_line(5, past, concurrency=2, done=3, elapsed=200).startswith(
        "Running for 3:20 · 5 debates, 2 at a time: about 1:00 left")
    assert eta.batch_line(1, None) == "1 debate: no debate with this model has finished here yet, so no estimate"
