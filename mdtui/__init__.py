"""mdtui: a terminal workbench for Linux md software RAID."""

__version__ = "0.1.0"
