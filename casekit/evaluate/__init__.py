"""The evaluator: isolated execution of untrusted submissions, staged gates, metrics, verdicts."""
