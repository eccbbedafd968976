"""`vmine verify`: each site's validator run in the target's environment (this executes the
target's code), and what it did written beside the dataset."""
