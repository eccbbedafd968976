"""`vmine diff`: typed changes between two error sets (`changes`), the sides they come from
(`sides`), their renderers (`report`) and the command (`command`)."""
