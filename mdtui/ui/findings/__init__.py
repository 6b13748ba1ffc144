"""The findings view: what `mdtui advise` says, each finding with its evidence, why, what to do and its experiment."""
