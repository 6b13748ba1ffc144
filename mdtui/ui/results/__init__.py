"""The results history and compare screens, their tables, dialogs and render helpers."""
