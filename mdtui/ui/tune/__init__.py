"""The Tune screen: an array's knobs, a thin shell over mdtui.tune."""
