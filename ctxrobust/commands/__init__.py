"""The command-line commands, one module each: `HELP` (its line in `ctxrobust --help`), `add_arguments(parser)`
and `run(args) -> int`; `ctxrobust.cli.COMMANDS` names them. What several commands share is in `common`."""
