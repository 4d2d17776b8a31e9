"""Packaging built cases into a verifiable dataset, verifying it, and cutting releases."""
