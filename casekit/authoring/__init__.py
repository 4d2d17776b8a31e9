"""Authoring: manufactured-solution catalogue, design matrix sampling, case construction."""
