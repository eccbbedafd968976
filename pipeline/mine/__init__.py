"""The mining stages after the source: extract, enrich, assemble and run, with the
`pipeline.toml` targets that drive them."""
