from actors.common.figures import FIGURES, brief_of, label_of, labelled
from actors.env.report import format_metrics_table


def test_every_figure_has_a_label_and_a_unique_compact_label():
    briefs = [figure.brief for figure in FIGURES.values()]
    assert all(figure.label for figure in FIGURES.values())
    assert len(set(briefs)) == len(briefs)


def test_an_unlisted_key_reads_as_it_is_spelled():
    assert label_of("no_such_figure") == "no_such_figure" and brief_of("no_such_figure") == "no_such_figure"
    assert labelled([("query_rate", 0.5), ("elapsed_secs", 1.0)]) == [("LLM query rate", 0.5), ("elapsed_secs", 1.0)]


def test_the_report_reads_its_labels_and_order_from_the_registry():
    table = format_metrics_table({"late_steps": 2.0, "net_pnl_usd": 10.0, "zeta": 1.0})
    rows = [line.split(" | ")[0].removeprefix("| ") for line in table.splitlines()[2:]]
    assert rows == [label_of("net_pnl_usd"), label_of("late_steps"), "zeta"]


def test_the_jobs_summaries_and_progress_lines_show_only_registered_figures():
    from actors.jobs.ablation import ABLATION_COLUMNS
    from actors.jobs.progress import ProgressView
    from actors.jobs.train import ENV_FIGURES, SUMMARY_KEYS

    shown = {*ABLATION_COLUMNS, *ProgressView.SHOWN_FIGURES, *SUMMARY_KEYS, *ENV_FIGURES}
    assert shown - set(FIGURES) == set()
