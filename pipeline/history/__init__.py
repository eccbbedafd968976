"""`vmine history`: the timeline of every error across a series of releases."""
