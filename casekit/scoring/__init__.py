"""Scoring: artifact checks, the error and auxiliary metrics, and the staged gates."""
