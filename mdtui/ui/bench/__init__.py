"""The benchmark screen: preset, target, plan, confirmation, live chart and results."""
