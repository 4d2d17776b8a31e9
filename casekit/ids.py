"""Case ids: the maintainer's descriptive id and the opaque public id agents see.

A descriptive id (``poisson_l_shape_variable_smooth_mixed_s3``) spells family, domain, design
levels and seed; with casekit's deterministic generator that is enough to regenerate a case's
hidden solution, so it never reaches an agent.  Agents, prompts, agent-side dataset rows and
submission directories use the public id ``case-<16 hex>``: a keyed hash of the descriptive id.

Authoring takes a secret salt (``--salt-file`` or ``CASEKIT_SALT_FILE``): it keys both the
public id and the generator's random stream, so a private split can be regenerated neither
from casekit's public code and a descriptive id nor from a public id.  Without a salt, cases are
public by construction (the committed sample: its sources, solutions included, are in git).
The salt files casekit knows of (:func:`secret_files`) are masked in every sandboxed run.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from casekit.errors import UsageError

PUBLIC_ID = re.compile(r"case-[0-9a-f]{16}")
SALT_ENV = "CASEKIT_SALT_FILE"
MIN_SALT_BYTES = 16
#: the salt files this process has read
_READ: set[Path] = set()


def public_id(descriptive: str, salt: bytes | None = None) -> str:
    key = salt if salt else b"casekit-public-id"
    return "case-" + hmac.new(key, descriptive.encode(), hashlib.sha256).hexdigest()[:16]


def resolve(name: str, cases: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The descriptive id of the case that ``name`` names among ``cases`` (descriptive id -> its
    record or source), or None: ``name`` is a descriptive id or a public id -- the one the case
    declares (``public_id``), else the unsalted one.  Every command that takes a case resolves it
    here, so a name that works for one (``evaluate``'s submission directories) works for all."""
    if name in cases:
        return name
    if PUBLIC_ID.fullmatch(name):
        for cid, case in cases.items():
            if (case.get("public_id") or public_id(cid)) == name:
                return cid
    return None


def no_such_case(name: str, known: Iterable[str], where: str) -> UsageError:
    """The error for a case name that resolves to nothing in ``where``, with the closest ids."""
    from casekit.suggest import close_matches

    close = close_matches(name, sorted(set(known)))
    return UsageError(f"no case {name!r} in {where}" + (f"; did you mean {' or '.join(close)}?" if close else ""),
                      valid="a descriptive case id or its public id (case-<16 hex>)")


def read_salt(path: Path | None = None) -> bytes | None:
    """The authoring salt from ``path`` or ``$CASEKIT_SALT_FILE`` (None when neither is set)."""
    if path is None and os.environ.get(SALT_ENV):
        path = Path(os.environ[SALT_ENV])
    if path is None:
        return None
    try:
        data = Path(path).read_bytes().strip()
    except OSError as exc:
        raise UsageError(f"cannot read the salt file {path}: {exc.strerror}",
                         valid="a file of at least 16 random bytes, e.g. `head -c 32 /dev/urandom | base64 > salt`") \
            from None
    _READ.add(Path(os.path.realpath(path)))
    if len(data) < MIN_SALT_BYTES:
        raise UsageError(f"the salt file {path} holds {len(data)} bytes; a secret salt needs at least "
                         f"{MIN_SALT_BYTES}", valid="`head -c 32 /dev/urandom | base64 > salt`")
    return data


def secret_files() -> set[Path]:
    """The secrets casekit knows of: the salt file named by ``$CASEKIT_SALT_FILE`` and every salt
    file read in this process (resolved).  No sandboxed run may see them (the local runner masks
    them wherever a run would, ``casekit.runner.kinds.local.masks``)."""
    named = os.environ.get(SALT_ENV)
    return {*_READ, *([Path(os.path.realpath(named))] if named else [])}


def salted_seed(salt: bytes | None, *parts: object) -> int:
    """The generator's seed for a design point: the seed itself without a salt (public,
    reproducible), else a keyed hash of the point, which only the salt's holder can redo."""
    if not salt:
        seed = parts[-1]
        assert isinstance(seed, int)
        return seed
    text = "|".join(str(p) for p in parts).encode()
    return int.from_bytes(hmac.new(salt, text, hashlib.sha256).digest()[:16], "big")
