"""The `mdtui` command line: one module per verb on the same core as the app, and what they share."""
