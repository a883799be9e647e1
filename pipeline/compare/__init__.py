"""compare: paired statistics of every variant against its reference, verdicts, gates, report, plots."""
