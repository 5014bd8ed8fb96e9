"""Dataset builders: one package per dataset, each a Builder class with its Config and the data
files the project wrote for it. `ctxrobust.registry` names them."""
