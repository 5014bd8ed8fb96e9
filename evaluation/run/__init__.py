"""Sending a release's requests to a model: the one request shape, the sampling plans, the client,
the resumable cache and the run itself."""
