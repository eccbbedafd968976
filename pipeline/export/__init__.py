"""`vmine export`: datasets as the files their consumers load (a Hugging Face dataset)."""
