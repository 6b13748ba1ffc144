"""The create screen: the form, the live plan, the typed confirmation and the resync view."""
