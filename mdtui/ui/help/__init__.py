"""The help screen: every key of every screen."""
