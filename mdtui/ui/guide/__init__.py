"""The guided flow: purpose, disks, findings, create, resync, weakest link, one experiment, summary."""
