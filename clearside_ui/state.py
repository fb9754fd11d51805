"""Every session-state key of the dashboard, in one place: one class per page, panel or the app around the pages,
its keys beginning with its prefix (``app_``, ``sidebar_``, ``debate_`` with its panels' ``challenge_``,
``sources_``, ``personas_`` and ``remap_``, ``live_``, ``timeline_``, ``persp_``, ``lib_``, ``cmp_``, ``rg_``).
A widget's key is a session key too (Streamlit keeps the widget's value under it). A leaf: it imports nothing.

A few keys keep an older name without their page's prefix: tests outside the dashboard's own set or read them
(tests/app_kit.py, tests/static/test_strategy.py, test_personas.py, test_remap.py, tests/store/test_db_faults.py).
They are marked ``# kept:``; renaming one is a change here and in those tests.
"""

from __future__ import annotations


class App:
    """Around every page (``app_``)."""

    OWNER_KEY = "app_owner_key"  # this browser's random key (clearside_ui/owner.py), also in its cookie
    OWNER_COOKIE_WRITTEN = "app_owner_cookie_written"
    OWNED = "app_owned"  # the debates this session made, copied or resumed
    SCROLLED = "app_scrolled"  # the events already brought into view once (clearside_ui/scroll.py)
    FOLLOWERS = "app_followers"  # progress-row followers of jobs other processes run, by job id
    RATE_LIMITS = "app_rate_limits"  # this session's rate limits (clearside_ui/rate.py)
    PAGE = "app_page"  # the page of the last full run, and whether that run arrived on it (clearside_ui/links.py)
    LEFT = "app_left"  # by link parameter: what the page showed before the user left it (clearside_ui/links.py)

    @staticmethod
    def poll_pace(name: str) -> str:
        """The pace of the followed view ``name`` (clearside_ui/view.py)."""
        return f"app_poll_pace_{name}"

    @staticmethod
    def poll_repace(name: str) -> str:
        """Set when the followed view ``name`` asked for a page run to take its new pace."""
        return f"app_poll_repace_{name}"

    @staticmethod
    def poll_cache(name: str) -> str:
        """A followed view's costly text, kept per fingerprint."""
        return f"app_poll_cache_{name}"


class Sidebar:
    """The sidebar's model settings, on every page (``sidebar_``)."""

    PROVIDER = "provider_name"  # kept: tests/static/test_strategy.py
    OVERRIDE = "provider_override"  # kept: a test's provider, used instead of the sidebar's (tests/app_kit.py)
    TEMPERATURE = "sidebar_temperature"
    STRATEGY = "strategy"  # kept: tests/static/test_strategy.py
    SMALL = "small_model"  # kept: tests/static/test_strategy.py
    CONCURRENCY = "sidebar_concurrency"
    TEST_CONNECTION = "sidebar_test_connection"
    LOOK_AGAIN = "sidebar_look_again"
    DETECTED = "sidebar_detected_servers"  # the model servers found running, probed once per session

    @staticmethod
    def field(provider: str, setting: str) -> str:
        """A provider's setting, ``ollama_host`` (kept: tests/static/test_strategy.py sets ``ollama_model``)."""
        return f"{provider}_{setting}"

    @staticmethod
    def use(provider: str) -> str:
        """The **Use it** button of a server of ``provider`` found running."""
        return f"sidebar_use_{provider}"


class Debate:
    """The Debate page (``debate_``)."""

    ID = "debate_id"  # the debate shown (also read by the Live debate page: run it live)
    QUESTION = "question"  # kept: tests/app_kit.py
    CONTEXT = "debate_"  # the context boxes: debate_geography, debate_timeframe, debate_domain
    INPUT_ERROR = "debate_input_error"
    DOCUMENT = "document"  # kept (tests/static): the finished debate shown, also offered by the Live debate page
    GENERATE = "generate"  # kept: tests/app_kit.py
    NEW = "debate_new"
    EXAMPLE = "debate_example"
    EXAMPLE_BACK = "debate_example_back"
    RETRY = "retry"  # kept: tests/static/test_personas.py
    RESUME_SAVED = "debate_resume_saved"
    COPY_TO_EDIT = "debate_copy_to_edit"
    COPIED = "debate_copied"  # the editable copy just made of a shared debate: the page says the user is on it
    CANCEL = "debate_cancel"
    CANCEL_FOLLOWED = "debate_cancel_followed"

    @staticmethod
    def context(name: str) -> str:
        """A context box: ``geography``, ``timeframe`` or ``domain``."""
        return f"{Debate.CONTEXT}{name}"

    @staticmethod
    def export(fmt: str) -> str:
        return f"debate_export_{fmt}"


class Challenge:
    """The Debate page's challenge panel (``challenge_``)."""

    JOB = "challenge_job"
    ERROR = "challenge_error"
    LANDED = "challenge_landed"  # (action, number) of the answer that just landed
    CANCELLED = "challenge_cancelled"  # (debate id, action) of the challenge just cancelled
    CHOICE = "challenge_choice"
    TYPED = "challenge_typed"
    CANCEL = "challenge_cancel"

    @staticmethod
    def action(action: str, element: int = -1) -> str:
        """The button asking ``action`` in the panel (``challenge_question_assumption``), or beside the document's
        ``element``-th element (``challenge_question_assumption_3``; ``challenge_element_3``: its popover)."""
        return f"challenge_{action}" + (f"_{element}" if element >= 0 else "")


class Sources:
    """The Debate page's sources (``sources_``)."""

    FILES = "sources_files"
    PASTE = "sources_paste"
    CITE = "sources_cite"
    ERROR = "sources_error"


class Personas:
    """The Debate page's personas (``personas``)."""

    PICKED = "personas"  # kept: tests/static/test_personas.py
    CUSTOM = "custom_personas"  # kept: tests/static/test_personas.py
    PANEL = "personas_panel"  # (debate id, the panel as last read from the store)


class Explore:
    """The Debate page's explore panel and its re-maps (``remap_``; weights and stances keep their names:
    tests/static/test_remap.py)."""

    JOB = "remap_job"
    ERROR = "remap_error"
    LANDED = "remap_landed"  # (debate id, version) of the re-map that just landed
    CANCELLED = "remap_cancelled"  # the debate whose re-map was just cancelled
    VERSION = "remap_version"
    DIFFS = "remap_diffs"  # each version's document and its changes, by (debate id, version)
    START = "remap_start"
    CANCEL = "remap_cancel"

    @staticmethod
    def weight(category: str) -> str:
        return f"weight_{category}"

    @staticmethod
    def stance(scope: str, side: str, index: int) -> str:
        return f"stance_{scope}_{side}_{index}"


class Live:
    """The Live debate page (``live_``)."""

    JOB = "live_job"  # the live debate shown (its id)
    ERROR = "live_error"
    QUESTION = "live_question"
    CONTEXT = "live_"  # the context boxes: live_geography, live_timeframe, live_domain
    WPM = "live_wpm"
    STEP_START = "live_step_start"
    START = "live_start"
    FROM_DOCUMENT = "live_from_document"
    NEW = "live_new"
    RETRY = "live_retry"
    RESUME = "live_resume"
    RESUME_SAVED = "live_resume_saved"
    PAUSE = "live_pause"
    NEXT = "live_next"
    NOTICE = "live_iv_notice"  # what the last intervention sent says, once
    FILE_COUNT = "live_iv_file_n"  # injections with a file so far: the uploader's key changes after each
    NOW = "live_now"  # the panel of the turn in flight
    EXPORTS = "live_"  # the prefix of the export buttons' keys
    COSTS_CHART = "live_costs_chart"

    @staticmethod
    def intervention(kind: str) -> str:
        """The text box of an intervention of ``kind``."""
        return f"live_iv_{kind}"

    @staticmethod
    def recipient(kind: str) -> str:
        return f"live_iv_{kind}_to"

    @staticmethod
    def intervention_error(kind: str) -> str:
        return f"live_iv_error_{kind}"

    @staticmethod
    def send(kind: str) -> str:
        return f"live_do_{kind}"

    @staticmethod
    def evidence_file(count: int) -> str:
        return f"live_iv_file_{count}"

    @staticmethod
    def asked(job_id: str) -> str:
        """The interventions asked in this session of the debate ``job_id``, by id."""
        return f"live_asked_{job_id}"

    @staticmethod
    def step_mode(job_id: str) -> str:
        return f"live_step_{job_id}"

    @staticmethod
    def resume_one(debate_id: str) -> str:
        return f"live_resume_{debate_id}"


class Timeline:
    """The Timeline page (``timeline_``)."""

    PICK = "timeline_pick"
    FOR = "timeline_for"  # the debate the phase and turn below belong to
    PHASE = "timeline_phase"
    TURN = "timeline_turn"
    PREVIOUS = "timeline_prev"
    NEXT = "timeline_next"
    REFRESH = "timeline_refresh"
    WHOLE = "timeline_whole"
    EXPORTS = "timeline_"  # the prefix of the export buttons' keys
    TURNS = "timeline_"  # the prefix of the replayed turn's container
    ALL_TURNS = "timeline_all_"  # the prefix of the whole transcript's turns' containers


class Perspectives:
    """The Perspectives page (``persp_``)."""

    JOB = "persp_job"  # the session shown (its id)
    ERROR = "persp_error"
    SAVED_ERROR = "persp_saved_error"
    QUESTION = "persp_question"
    ROUNDS = "persp_rounds"
    OBSERVE = "persp_observe"
    START = "persp_start"
    CONTINUE = "persp_continue"
    RETRY = "persp_retry"
    RESUME = "persp_resume"
    CANCEL = "persp_cancel"
    NEW = "persp_new"
    EXPORT = "persp_export"
    GATE = "persp_gate"
    STREAMING = "persp_streaming"
    SYNTHESIS = "persp_synthesis"

    @staticmethod
    def answer(session_id: str, number: int) -> str:
        return f"persp_ans_{session_id}_{number}"

    @staticmethod
    def skip(session_id: str, number: int) -> str:  # the Skip toggle of a clarifying question that makes no sense
        return f"persp_skip_{session_id}_{number}"

    @staticmethod
    def gate_error(session_id: str) -> str:
        return f"persp_gate_error_{session_id}"

    @staticmethod
    def gate_blank(session_id: str) -> str:  # the numbers of the questions the last Continue found unanswered
        return f"persp_gate_blank_{session_id}"

    @staticmethod
    def round_output(number: int, agent: str) -> str:
        return f"persp_r{number}{agent}"

    @staticmethod
    def show_rounds(key: str) -> str:
        return f"persp_show_rounds_{key}"


class Library:
    """The Library page (``lib_``)."""

    SEARCH = "lib_search"
    KIND = "lib_kind"
    PROVIDER = "lib_provider"
    MODEL = "lib_model"
    STATUS = "lib_status"
    DATES = "lib_dates"
    ORIGIN = "lib_origin"
    OFFSET = "lib_offset"
    TABLE = "lib_table"
    PICK = "lib_pick"
    PIN = "lib_pin"  # a copy just made, kept in the picker while a filter hides it
    CONFIRM = "lib_confirm"  # the debate whose delete awaits confirmation
    TITLE = "lib_title"
    TITLE_FOR = "lib_title_for"
    NOTICE = "lib_notice"
    ERROR = "lib_error"
    GOTO = "lib_goto"  # a page switch an action asked for: (page, query)
    CLEAR = "lib_clear"
    PREVIOUS = "lib_prev"
    NEXT = "lib_next"
    OPEN = "lib_open"
    RESUME = "lib_resume"
    WATCH = "lib_watch"
    RENAME = "lib_rename"
    DUPLICATE = "lib_duplicate"
    RERUN = "lib_rerun"
    DELETE = "lib_delete"
    DELETE_CONFIRM = "lib_delete_confirm"
    DELETE_CANCEL = "lib_delete_cancel"

    @staticmethod
    def facet(name: str) -> str:
        """A filter on a facet: ``provider`` or ``model``."""
        return f"lib_{name}"


class Compare:
    """The Compare models page (``cmp_``)."""

    ROWS = "cmp_rows"
    NEXT_ROW = "cmp_next"
    QUESTION = "cmp_question"
    ERROR = "cmp_error"
    BATCH = "cmp_batch"  # the comparison shown (its batch id)
    LOADED = "cmp_loaded"  # the report and documents read from the store, by batch and status
    FULL = "cmp_full"
    PICK = "cmp_pick"
    ADD = "cmp_add"
    START = "cmp_start"
    NEW = "cmp_new"
    CANCEL = "cmp_cancel"
    OPEN = "cmp_open"
    COSTS = "cmp_costs"
    OVERRIDE = "cmp_providers_override"  # a test's providers by spec, used instead of building them

    @staticmethod
    def row(field: str, row: int) -> str:
        """A model row's widget (``model``, ``temp``, ``strategy`` or ``remove``) in row ``row``."""
        return f"cmp_{field}_{row}"


class Regression:
    """The Regression page (``rg_``)."""

    SUITE = "rg_suite"
    BATCH = "rg_batch"
    PENDING = "rg_pending"  # a batch just started, picked once it has runs
    LINKED = "rg_linked"  # the ``?batch=`` link last followed
    LINK_ERROR = "rg_link_error"
    RUN = "rg_run"
    RUNS = "rg_runs"
    CONCURRENCY = "rg_concurrency"
    SWAP_CHECK = "rg_swap_check"
    START = "rg_start"
    START_ERROR = "rg_start_error"
    JOB = "rg_job"
    CANCEL = "rg_cancel"
    DISMISS = "rg_dismiss"
    CONFIRM = "rg_confirm"  # the batch whose blessing awaits confirmation
    BLESS = "rg_bless"
    BLESS_NOTE = "rg_bless_note"
    BLESS_CONFIRM = "rg_bless_confirm"
    BLESS_CANCEL = "rg_bless_cancel"
    BLESS_WARNINGS = "rg_bless_warnings"
    NOTICE = "rg_notice"
    ERROR = "rg_error"
    METRIC = "rg_metric"
    BATCHES = "rg_batches"
    DELTAS = "rg_deltas"
    COSTS = "rg_costs"
    COSTS_SHOW_CHART = "rg_costs_show_chart"
    COSTS_CHART = "rg_costs_chart"
    COSTS_RUNS = "rg_costs_runs"
    TREND = "rg_trend"
    COMPARE_A = "rg_cmp_a"
    COMPARE_B = "rg_cmp_b"
    COMPARE_ALLOW = "rg_cmp_allow"
    PAIRED = "rg_paired"
    PAIRED_SHOW_CHART = "rg_paired_show_chart"
    PAIRED_CHART = "rg_paired_chart"
    PAIRED_SHARE = "rg_paired_share"
    VALUE = "rg_value"  # "Did the debate add anything?": its widgets' keys begin with this (clearside_ui/value_view.py)
    HISTORY = "rg_history"
    LAYOUT = "rg_layout"

    @staticmethod
    def finished(job_id: str) -> str:
        return f"rg_finished_{job_id}"

    @staticmethod
    def result(job_id: str) -> str:
        return f"rg_result_{job_id}"

    @staticmethod
    def share(job_id: str) -> str:
        return f"rg_share_{job_id}"

    @staticmethod
    def headline(run_id: str) -> str:
        return f"rg_headline_{run_id}"

    @staticmethod
    def flip(number: int) -> str:
        return f"rg_flip_{number}"
