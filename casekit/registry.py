"""Named registries: the extension points of casekit (families, domains, tracks, ...).

Adding a family, a domain template or a track registers it in one place.  Asking for a name
that is not registered is an error that lists the valid names, as meshio does for formats.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from casekit.errors import CasekitError, UnknownName

T = TypeVar("T")
_LOADING = threading.RLock()


class Registry(Generic[T]):
    def __init__(self, kind: str, plugins: str | None = None, entry_points: str | None = None,
                 loader: Callable[[], object] | None = None) -> None:
        """``plugins`` names a package whose modules and subpackages register themselves on import;
        ``entry_points`` an entry-point group through which installed packages register theirs
        (each entry point is a module to import); ``loader`` anything else to run first."""
        self.kind = kind
        self._items: dict[str, T] = {}
        self._plugins = plugins
        self._entry_points = entry_points
        self._loader = loader
        self._loaded = plugins is None and entry_points is None and loader is None
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

            if self._loader is not None:
                self._loader()
            if self._plugins is not None:
                package = importlib.import_module(self._plugins)
                for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
                    if not info.name.startswith("_"):
                        importlib.import_module(f"{self._plugins}.{info.name}")
            if self._entry_points is not None:
                from importlib.metadata import entry_points

                for ep in sorted(entry_points(group=self._entry_points), key=lambda e: e.name):
                    try:
                        importlib.import_module(ep.value.split(":")[0])
                    except Exception as exc:  # a broken plugin is named, never silently skipped
                        raise CasekitError(f"the {self.kind} plugin {ep.name!r} ({ep.value}) cannot be loaded: "
                                           f"{type(exc).__name__}: {exc}") from exc
            self._loaded = True

    def get(self, name: str) -> T:
        self._load()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownName(
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
