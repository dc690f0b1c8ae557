"""``textgyms/Code-v0``: a multi-turn coding environment over a fast, safe local sandbox."""
