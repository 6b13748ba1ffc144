"""Executes plans and jobs through one logged command runner."""
