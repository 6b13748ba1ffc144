"""The inventory screen: disks and arrays with their links and in-use reasons; the app's home."""
