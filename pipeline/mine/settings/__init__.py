"""The settings stage: each site's settings, joined from the per-file facts of its tree.

`join.py` is the stage itself, pure: it resolves the sites over the facts loaded so far and
hands back, round after round, the files it asked for and did not have, until it asks for
nothing new. Resolving is split by job: `loaded.py` (the facts of one round, and what it
asked for), `modules.py` (the dotted module name of each file), `names.py` (what a name
means in a file, through imports, and what a class has), `flags.py` (the flags that set each
field), `chains.py` (a site's reads walked to settings, one resolver per kind of root).
`tree_facts.py` is the I/O edge: outlines and facts by blob, from the store, the site pass
or the worker pool, which answers the join's requests.
"""
