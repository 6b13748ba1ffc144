"""Keeping an array: persistence (mdadm.conf, initramfs), boot checks, health, repair and scrubs."""
