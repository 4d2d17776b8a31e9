"""The HTML report as a browser lays it out (Debian's headless chromium): the figures side by side
and all loaded, no horizontal overflow at a laptop's width, the systems side by side in the tables,
an empty group shown as "-".  The page's own layout is measured by a script added to a copy of it;
a screenshot is written next to it for a human to look at."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from casekit.report.render import html_page
from tests.report.test_report import two_systems

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/install-test-tools)")

PROBE = """
<script>
window.addEventListener("load", () => {
  const figs = [...document.querySelectorAll("#figures figure")].map(f => f.getBoundingClientRect());
  const imgs = [...document.querySelectorAll("#figures img")].map(i => i.naturalWidth);
  const heads = [...document.querySelectorAll("table")].map(t => [...t.rows[0].cells].map(c => c.textContent));
  const out = {viewport: window.innerWidth, scroll_width: document.documentElement.scrollWidth,
               figures: figs.map(r => ({left: r.left, top: r.top, width: r.width})), images: imgs,
               headers: heads, empty_cells: document.querySelectorAll("td.none").length};
  const pre = document.createElement("pre"); pre.id = "layout"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def _chromium(*args: str) -> str:
    r = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1280,900", "--virtual-time-budget=10000", *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_the_report_lays_out_in_a_browser(tmp_path: Path) -> None:
    page = html_page(two_systems(), tmp_path / "html", ["a/verdicts.jsonl", "b/verdicts.jsonl"])
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = _chromium("--dump-dom", probe.as_uri())
    layout = json.loads(dom.split('<pre id="layout">', 1)[1].split("</pre>", 1)[0].replace("&quot;", '"'))

    assert layout["scroll_width"] <= layout["viewport"], layout  # nothing overflows the window
    figs = layout["figures"]
    assert len(figs) == 4 and all(w > 0 for w in layout["images"]), layout  # every figure loaded
    rows = {round(f["top"]) for f in figs}
    assert len(rows) == 2, figs  # two rows of two: side by side
    assert all(f["width"] < 0.55 * layout["viewport"] for f in figs), figs
    family = next(h for h in layout["headers"] if h[0] == "family")
    assert family[1:] == ["agent_a", "agent_b"]  # systems are columns of one table
    assert layout["empty_cells"] > 0  # agent_b's stokes cell is "-", not 0 %

    shot = tmp_path / "report.png"
    _chromium(f"--screenshot={shot}", page.as_uri())
    assert shot.stat().st_size > 10_000
