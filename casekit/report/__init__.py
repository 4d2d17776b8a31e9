"""Reports over verdict records: rates, failure stages, sensitivity, pass@k, plots, HTML."""
