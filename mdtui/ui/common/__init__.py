"""What several screens share: palette and text helpers, messages, the member picker."""
