"""ctxrobust: build, validate, publish and score context-robustness datasets.

`ctxrobust.load_release(path)` and `ctxrobust.score(release, predictions, **options)` are the Python API
(`ctxrobust.api`); they load on first use, so `import ctxrobust` stays light."""

__version__ = "0.1.0"
_API = ("load_release", "score", "Report")


def __getattr__(name: str):
    if name in _API:
        from ctxrobust import api

        return getattr(api, name)
    raise AttributeError(f"module 'ctxrobust' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_API])
