"""Named registries: the extension points of casekit (families, domains, tracks, ...).

Adding a family, a domain template or a track registers it in one place.  Asking for a name
that is not registered is an error that lists the valid names, as meshio does for formats.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar

from casekit.errors import CasekitError

T = TypeVar("T")
_LOADING = threading.RLock()


class Registry(Generic[T]):
    def __init__(self, kind: str, plugins: str | None = None) -> None:
        """``plugins`` names a package whose modules register themselves on import."""
        self.kind = kind
        self._items: dict[str, T] = {}
        self._plugins = plugins
        self._loaded = plugins is None
        self._loading = False

    def register(self, name: str, item: T) -> T:
        if name in self._items:
            raise CasekitError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item
        return item

    def _load(self) -> None:
        if self._loaded:
            return
        with _LOADING:  # other threads wait until the plugins are all registered
            if self._loaded or self._loading:
                return
            self._loading = True
            import pkgutil

            package = importlib.import_module(self._plugins)  # type: ignore[arg-type]
            for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
                if not info.name.startswith("_"):
                    importlib.import_module(f"{self._plugins}.{info.name}")
            self._loaded = True

    def get(self, name: str) -> T:
        self._load()
        try:
            return self._items[name]
        except KeyError:
            raise CasekitError(
                f"unknown {self.kind} {name!r}", valid=", ".join(self.names()) or "(none registered)"
            ) from None

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._items

    def names(self) -> list[str]:
        self._load()
        return sorted(self._items)

    def items(self) -> Iterator[tuple[str, T]]:
        self._load()
        for name in sorted(self._items):
            yield name, self._items[name]

    def __len__(self) -> int:
        self._load()
        return len(self._items)
