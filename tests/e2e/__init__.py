"""The real `checkpoint` processes end to end: the CLI, several at once, killed, against the fake API."""
