"""The dataset on disk: its models, the manifest, where files live, the writer and the reader."""
