"""Dialogs several screens open: typed confirmation and a scrollable detail view."""
