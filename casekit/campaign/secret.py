"""A campaign's secret and the keys derived from it.

The secret file is read once (:func:`casekit.ids.read_salt`, which also masks it in every
sandboxed run) and never copied, logged or written: what leaves this module are keys derived with
HMAC under fixed labels, one per use, so a published public id (keyed by :attr:`Keys.ids`) says
nothing about the draws' seeds (keyed by :attr:`Keys.draws`), and neither gives the secret back.
A draw's seed is ``HMAC(draws, "sibling|<anchor>/<draw>|<attempt>")``
(:func:`casekit.authoring.sibling.sibling_seed`): only the secret's holder can redo a campaign.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from pathlib import Path

from casekit.errors import UsageError

#: the labels of the derived keys (changing one changes every campaign drawn since)
DRAWS_LABEL = b"casekit-campaign-draws"
IDS_LABEL = b"casekit-campaign-public-ids"
ORDER_LABEL = b"casekit-campaign-order"


@dataclass(frozen=True, repr=False)
class Keys:
    """The keys of one campaign (``repr`` shows none of them)."""

    draws: bytes  #: seeds the sibling draws
    ids: bytes  #: keys the public ids agents see
    order: bytes  #: orders strata and anchors (which anchors a small campaign takes)

    def __repr__(self) -> str:
        return "Keys(<secret>)"

    def rank(self, *parts: object) -> str:
        """A keyed sort key: orders items so that only the secret's holder can predict the order."""
        return hmac.new(self.order, "|".join(map(str, parts)).encode(), hashlib.sha256).hexdigest()


def derive(secret: bytes) -> Keys:
    def key(label: bytes) -> bytes:
        return hmac.new(secret, label, hashlib.sha256).digest()

    return Keys(key(DRAWS_LABEL), key(IDS_LABEL), key(ORDER_LABEL))


def read_keys(path: Path) -> Keys:
    """The keys of the secret in ``path`` (at least 16 bytes; refused with the reason otherwise)."""
    from casekit.ids import read_salt

    if not Path(path).is_file():
        raise UsageError(f"--secret-file {path} is not a file",
                         valid="a file of random bytes kept out of the repository: "
                               "`head -c 32 /dev/urandom | base64 > ~/campaign.secret`")
    secret = read_salt(Path(path))
    assert secret is not None
    return derive(secret)
