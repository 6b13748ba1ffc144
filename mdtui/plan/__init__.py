"""Pure planning: a request becomes a validated plan (argv, predicted size and speed, warnings)."""
