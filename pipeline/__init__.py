"""vmine's pipeline: source -> extract -> enrich -> assemble -> write; diff, render, explain."""

__version__ = "0.1.0"
