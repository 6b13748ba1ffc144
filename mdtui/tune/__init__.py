"""md and block-queue knobs: read, explain, change with a crash-safe restore journal, persist as a udev rule."""
