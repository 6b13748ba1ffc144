"""Reads the system: sysfs, procfs and udev from a configurable root; parsers for kernel files."""
