"""One module per kind of problem; each registers the families it solves."""
